"""Parameters of the judges study (chapter 07c, issue 64): which sets' released LLM judges are read against the
people, and how many refits give the response model's intervals. Its own keys start with ``judges_``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.datasets.base import resolve
from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.judges.panels import PANELS

EMBEDDED = ("smollm2-135m", "smollm2-135m-hf")
"""The embedded default judge: it cannot keep a rating's reply format (chapter 03 counts its unparsed replies), so
it is never asked; the chapter says so in one line."""


@dataclass(frozen=True)
class JudgesConfig(JudgeConfig, BootstrapConfig):
    """Chapter 07c: the sets whose judges are read (:data:`~creval.studies.judges.panels.PANELS`), and how many
    HANNA prompts and TTCW plots ``judge_model`` (your judge) rates, placed among the released judges on those
    stories."""
    study: ClassVar[str] = "judges"
    records_version: ClassVar[int] = 3      # 3: the texts table, the people's flips beside each judge's, TTCW for yours
    judges_sets: tuple[str, ...] = identity(("hanna", "ttcw"))   # sets whose released LLM judges are read against their people
    judges_prompts: int = identity(0)   # prompts of each set read (picked with data_seed), 0 for all of them
    judges_irt_boot: int = identity(50)   # refits of the graded response model (resampling prompts) for its intervals
    judges_own_prompts: int = identity(4)   # HANNA prompts whose stories judge_model rates (11 each, both criteria), 0: none
    judges_own_plots: int = identity(4)   # TTCW plots whose 3 model-written stories judge_model tests (14 tests each), 0: none

    def asks_own_judge(self) -> bool:
        """Whether ``judge_model`` (your judge) is asked: a judge other than the embedded default, and
        ``judges_own_prompts`` or ``judges_own_plots`` above 0."""
        return bool(self.judges_own_prompts or self.judges_own_plots) and self.judge_model not in EMBEDDED

    def resolved(self) -> dict:
        """Whether each set is the real data or our bundled sample (a lookup: it never downloads)."""
        out = {}
        for name in self.judges_sets:
            try:
                out[name] = "sample" if resolve(PANELS[name].dataset).is_sample else "real"
            except Exception:                  # noqa: BLE001 - not declared, or no data at all: the run says so
                out[name] = "missing"
        return {"data": out}
