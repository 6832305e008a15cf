"""Parameters of the human-sets study (chapter 07b, issue 63): which declared sets of human judgment it reads and
which cheap measures it computes for every text. Its own keys start with ``humansets_``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.datasets.base import resolve
from creval.studies.config import BootstrapConfig, identity
from creval.studies.humansets.sets import SETS


@dataclass(frozen=True)
class HumansetsConfig(BootstrapConfig):
    """Chapter 07b: the sets (:data:`creval.studies.humansets.sets.SETS`) and the measure families."""
    study: ClassVar[str] = "humansets"
    humansets_sets: tuple[str, ...] = identity(())   # declared human sets read, [] for every one (creval.datasets.rated)
    humansets_measures: tuple[str, ...] = identity(("ci", "lexical", "templates", "diversity", "prompt"))   # cheap measure families per text (creval grade's, no model)

    def resolved(self) -> dict:
        """Whether each set is the real data or our bundled sample (a lookup: it never downloads)."""
        out = {}
        for name in self.humansets_sets or tuple(SETS):
            try:
                out[name] = "sample" if resolve(SETS[name].dataset).is_sample else "real"
            except Exception:                  # noqa: BLE001 - not declared, or no data at all: the run says so
                out[name] = "missing"
        return {"data": out}
