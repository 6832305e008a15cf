"""Parameters of chapter 04, validating semantic entropy (reads the divergent study's records)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.divergent.config import GenerationConfig


@dataclass(frozen=True)
class ValidationConfig(GenerationConfig):
    novelty_model: str = "smollm2-135m"    # pairwise novelty judge
    aut_items: int = 16                    # Ocsai-1 main2_test responses with human originality ratings
    aut_objects: int = 2                   # AUT objects they are spread over (the judge ranks within an object)
    cambridge_items: int = 60              # Cambridge AUT responses (metrics only, no judge)
    macgyver_items: int = 3                # MacGyver solutions per class (unconventional / conventional)
    human_ref_problems: int = 1            # MacGyver problems: crowd vs model-sampled solutions
    human_ref_max_tokens: int = 96         # token limit of one sampled whole solution
    n_large: int = 20                      # H.2: the larger number of samples per step
    h2_limit: int = 1                      # H.2: problems rerun at n_large
    n_boot: int = 1000                     # bootstrap resamples for confidence intervals
