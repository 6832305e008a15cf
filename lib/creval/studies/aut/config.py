"""Parameters of chapter 07, LLM agreement on the Alternative Uses Test (Rabeyah et al. 2024)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class AutConfig(Config):
    """Chapter 07."""
