"""Typed rows of the lexical study: one per (model, problem)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass
class AnswerRecord(Record):
    model: str
    problem_id: str
    distinct_2: float          # unique word pairs / word pairs over the problem's answers
    n: int                     # answers sampled
