"""Typed rows of the report card run (``card``, ``sources``). The card's columns are the chapter's headers
(``human data``, ``baseline value``...), so each field names its column."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from creval.core.records import Record, column


@dataclass
class CardRecord(Record):
    """One graded row: a measure or judge against one human data set, beside its strongest trivial baseline
    (:mod:`creval.studies.reportcard.card`; ``None`` where a number could not be computed)."""
    paper: str | None = None
    measure: str | None = None
    human_data: str | None = column("human data")
    statistic: str | None = None              # auc | spearman
    n: int | None = None
    value: float | None = None
    lo: float | None = None
    hi: float | None = None
    baseline: str | None = None
    baseline_orientation: str | None = column("baseline orientation")
    baseline_value: float | None = column("baseline value")
    difference: float | None = None
    diff_lo: float | None = column("diff lo")
    diff_hi: float | None = column("diff hi")
    vs_baseline: str | None = column("vs baseline")    # how it stands against its baseline (beats / ... / no interval)
    verdict: str | None = None                          # the one rule: reproduced / not reproduced / not testable
    reason: str | None = None                           # why: the rule's reason, or the baseline comparison
    paper_figure: str | None = column("paper figure")
    note: str | None = None

    @staticmethod
    def columns() -> dict[str, str]:
        """``{field: column}`` in the card's column order."""
        return {f.name: f.metadata.get("column", f.name) for f in dataclasses.fields(CardRecord)}


@dataclass
class SourceRecord(Record):
    """One graded study's run folder: where it is (under the shared run root), its run id and its data."""
    study: str
    run_dir: str
    run_id: str | None
    data: dict | str | None               # the study's resolved data kinds (sample or real), as its Config says
