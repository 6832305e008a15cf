"""Typed rows of the validation run. ``step_diversity``, ``sample_size``, ``aut_items``, ``cambridge``,
``macgyver_items``, ``human_full`` and ``human_reference`` are frames joined from the datasets' own columns and
the diversity measures' (:mod:`creval.measures.diversity`): their columns are those modules', not restated
here."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass
class DataSourceRecord(Record):
    """One human ground truth used: the dataset, what it gives, where it was read and the chapter's line."""
    dataset: str
    what: str
    source: str
    line: str


@dataclass
class NoveltyRecord(Record):
    """One divergent solution ranked by the pairwise novelty judge among its model x domain's solutions."""
    model: str
    domain: str
    problem_id: str
    novelty_rank: float
    novelty_score: float
    comparisons: int
    ties: int
    mean_semantic_entropy: float | None
    min_semantic_entropy: float | None
    max_semantic_entropy: float | None
    mean_naive_entropy: float | None
    mean_discrete_entropy: float | None
    duplicate_filtered: bool | None
