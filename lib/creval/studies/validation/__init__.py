"""Validating semantic entropy (chapter 04): against diversity measures, a pairwise novelty judge and human
ratings."""
from creval.datasets import aut, macgyver
from creval.studies.contract import Study
from creval.studies.validation import estimate, run
from creval.studies.validation.config import ValidationConfig
from creval.studies.validation.records import DataSourceRecord, NoveltyRecord

STUDY = Study("validation", "chapters/04-validating-entropy.ipynb", ValidationConfig, run.run, reads=("divergent",),
              tables={"data_sources": DataSourceRecord, "solution_novelty": NoveltyRecord,
                      **{t: dict for t in ("step_diversity", "sample_size", "aut_items", "cambridge", "macgyver_items",
                                           "human_full", "human_reference")}},
              datasets=(aut.DATASET, macgyver.DATASET), estimate=estimate.estimate,
              summary="semantic entropy against diversity, a pairwise novelty judge and human ratings")
