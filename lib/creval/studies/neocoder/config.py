"""Parameters of chapter 05, code creativity: denial prompting and NeoGauge (Lu et al. 2025, NeoCoder)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.datasets import neocoder as neocoder_data
from creval.datasets.base import resolve
from creval.measures.neocoder.judges import JUDGE_VERSION
from creval.studies.config import BootstrapConfig, JudgeConfig, identity

# shared keys that do not change this study's records: no dataset is shuffled, and the judge model is asked
# only by the llm/hybrid detector (then it enters the identity through resolved())
NOT_IDENTITY = ("data_seed", "judge_model")


@dataclass(frozen=True)
class NeoCoderConfig(JudgeConfig, BootstrapConfig):
    """Chapter 05: every model under test (``model``, ``models``) writes the code of the live denial run;
    ``judge_model`` is the LLM technique detector (``neocoder_detector`` llm or hybrid)."""
    study: ClassVar[str] = "neocoder"
    records_version: ClassVar[int] = 4     # 4: a solution cut to comments only is not parsable (C++ read as Python)
    # 3: a verdict's max_rss_kb is the program's peak, no longer the host's
    neocoder_problems: int = identity(0)   # problems replayed from the stored GPT-4 rounds, 0 for all (paper: 199)
    neocoder_comparator: str = identity("lines")   # strict judge output comparison: lines | tokens
    neocoder_salvage: bool = identity(True)   # strict judge: run the parsable prefix of a reply cut by the token limit
    neocoder_pack: str = "problem"         # programs per sandbox launch: problem | program | none
    neocoder_workers: int = 0              # parallel sandbox launches, 0 for the CPU count
    neocoder_live_problems: int = identity(1)   # problems of the live run: the shortest verifiable statements
    neocoder_live_mode: str = identity("thread")   # live run: thread (Algorithm 1) | fresh (stored statements, Eq. 1)
    neocoder_rounds: int = identity(2)   # denial rounds after the first solution (paper: 5)
    neocoder_max_tokens: int = identity(192)   # token limit of one generated solution (paper: 256 for GPT-4)
    neocoder_temperature: float = identity(0.7)   # sampling temperature of the live run (paper code: 0.7 for open models)
    neocoder_detector: str = identity("static")   # technique detector: static | llm | hybrid
    neocoder_example: str = ""             # the problem shown round by round; empty for the first replayed one

    @classmethod
    def identity_keys(cls) -> tuple[str, ...]:
        return tuple(k for k in super().identity_keys() if k not in NOT_IDENTITY)

    def resolved(self) -> dict:
        """Whether the problems are the real release or our sample, the judges' version, and the judge model
        when a detector asks it."""
        out = {"data": "sample" if resolve(neocoder_data.DATASET).is_sample else "real", "judges": JUDGE_VERSION}
        if self.neocoder_detector != "static":
            out["judge_model"] = self.judge_model
        return out
