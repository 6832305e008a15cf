"""Parameters of chapter 04, validating semantic entropy (reads the divergent study's records)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.divergent.config import DivergentConfig


@dataclass(frozen=True)
class ValidationConfig(DivergentConfig, JudgeConfig, BootstrapConfig):
    """Chapter 04; ``judge_model`` is the pairwise novelty judge."""
    study: ClassVar[str] = "validation"
    aut_items: int = identity(16)   # Ocsai-1 main2_test responses with human originality ratings
    aut_objects: int = identity(2)   # AUT objects they are spread over (the judge ranks within an object)
    cambridge_items: int = identity(60)   # Cambridge AUT responses (metrics only, no judge)
    macgyver_items: int = identity(3)   # MacGyver solutions per class (unconventional / conventional)
    human_ref_problems: int = identity(1)   # MacGyver problems: crowd vs model-sampled solutions
    human_ref_max_tokens: int = identity(96)   # token limit of one sampled whole solution
    n_large: int = identity(20)   # H.2: the larger number of samples per step
    h2_limit: int = identity(1)   # H.2: problems rerun at n_large
