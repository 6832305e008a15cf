"""Parameters of chapter 04, validating semantic entropy. It reads the divergent study's records; the
divergent parameters reach it by composition (``cfg.divergent()`` is the divergent study's own Config)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.datasets import aut, macgyver
from creval.domains import get_domain
from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.divergent.config import DivergentConfig
from creval.studies.reader import DerivedConfig


@dataclass(frozen=True)
class ValidationConfig(DerivedConfig, JudgeConfig, BootstrapConfig):
    """Chapter 04; ``judge_model`` is the pairwise novelty judge, ``model`` the model sampled for the human
    reference and rerun at ``validation_n_large`` (H.2). It reads the divergent ``steps`` and ``problems`` only, so the
    divergent sweep and entailment-evaluation parameters (``not_read``) are left out of its run id."""
    study: ClassVar[str] = "validation"
    # old key names, still accepted (see Config.renamed)
    renamed: ClassVar[Mapping[str, str]] = {"macgyver_items": "validation_macgyver_items",
        "human_full": "validation_human_full", "draws": "validation_draws",
        "human_ref_problems": "validation_human_ref_problems",
        "human_ref_max_tokens": "validation_human_ref_max_tokens", "n_large": "validation_n_large",
        "h2_limit": "validation_h2_limit", "cambridge_items": "aut_cambridge_items"}
    shares: ClassVar[tuple[str, ...]] = ("aut",)   # aut_items, aut_objects, aut_cambridge_items: the same AUT items
    not_read: ClassVar[tuple[str, ...]] = ("divergent_temperatures", "divergent_sweep_limit", "divergent_sweep_domain",
                                           "divergent_nli_eval_pairs")
    aut_items: int = identity(16)   # Ocsai-1 main2_test responses with human originality ratings
    aut_objects: int = identity(2)   # AUT objects they are spread over (the judge ranks within an object)
    aut_cambridge_items: int = identity(60)   # Cambridge AUT responses (metrics only, no judge)
    validation_macgyver_items: int = identity(3)   # MacGyver solutions per class (unconventional / conventional)
    validation_human_full: bool = identity(True)   # the measures without an LLM call also on every labelled item, with the spread of draws of the judge's subsample size
    validation_draws: int = 200                       # random draws for that spread
    validation_human_ref_problems: int = identity(1)   # MacGyver problems: crowd vs model-sampled solutions
    validation_human_ref_max_tokens: int = identity(96)   # token limit of one sampled whole solution
    validation_n_large: int = identity(20)   # H.2: the larger number of samples per step
    validation_h2_limit: int = identity(1)   # H.2: problems rerun at n_large

    def divergent(self) -> DivergentConfig:
        """The divergent study's own Config: the run whose steps and problems are read."""
        return self.upstream()["divergent"]

    def resolved(self) -> dict:
        """The entailment backend that really runs, whether each divergent domain's problems are our sample,
        and whether the human ground truth (AUT ratings, MacGyver labels and crowd solutions) is."""
        def kind(sample: bool) -> str:
            return "sample" if sample else "real"
        div = self.divergent()
        return {"nli": div.nli_runs(),
                "data": {d: kind(get_domain(d).source_kind() == "sample") for d in sorted(set(div.divergent_domains))},
                "human_data": {"aut": kind(aut.source().is_sample), "macgyver": kind(macgyver.source().is_sample)}}
