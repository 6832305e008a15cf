"""A toy study: how many different word pairs a model uses across its answers to one problem."""
from creval.datasets import macgyver
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from lexical import estimate, run
from lexical.config import LexicalConfig
from lexical.records import AnswerRecord

STUDY = Study("lexical", "chapters/10-lexical.ipynb", LexicalConfig, run.run,
              tables={"answers": AnswerRecord},           # every table the run writes, with its row type
              datasets=(macgyver.DATASET,), estimate=estimate.estimate,
              phases=(ModelPhase("answers", "model", ("sample",)),),   # it samples the model under test
              book=False,                                 # the worked example stays out of the book
              summary="distinct-2 of repeated first-step answers (the worked example)")
