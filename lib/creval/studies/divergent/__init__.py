"""Divergent creativity (chapter 02): semantic entropy of step-wise generation (Tan et al.), a temperature
sweep and the entailment backends."""
from creval.datasets import bookmia, hypogen, macgyver, msrp, sick
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.divergent import estimate, run, values
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.records import (
    EntailmentRecord,
    NliEvalRecord,
    ProblemRecord,
    SourcedProblem,
    SourcedStep,
)

STUDY = Study("divergent", "chapters/02-divergent.ipynb", DivergentConfig, run.run,
              tables={"steps": SourcedStep, "problems": SourcedProblem, "sweep": ProblemRecord,
                      "entailment": EntailmentRecord, "nli_eval": NliEvalRecord},
              datasets=(macgyver.DATASET, hypogen.DATASET, bookmia.DATASET, sick.DATASET, msrp.DATASET),
              estimate=estimate.estimate,
              values=values.values, ideas=values.ideas, people=values.people,
              phases=(ModelPhase("step samples", "model", ("sample",)),
                      ModelPhase("first answers", "model", ("chat",)),
                      ModelPhase("entailment by LLM (nli: llm:...)", "judge", ("choice",))),
              summary="semantic entropy of step-wise generation (Tan et al.), a temperature sweep, entailment backends")
