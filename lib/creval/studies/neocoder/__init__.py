"""The Code creativity (NeoCoder) study (chapter 05): denial prompting and NeoGauge on Codeforces."""
from creval.datasets import neocoder
from creval.models.capabilities import ModelPhase
from creval.studies.contract import Study
from creval.studies.neocoder import estimate, run, values
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.records import (
    CodeRecord,
    DataSourceRecord,
    HumanDetectionRecord,
    PositiveRecord,
    ProblemRecord,
    RoundRecord,
)

STUDY = Study("neocoder", "chapters/05-neocoder.ipynb", NeoCoderConfig, run.run,
              tables={"data_source": DataSourceRecord, "problems": ProblemRecord, "codes": CodeRecord,
                      "known_positives": PositiveRecord, "human_detections": HumanDetectionRecord,
                      "rounds": RoundRecord},
              datasets=(neocoder.DATASET,), estimate=estimate.estimate,
              values=values.values,
              phases=(ModelPhase("programs", "model", ("chat",)),
                      ModelPhase("technique detection", "judge", ("chat",))),
              summary="denial prompting and NeoGauge on Codeforces, every program in the sandbox (Lu et al.)")
