"""Parameters of chapter 05, code creativity: denial prompting and NeoGauge (Lu et al. 2025, NeoCoder)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.config import BootstrapConfig, JudgeConfig, identity


@dataclass(frozen=True)
class NeoCoderConfig(JudgeConfig, BootstrapConfig):
    """Chapter 05: ``model`` writes the code of the live denial run; ``judge_model`` is the LLM technique detector."""
    study: ClassVar[str] = "neocoder"
    neocoder_problems: int = identity(0)   # problems replayed from the stored GPT-4 rounds, 0 for all (paper: 199)
    neocoder_comparator: str = identity("lines")   # strict judge output comparison: lines | tokens
    neocoder_salvage: bool = identity(True)   # strict judge: run the parsable prefix of a reply cut by the token limit
    neocoder_pack: str = "problem"         # programs per sandbox launch: problem | program | none
    neocoder_workers: int = 0              # parallel sandbox launches, 0 for the CPU count
    neocoder_live_problems: int = identity(1)   # problems of the live run: the shortest verifiable statements
    neocoder_rounds: int = identity(2)   # denial rounds after the first solution (paper: 5)
    neocoder_max_tokens: int = identity(192)   # token limit of one generated solution (paper: 256 for GPT-4)
    neocoder_temperature: float = identity(0.7)   # sampling temperature of the live run (paper code: 0.7 for open models)
    neocoder_detector: str = identity("static")   # technique detector: static | llm | hybrid
    neocoder_example: str = ""             # the problem shown round by round; empty for the first replayed one
