"""The Rethinking the metrics study (chapter 06): creativity index, perplexity, syntactic templates and rubric
judges against people (Lu et al.)."""
from creval.datasets import aut, confederacy, lamp, macgyver, msrp, ttcw
from creval.measures.rubric import RubricRecord
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.rethinking import estimate, grading, run, values
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.records import (
    DataSourceRecord,
    ExampleRecord,
    FormattingRecord,
    JudgeRecord,
    LampJudgeRecord,
    LlmJudgeRecord,
    MeasuresRecord,
    PerplexityRecord,
    SetRecord,
    TemplateRecord,
    TwistRecord,
)

STUDY = Study("rethinking", "chapters/06-rethinking-metrics.ipynb", RethinkingConfig, run.run,
              tables={"data_sources": DataSourceRecord, "sets": SetRecord, "ttcw_llm_judges": LlmJudgeRecord,
                      **{f"measures_{s}": MeasuresRecord for s in run.SETS},
                      "formatting": FormattingRecord, "perplexity": PerplexityRecord, "templates": TemplateRecord,
                      "judge": JudgeRecord, "lamp_judge": LampJudgeRecord, "twist": TwistRecord,
                      "rerun": RubricRecord, "example": ExampleRecord},
              datasets=(ttcw.DATASET, aut.DATASET, macgyver.DATASET, msrp.DATASET, lamp.DATASET,
                        confederacy.DATASET), estimate=estimate.estimate,
              card=grading.rethinking_rows,
              values=values.values,
              phases=(ModelPhase("perplexity", "model", ("loglikelihood",)),
                      ModelPhase("rubric judge", "judge", ("chat", "choice")),
                      ModelPhase("twist test", "judge", ("choice",))),
              summary="creativity index, perplexity, syntactic templates and rubric judges against people (Lu et al.)")
