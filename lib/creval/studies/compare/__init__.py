"""Comparing models (chapter 09): every model on every study's headline measure, paired differences,
homogeneity of their ideas, and what each cost."""
from creval.studies.compare import run
from creval.studies.compare.config import CompareConfig
from creval.studies.compare.records import Homogeneity, Value
from creval.studies.contract import Study

STUDY = Study("compare", "chapters/09-compare.ipynb", CompareConfig, run.run,
              reads=("divergent", "convergent", "neocoder", "rethinking", "aut"),
              tables={"sources": dict, "values": Value, "costs": dict, "ideas": dict, "homogeneity": Homogeneity,
                      "notes": dict, "released": dict, "overused": dict, "released_sources": dict, "pairwise": dict,
                      "equivalence": dict},
              summary="every model on every headline measure, paired differences, homogeneity of ideas, cost")
