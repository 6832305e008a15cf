"""The report card (chapter 08): which creativity measures and judges hold up against people."""
from creval.studies.contract import Study
from creval.studies.reportcard import estimate, run
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.reportcard.records import CardRecord, SourceRecord

STUDY = Study("reportcard", "chapters/08-report-card.ipynb", ReportCardConfig, run.run,
              reads=("convergent", "validation", "rethinking", "aut", "humansets", "judges"),
              tables={"sources": SourceRecord, "card": CardRecord}, estimate=estimate.estimate,
              summary="which measures to trust: every check against people beside its trivial baseline")
