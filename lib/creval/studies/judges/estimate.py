"""What a judges run costs before any call: the released verdicts cost nothing; the user's own judge
(``judge_model``, unless the embedded default) rates every story of ``judges_own_prompts`` HANNA prompts on two
criteria, one batch a prompt, and puts TTCW's 14 tests to the 3 model-written stories of each of
``judges_own_plots`` plots, one batch a plot, re-asking an unreadable reply up to twice on a server."""
from __future__ import annotations

from creval.studies.estimate.parts import Estimate, Phase, Range, calls

STORIES_PER_PROMPT = 11          # HANNA: a person's story and ten generators' on every prompt
PROMPT_TOKENS = 650              # a HANNA story (about 400 words) with the rating instructions
TTCW_STORIES_PER_PLOT = 3        # Claude's, GPT-3.5's and GPT-4's (the New Yorker's text is not released)
TTCW_TESTS = 14
TTCW_PROMPT_TOKENS = 2400        # a TTCW story (about 1,540 words) with what the test looks for and its question


def estimate(cfg) -> Estimate:
    notes = ["reads released LLM judges' verdicts beside the people's: no model call for them"]
    if not cfg.asks_own_judge():
        notes.append("your judge: none asked (judge_model is the embedded default, or judges_own_prompts and "
                     "judges_own_plots are 0)")
        return Estimate("judges", [], notes)
    phases = []
    k, plots = cfg.judges_own_prompts, cfg.judges_own_plots
    if k and "hanna" in cfg.judges_sets:
        asks = k * STORIES_PER_PROMPT * 2
        part = calls("judge", cfg.judge_model, "ratings of HANNA stories (Surprise, Complexity)",
                     Range(asks, 3 * asks), PROMPT_TOKENS, 24)
        notes.append(f"your judge on HANNA: {asks} ratings, up to twice as many again where a reply must be re-asked")
        phases.append(Phase("your judge, HANNA", k, Range(1, 3), (part,), breadth=2 * STORIES_PER_PROMPT))
    if plots and "ttcw" in cfg.judges_sets:
        asks = plots * TTCW_STORIES_PER_PLOT * TTCW_TESTS
        part = calls("judge", cfg.judge_model, "TTCW tests of model-written stories", Range(asks, 3 * asks),
                     TTCW_PROMPT_TOKENS, 24)
        notes.append(f"your judge on TTCW: {asks} test answers ({plots} plots x 3 stories x 14 tests), up to twice "
                     "as many again where a reply must be re-asked")
        phases.append(Phase("your judge, TTCW", plots, Range(1, 3), (part,),
                            breadth=TTCW_STORIES_PER_PLOT * TTCW_TESTS))
    return Estimate("judges", phases, notes)
