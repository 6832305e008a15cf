"""Parameters of chapter 06, rethinking the metrics (Lu et al. 2025, Rethinking creativity evaluation)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class RethinkingConfig(Config):
    """Chapter 06."""
    judge_model: str = "smollm2-135m"        # the LLM that judges
    n_boot: int = 1000                        # bootstrap resamples for confidence intervals
    rethink_ps_per_class: int = 100                   # MacGyver unconventional and conventional solutions each (paper: 573 and 573)
    rethink_human_llm_problems: int = 100             # MacGyver benchmark problems with a crowd and a GPT-4 solution
    rethink_ci_l_min: int = 5                         # shortest n-gram of the creativity index (paper: 5)
    rethink_ci_l_max: int = 7                         # longest n-gram of the creativity index (paper: 7)
    rethink_ci_agg: str = "mean"                      # mean or sum over the L range (paper: mean; Salieri code: sum)
    rethink_ci_sweep_max: int = 11                    # Fig. 3 sweep: L ranges from ci_l_min..ci_l_max to ci_l_min..this (paper: 11)
    rethink_template_n: int = 5                       # POS n-gram length of a template (diversity library: 5)
    rethink_template_top: int = 100                   # most frequent POS n-grams kept as templates (paper: 100)
    rethink_template_n_sweep: tuple[int, ...] = (4, 5, 6, 7, 8)   # Fig. 4 sweep of template lengths (paper: 4 to 8)
    rethink_ttcw_stories: int = 36                    # TTCW LLM-written stories scored (all 36 have text)
    rethink_aut_ratings: int = 100                    # Ocsai-1 main2_test AUT responses with human originality ratings
    rethink_aut_l_max: int = 3                        # creativity index of short texts (AUT responses, MSRP sentences) uses L from 2 to this
    rethink_paraphrase_pairs: int = 50               # MSRP paraphrase and non-paraphrase pairs each
    rethink_judge_items: int = 6                     # MacGyver solutions per class scored by the rubric judge
    rethink_ttcw_judge_stories: int = 6               # TTCW stories scored by the creative-writing rubric judge
    rethink_judge_tokens: int = 96                   # token budget of the judge's analysis turn
    rethink_twist_items: int = 12                     # solutions asked both conventional and unconventional
    rethink_rerun_items: int = 3                      # solutions whose judge analysis is sampled several times
    rethink_reruns: int = 3                           # sampled analyses per solution in the rerun test (paper: 3)
    rethink_ppl_items: int = 20                       # texts per group scored by perplexity (CI and templates: all)
    rethink_ppl_max_words: int = 150                  # words of a long text scored by perplexity (TTCW stories are cut)
