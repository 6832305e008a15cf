"""Parameters of chapter 08, the report card. It reads the records of the studies that check a measure
against people (convergent, validation, rethinking, aut, humansets, judges); their parameters reach it by
composition (``upstream_params``), and its run id moves whenever one of their run ids does."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.reader import ReaderConfig


@dataclass(frozen=True)
class ReportCardConfig(ReaderConfig):
    """Chapter 08: no parameter of its own beyond the shared ones."""
    study: ClassVar[str] = "reportcard"
    # 10: chapter 07c's rows: TTCW's released judges and your own against the people, judges' flips under
    # rewording against the people's (issue 64); 9: an interval that cannot vary is never read; no better than only when the lead lies below the margin;
    # LAMP against the constant rule and per item; claims by their claimants; the within-prompt estimand (issues
    # 63, 66); 8: the author is strata, not a baseline; surface baselines only; each dataset's declared unit (AUT:
    # responses within objects); the words say what the numbers say (no better than BASELINE, does not track
    # people only inside the margin); rows whose label is who wrote the text answer that question apart
    # 7: the Holm word carries its own borderline mark; 6: each row names the study, table and filters it was
    # computed from (source_*); 5: claims stated the
    # papers' way (supports / contradicts / inconclusive), every baseline and the author label, resampling by
    # unit, Holm; 4: the one verdict rule (vs baseline, verdict, reason); 3: oriented baselines
    records_version: ClassVar[int] = 10
