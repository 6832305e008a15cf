"""Whose judgment (chapter 07b, issue 63): declared sets of human ratings (HANNA, the SLM synopses), every cheap
measure against the criteria nearest to creativity, the raters named and their own agreement as the ceiling."""
from creval.datasets import hanna, slm
from creval.studies.contract import Study
from creval.studies.humansets import estimate, grading, run
from creval.studies.humansets.config import HumansetsConfig
from creval.studies.humansets.records import CeilingRecord, SetRecord, TextRecord

STUDY = Study("humansets", "chapters/07b-humansets.ipynb", HumansetsConfig, run.run,
              tables={"sets": SetRecord, "texts": TextRecord, "ceilings": CeilingRecord},
              datasets=(hanna.DATASET, slm.DATASET), estimate=estimate.estimate, card=grading.card_rows,
              summary="whose judgment: HANNA and SLM ratings, every cheap measure against them, the raters' ceiling")
