"""Parameters of chapter 06, rethinking the metrics (Lu et al. 2025, Rethinking creativity evaluation)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.rethinking.data import data_kinds


@dataclass(frozen=True)
class RethinkingConfig(JudgeConfig, BootstrapConfig):
    """Chapter 06: every model under test (``model``, then ``models``) scores the texts by perplexity (the
    tables show ``model``'s); ``judge_model`` is the rubric judge. Every field but ``run_root`` and ``n_boot``
    changes the records (:mod:`creval.studies.rethinking.run`)."""
    study: ClassVar[str] = "rethinking"
    prefix: ClassVar[str] = "rethink_"
    records_version: ClassVar[int] = 6     # 6: perplexity of the LAMP and Confederacy texts, the pairwise novelty judge on LAMP (lamp_judge); 5: the LAMP and Confederacy sets (measures_lamp, measures_confed; issue 54); 4: perplexity scored after the document start, first token kept; 3: the formatting control's table
    rethink_ps_per_class: int = identity(0)   # MacGyver unconventional and conventional solutions each, 0 for all (573 and 230; paper: 573 and 573)
    rethink_human_llm_problems: int = identity(0)   # MacGyver problems with a crowd and a GPT-4 solution, 0 for all (310)
    rethink_ci_l_min: int = identity(5)   # shortest n-gram of the creativity index (paper: 5)
    rethink_ci_l_max: int = identity(7)   # longest n-gram of the creativity index (paper: 7)
    rethink_ci_agg: str = identity("mean")   # mean or sum over the L range (paper: mean; Salieri code: sum)
    rethink_ci_sweep_max: int = identity(11)   # Fig. 3 sweep: L ranges from ci_l_min..ci_l_max to ci_l_min..this (paper: 11)
    rethink_template_n: int = identity(5)   # POS n-gram length of a template (diversity library: 5)
    rethink_template_top: int = identity(100)   # most frequent POS n-grams kept as templates (paper: 100)
    rethink_template_n_sweep: tuple[int, ...] = identity((4, 5, 6, 7, 8))   # Fig. 4 sweep of template lengths (paper: 4 to 8)
    rethink_ttcw_stories: int = identity(36)   # TTCW LLM-written stories scored (all 36 have text)
    rethink_aut_ratings: int = identity(0)   # Ocsai-1 main2_test AUT responses of its two most frequent objects, 0 for all (1,201)
    rethink_aut_l_max: int = identity(3)   # creativity index of short texts (AUT responses, MSRP sentences) uses L from 2 to this
    rethink_paraphrase_pairs: int = identity(50)   # MSRP paraphrase and non-paraphrase pairs each
    rethink_judge_items: int = identity(6)   # MacGyver solutions per class scored by the rubric judge
    rethink_ttcw_judge_stories: int = identity(6)   # TTCW stories scored by the creative-writing rubric judge
    rethink_judge_tokens: int = identity(96)   # token budget of the judge's analysis turn
    rethink_twist_items: int = identity(12)   # solutions asked both conventional and unconventional
    rethink_rerun_items: int = identity(3)   # solutions whose judge analysis is sampled several times
    rethink_reruns: int = identity(3)   # sampled analyses per solution in the rerun test (paper: 3)
    rethink_ppl_items: int = identity(20)   # texts per group scored by perplexity (CI and templates: all)
    rethink_ppl_max_words: int = identity(150)   # words of a long text scored by perplexity (TTCW stories are cut)
    rethink_lamp_model_instructions: int = identity(15)   # LAMP instructions (seeded, every version of each kept) scored by perplexity and the pairwise novelty judge, 0 for all (200); 15 give the 30 pair sides a verdict needs
    rethink_confed_ppl_per_author: int = identity(3)   # Confederacy stories per author scored by perplexity (the first ones), 0 for all five; 3 give 39 stories, above the 30 a verdict needs

    def resolved(self) -> dict:
        """Whether each dataset read here is the real one, our bundled sample, or missing: the records differ."""
        return {"data": data_kinds()}
