"""Comparing models (chapter 09): every model on every study's headline measure, paired differences,
homogeneity of their ideas, and what each cost."""
from creval.models.capabilities import ModelPhase
from creval.studies.compare import estimate, run
from creval.studies.compare.config import CompareConfig
from creval.studies.compare.records import (
    CostRecord,
    EquivalenceRecord,
    Homogeneity,
    IdeaRecord,
    NoteRecord,
    OverusedRecord,
    PairwiseRecord,
    ReleasedSourceRecord,
    ReleasedValueRecord,
    SourceRecord,
    Value,
)
from creval.studies.contract import Study

STUDY = Study("compare", "chapters/09-compare.ipynb", CompareConfig, run.run,
              reads=("divergent", "convergent", "neocoder", "rethinking", "aut"),
              tables={"sources": SourceRecord, "values": Value, "costs": CostRecord, "ideas": IdeaRecord,
                      "homogeneity": Homogeneity, "notes": NoteRecord, "released": ReleasedValueRecord,
                      "overused": OverusedRecord, "released_sources": ReleasedSourceRecord,
                      "pairwise": PairwiseRecord, "equivalence": EquivalenceRecord},
              estimate=estimate.estimate,
              phases=(ModelPhase("samples", "model", ("sample",)),),
              summary="every model on every headline measure, paired differences, homogeneity of ideas, cost")
