"""What the report card (chapter 08) costs: nothing of its own."""
from __future__ import annotations

from creval.studies.estimate.parts import Estimate


def estimate(cfg) -> Estimate:
    return Estimate("reportcard", [], ["reads the other studies' records: no call of its own"])
