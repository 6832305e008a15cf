"""The apparatus (chapter 01): sample next steps of one problem and record every token's log-prob."""
from creval.datasets import macgyver
from creval.models.capabilities import ModelPhase
from creval.studies.apparatus import estimate, run
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.apparatus.records import SampleRecord
from creval.studies.contract import Study

STUDY = Study("apparatus", "chapters/01-apparatus.ipynb", ApparatusConfig, run.run,
              tables={"samples": SampleRecord}, datasets=(macgyver.DATASET,), estimate=estimate.estimate,
              phases=(ModelPhase("samples", "model", ("sample",)),),
              summary="sample next steps of one problem and record every token's log-prob")
