"""Judges judged against people (chapter 07c, issue 64): the LLM judges whose verdicts HANNA and TTCW release,
each read against the people who rated the same texts, with the people's own ceiling, severity and
discrimination from one response model holding people and judges, the alternative-annotator test, steadiness
across prompt wordings, and whom and what length each favours."""
from creval.datasets import hanna, ttcw
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.judges import estimate, grading, run
from creval.studies.judges.config import JudgesConfig
from creval.studies.judges.records import (
                                           BiasRecord,
                                           JudgedTextRecord,
                                           OwnRecord,
                                           PanelRecord,
                                           RaterRecord,
                                           VariantRecord,
)

STUDY = Study("judges", "chapters/07c-judges.ipynb", JudgesConfig, run.run,
              tables={"panels": PanelRecord, "raters": RaterRecord, "variants": VariantRecord, "bias": BiasRecord,
                      "texts": JudgedTextRecord, "own": OwnRecord},
              datasets=(hanna.DATASET, ttcw.DATASET), estimate=estimate.estimate, card=grading.card_rows,
              phases=(ModelPhase("your judge", "judge", ("chat",)),),   # judge_model rates HANNA, tests TTCW
              summary="released LLM judges (HANNA, TTCW) against the people: agreement, severity, steadiness, bias")
