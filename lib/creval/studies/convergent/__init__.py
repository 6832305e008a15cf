"""Convergent creativity (chapter 03): the retrieval-based multi-agent judge and its baselines, on chapter 02's
solutions and on human labels."""
from creval.datasets import macgyver
from creval.studies.contract import Study
from creval.studies.convergent import estimate, run
from creval.studies.convergent.config import ConvergentConfig

STUDY = Study("convergent", "chapters/03-convergent.ipynb", ConvergentConfig, run.run, reads=("divergent",),
              tables={"labels_source": dict, "human_pairs": dict, "human_verdicts": dict, "transcripts": dict,
                      "bench_verdicts": dict, "sweep": dict, "sweep_calls": dict},
              datasets=(macgyver.DATASET,), estimate=estimate.estimate,
              summary="the retrieval-based multi-agent judge and its baselines, on model solutions and human labels")
