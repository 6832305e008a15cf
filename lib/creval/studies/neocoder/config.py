"""Parameters of chapter 05, code creativity: denial prompting and NeoGauge (Lu et al. 2025, NeoCoder)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class NeoCoderConfig(Config):
    """Chapter 05."""
