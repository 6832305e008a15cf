"""Parameters of chapter 01, "The apparatus"."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class ApparatusConfig(Config):
    apparatus_samples: int = 10            # next steps sampled for one MacGyver problem
    apparatus_max_tokens: int = 40         # token budget of one sampled step
    temperature: float = 1.0               # sampling temperature (paper: 1.0)
    top_p: float = 0.9                     # nucleus sampling (paper: 0.9)
