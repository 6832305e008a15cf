"""Parameters of chapter 01, "The apparatus"."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.studies.config import Config, identity


@dataclass(frozen=True)
class ApparatusConfig(Config):
    study: ClassVar[str] = "apparatus"
    # old key names, still accepted (see Config.renamed)
    renamed: ClassVar[Mapping[str, str]] = {"engine": "apparatus_engine", "temperature": "apparatus_temperature",
        "top_p": "apparatus_top_p"}
    apparatus_engine: str = "llamacpp"   # what serves the embedded default model in `creval book`: llamacpp | vllm | auto
    apparatus_samples: int = identity(10)   # next steps sampled for one MacGyver problem
    apparatus_max_tokens: int = identity(40)   # token budget of one sampled step
    apparatus_temperature: float = identity(1.0)   # sampling temperature (paper: 1.0)
    apparatus_top_p: float = identity(0.9)   # nucleus sampling (paper: 0.9)
