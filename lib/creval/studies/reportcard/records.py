"""Typed rows of the report card run (``card``, ``sources``). The card's columns are the chapter's headers
(``human data``, ``baseline value``...), so each field names its column."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from creval.core.records import Record, column


@dataclass
class CardRecord(Record):
    """One graded row: a paper's claim about a measure or judge, tested against one human data set beside the
    strongest trivial baseline (:mod:`creval.studies.card`; ``None`` where a number could not be
    computed)."""
    paper: str | None = None
    claim: str | None = None                  # who claimed what, in which direction
    measure: str | None = None
    human_data: str | None = column("human data")
    statistic: str | None = None              # AUROC | Spearman rho | accuracy
    n: int | None = None
    units: int | None = None                  # independent units the bootstrap resampled (prompt, pair, object)
    value: float | None = None
    lo: float | None = None
    hi: float | None = None
    baseline: str | None = None               # the strongest trivial baseline on these items
    baseline_value: float | None = column("baseline value")
    difference: float | None = None
    diff_lo: float | None = column("diff lo")
    diff_hi: float | None = column("diff hi")
    within_value: float | None = column("within value")   # the statistic within authors, weighted over them
    within_lo: float | None = column("within lo")
    within_hi: float | None = column("within hi")
    within: str | None = None                 # the statistic within each author's texts, where authors are pooled
    tracking: str | None = None               # tracks people / no better than a trivial baseline / ... (tracking.py)
    beaten_by: str | None = column("beaten by")   # the baseline a "no better than" measure does not beat
    question: str | None = None               # people's judgment, who wrote the text, or a control of another row
    verdict: str | None = None                # supports / contradicts the paper, inconclusive, not testable here
    borderline: bool | None = None            # a Monte-Carlo margin on a bound could flip the verdict
    p: float | None = None                    # one-sided bootstrap p of the test that decided it
    adjusted: str | None = None               # the verdict after Holm's correction across the card
    adjusted_borderline: bool | None = column("adjusted borderline")   # another seed could flip that word
    reason: str | None = None
    raters: str | None = None                 # whose judgment the row rests on: n raters and their kind
    ceiling: float | None = None              # the raters' own agreement (each held out against the others)
    paper_figure: str | None = column("paper figure")
    note: str | None = None
    source_study: str | None = None           # the study whose records the row's n counts
    source_table: str | None = None           # that study's table
    source_filters: dict | None = None        # column -> value selecting the rows of that table

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
