"""Typed rows of the validation run (one record type per table; :mod:`creval.studies.validation.run` says how
each is computed). The diversity columns are those of :mod:`creval.measures.diversity`: ``cosine, self_bleu,
distinct_1, distinct_2, n`` of a set of texts, ``cosine_to_others, bleu_to_others, distinct_1, distinct_2`` of
one response among its prompt's others, and ``semdis`` (prompt-response distance)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from creval.core.records import Record, optional


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


@dataclass
class StepDiversityRecord(Record):
    """One non-STOP divergent step: its entropies (chapter 02) and the diversity of its samples (Tables 8-10)."""
    model: str
    domain: str
    problem_id: str
    step_index: int
    semantic_entropy: float
    naive_entropy: float
    discrete_entropy: float
    n_clusters: int
    cosine: float          # mean pairwise cosine similarity of the samples' embeddings
    self_bleu: float
    distinct_1: float
    distinct_2: float
    n: int                 # samples


@dataclass
class SampleSizeRecord(Record):
    """One step's meaning classes and semantic entropy at ``n`` samples (appendix H.2)."""
    problem_id: str
    step_index: int
    n: int
    n_clusters: int
    semantic_entropy: float


@dataclass
class RatedResponse(Record):
    """One human-rated AUT response with its originality measures among the other responses to its object."""
    item_id: str
    source: str
    prompt: str            # the object
    response: str
    score: float           # human originality (Cambridge: the raters' mean)
    cosine_to_others: float
    bleu_to_others: float | None     # None or NaN where BLEU was skipped (quadratic in a large group)
    distinct_1: float
    distinct_2: float
    semdis: float


@dataclass
class CambridgeRecord(RatedResponse):
    """A Cambridge AUT response (no judge)."""
    n_raters: int


@dataclass
class AutItemRecord(RatedResponse):
    """An Ocsai-1 response with its judged novelty among its object's responses."""
    novelty_rank: int      # 1 = judged most novel among its object's responses
    novelty_score: float
    group_comparisons: int
    group_ties: int
    group_size: int


@dataclass
class MacgyverItemRecord(Record):
    """One MacGyver verified solution labelled (un)conventional, with its judged novelty, SemDis, distinct-n."""
    problem_id: str
    problem: str
    solvable: Any
    unconventional: bool
    solution: str
    label: str
    source: str
    novelty_score: float
    comparisons: int
    ties: int
    semdis: float
    distinct_1: float
    distinct_2: float


@dataclass
class HumanFullRecord(Record):
    """One labelled item of a whole human data set with the measures that need no model call."""
    dataset: str           # "ocsai1 main2_test" | "cambridge_aut" | "macgyver" ("sample-" before a bundled sample)
    item_id: str
    stratum: str           # how the chapter's subsample was spread: the object, or the class
    target: float          # the human label: originality, or unconventional as 0/1
    in_draw: bool          # the item is in the subsample the judged tables use
    semdis: float
    distinct_1: float
    distinct_2: float
    cosine_to_others: float | None = optional()    # AUT sets only (NaN on MacGyver rows beside them)


@dataclass
class HumanReferenceRecord(Record):
    """Diversity of one MacGyver problem's crowd solutions, or of as many solutions sampled from a model."""
    problem_id: str
    solver: str            # "humans (crowd)" or a model
    cosine: float
    self_bleu: float
    distinct_1: float
    distinct_2: float
    n: int
