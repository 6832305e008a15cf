"""Parameters of chapter 09, comparing models. It reads the records of the studies that measure a model
(divergent, convergent, neocoder, rethinking, aut); their parameters reach it by composition (``upstream_params``)
and name the same upstream run folders. ``compare_roots`` names run roots written by ``creval batch a b`` (one model each);
empty means this run root, whose studies measured ``model`` and ``models``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.studies.compare.sources import root_runs
from creval.studies.config import JudgeConfig, identity
from creval.studies.reader import ReaderConfig


@dataclass(frozen=True)
class CompareConfig(ReaderConfig, JudgeConfig):
    """Chapter 09: ``judge_model`` is its pairwise and equivalence judges' model."""
    study: ClassVar[str] = "compare"
    # old key names, still accepted (see Config.renamed)
    renamed: ClassVar[Mapping[str, str]] = {"released_items": "compare_released_items",
        "released_bleu_refs": "compare_released_bleu_refs", "pairwise_items": "compare_pairwise_items",
        "pairwise_words": "compare_pairwise_words", "equivalence_steps": "compare_equivalence_steps"}
    records_version: ClassVar[int] = 7      # 7: costs count sandbox runs; 6: bits per byte replaces perplexity; 5: judged values carry provenance
    compare_roots: tuple[str, ...] = identity(())   # run roots of `creval batch` (one model each); empty: this run root
    compare_embedder: str = identity("all-MiniLM-L6-v2")   # sentence embedder of the homogeneity cosines
    compare_human_max: int = identity(10)   # human responses per prompt in the homogeneity tables
    compare_released_items: int = identity(40)      # items of each dataset whose released outputs are measured, 0 for all
    compare_released_bleu_refs: int = identity(5)   # the model's answers to other items that self-BLEU scores against
    compare_pairwise_items: int = identity(2)       # items per dataset judged pairwise (every pair, both orders), 0: none
    compare_pairwise_words: int = identity(60)      # words of each answer shown to the pairwise judge
    compare_equivalence_steps: int = identity(3)    # divergent first steps whose samples the equivalence judge partitions

    def reads_upstream_here(self) -> bool:
        """With ``compare_roots`` the studies compared ran in those roots: nothing runs here first."""
        return not self.compare_roots

    def resolved(self) -> dict:
        """The run id of each study read here (it holds the upstream machine facts), or, with
        ``compare_roots``, which finished run each root holds per study (a root's new run changes what the
        comparison reads)."""
        if self.compare_roots:
            return {"roots": {r: root_runs(self, r) for r in self.compare_roots}}
        return super().resolved()
