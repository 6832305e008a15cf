"""Parameters of chapter 04, validating semantic entropy. It reads the divergent study's records; the
divergent parameters reach it by composition (``cfg.divergent()`` is the divergent study's own Config)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.datasets import aut, macgyver
from creval.domains import get_domain
from creval.measures.nli.backends import resolved_name
from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.divergent.config import DivergentConfig
from creval.studies.reader import DerivedConfig


@dataclass(frozen=True)
class ValidationConfig(DerivedConfig, JudgeConfig, BootstrapConfig):
    """Chapter 04; ``judge_model`` is the pairwise novelty judge, ``model`` the model sampled for the human
    reference and rerun at ``n_large`` (H.2). It reads the divergent ``steps`` and ``problems`` only, so the
    divergent sweep and entailment-evaluation parameters (``not_read``) are left out of its run id."""
    study: ClassVar[str] = "validation"
    not_read: ClassVar[tuple[str, ...]] = ("temperatures", "sweep_limit", "sweep_domain", "nli_eval_pairs")
    aut_items: int = identity(16)   # Ocsai-1 main2_test responses with human originality ratings
    aut_objects: int = identity(2)   # AUT objects they are spread over (the judge ranks within an object)
    cambridge_items: int = identity(60)   # Cambridge AUT responses (metrics only, no judge)
    macgyver_items: int = identity(3)   # MacGyver solutions per class (unconventional / conventional)
    human_full: bool = identity(True)   # the measures without an LLM call also on every labelled item, with the spread of draws of the judge's subsample size
    draws: int = 200                       # random draws for that spread
    human_ref_problems: int = identity(1)   # MacGyver problems: crowd vs model-sampled solutions
    human_ref_max_tokens: int = identity(96)   # token limit of one sampled whole solution
    n_large: int = identity(20)   # H.2: the larger number of samples per step
    h2_limit: int = identity(1)   # H.2: problems rerun at n_large

    def divergent(self) -> DivergentConfig:
        """The divergent study's own Config: the run whose steps and problems are read."""
        return self.upstream()["divergent"]

    def resolved(self) -> dict:
        """The entailment backend that really runs, whether each divergent domain's problems are our sample,
        and whether the human ground truth (AUT ratings, MacGyver labels and crowd solutions) is."""
        def kind(sample: bool) -> str:
            return "sample" if sample else "real"
        div = self.divergent()
        return {"nli": resolved_name(div.nli),
                "data": {d: kind(get_domain(d).source_kind() == "sample") for d in sorted(set(div.domains))},
                "human_data": {"aut": kind(aut.source().is_sample), "macgyver": kind(macgyver.source().is_sample)}}
