"""The LLM agreement on the Alternative Uses Test study (chapter 07, Rabeyah et al.)."""
from creval.datasets import aut
from creval.models.capabilities import ModelPhase
from creval.studies.aut import estimate, grading, run, values
from creval.studies.aut.config import AutConfig
from creval.studies.aut.records import HumanRecord, JudgmentRecord, RaterRecord, ScoredUseRecord, TurnRecord
from creval.studies.contract import Study

STUDY = Study("aut", "chapters/07-aut-agreement.ipynb", AutConfig, run.run,
              tables={"uses": ScoredUseRecord, "turns": TurnRecord, "judgments": JudgmentRecord, "human": HumanRecord,
                      "raters": RaterRecord, "baselines_full": HumanRecord},
              datasets=(aut.DATASET,), estimate=estimate.estimate, card=grading.aut_rows,
              values=values.values, ideas=values.ideas, people=values.people,
              phases=(ModelPhase("uses", "model", ("chat",)),
                      ModelPhase("pointwise scores", "judge", ("choice",)),
                      ModelPhase("pairwise novelty", "judge", ("choice",))),
              summary="LLM agreement on Alternative Uses Test scoring and ranking (Rabeyah et al.)")
