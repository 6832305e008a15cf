"""Convergent creativity (chapter 03): the retrieval-based multi-agent judge and its baselines, on chapter 02's
solutions and on human labels."""
from creval.datasets import macgyver
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.convergent import estimate, grading, run, values
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.convergent.records import (
    BenchVerdictRecord,
    HumanPairRecord,
    HumanVerdictRecord,
    LabelsSourceRecord,
    SweepCallRecord,
    SweepRecord,
    TranscriptRecord,
)

STUDY = Study("convergent", "chapters/03-convergent.ipynb", ConvergentConfig, run.run, reads=("divergent",),
              tables={"labels_source": LabelsSourceRecord, "human_pairs": HumanPairRecord,
                      "human_verdicts": HumanVerdictRecord, "transcripts": TranscriptRecord,
                      "bench_verdicts": BenchVerdictRecord, "sweep": SweepRecord, "sweep_calls": SweepCallRecord},
              datasets=(macgyver.DATASET,), estimate=estimate.estimate, card=grading.convergent_rows,
              values=values.values,
              phases=(ModelPhase("solutions", "model", ("chat",)), ModelPhase("verdicts", "judge", ("chat", "choice"))),
              summary="the retrieval-based multi-agent judge and its baselines, on model solutions and human labels")
