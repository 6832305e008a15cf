"""Parameters of the lexical study."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.config import Config, identity


@dataclass(frozen=True)
class LexicalConfig(Config):
    """The toy study: ``lexical_samples`` first-step answers to each of ``lexical_problems`` MacGyver problems."""
    study: ClassVar[str] = "lexical"
    lexical_problems: int = identity(2)      # MacGyver problems asked
    lexical_samples: int = identity(3)       # answers sampled per problem and model
    lexical_max_tokens: int = identity(32)   # tokens per answer
