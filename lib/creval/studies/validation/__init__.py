"""Validating semantic entropy (chapter 04): against diversity measures, a pairwise novelty judge and human
ratings."""
from creval.datasets import aut, macgyver
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.validation import estimate, grading, run
from creval.studies.validation.config import ValidationConfig
from creval.studies.validation.records import (
    AutItemRecord,
    CambridgeRecord,
    DataSourceRecord,
    HumanFullRecord,
    HumanReferenceRecord,
    MacgyverItemRecord,
    NoveltyRecord,
    SampleSizeRecord,
    StepDiversityRecord,
)

STUDY = Study("validation", "chapters/04-validating-entropy.ipynb", ValidationConfig, run.run, reads=("divergent",),
              tables={"data_sources": DataSourceRecord, "solution_novelty": NoveltyRecord,
                      "step_diversity": StepDiversityRecord, "sample_size": SampleSizeRecord,
                      "aut_items": AutItemRecord, "cambridge": CambridgeRecord, "macgyver_items": MacgyverItemRecord,
                      "human_full": HumanFullRecord, "human_reference": HumanReferenceRecord},
              datasets=(aut.DATASET, macgyver.DATASET), estimate=estimate.estimate, card=grading.validation_rows,
              phases=(ModelPhase("samples", "model", ("sample",)),),
              summary="semantic entropy against diversity, a pairwise novelty judge and human ratings")
