"""Validating semantic entropy (chapter 04): against diversity measures, a pairwise novelty judge and human
ratings."""
from creval.datasets import aut, macgyver
from creval.studies.contract import Study
from creval.studies.validation import estimate, run
from creval.studies.validation.config import ValidationConfig

STUDY = Study("validation", "chapters/04-validating-entropy.ipynb", ValidationConfig, run.run, reads=("divergent",),
              tables={t: dict for t in ("data_sources", "step_diversity", "solution_novelty", "sample_size",
                                        "aut_items", "cambridge", "macgyver_items", "human_full", "human_reference")},
              datasets=(aut.DATASET, macgyver.DATASET), estimate=estimate.estimate,
              summary="semantic entropy against diversity, a pairwise novelty judge and human ratings")
