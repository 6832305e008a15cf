"""Parameters of chapter 05, code creativity: denial prompting and NeoGauge (Lu et al. 2025, NeoCoder)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class NeoCoderConfig(Config):
    """Chapter 05."""
    neocoder_problems: int = 0             # problems replayed from the stored GPT-4 rounds, 0 for all (paper: 199)
    neocoder_comparator: str = "lines"     # strict judge output comparison: lines | tokens
    neocoder_salvage: bool = True          # strict judge: run the parsable prefix of a reply cut by the token limit
    neocoder_pack: str = "problem"         # programs per sandbox launch: problem | program | none
    neocoder_workers: int = 0              # parallel sandbox launches, 0 for the CPU count
    neocoder_model: str = "smollm2-135m"   # the code model of the live denial-prompting run
    neocoder_live_problems: int = 1        # problems of the live run: the shortest verifiable statements
    neocoder_rounds: int = 2               # denial rounds after the first solution (paper: 5)
    neocoder_max_tokens: int = 192         # token limit of one generated solution (paper: 256 for GPT-4)
    neocoder_temperature: float = 0.7      # sampling temperature of the live run (paper code: 0.7 for open models)
    neocoder_detector: str = "static"      # technique detector: static | llm | hybrid
    neocoder_example: str = ""             # the problem shown round by round; empty for the first replayed one
    n_boot: int = 1000                     # bootstrap resamples for confidence intervals
