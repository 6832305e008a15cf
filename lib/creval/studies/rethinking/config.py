"""Parameters of chapter 06, rethinking the metrics (Lu et al. 2025, Rethinking creativity evaluation)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class RethinkingConfig(Config):
    """Chapter 06."""
