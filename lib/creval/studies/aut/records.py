"""Typed rows of the AUT agreement run (``uses``, ``turns``, ``judgments``, ``human``, ``baselines_full``,
``raters``)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record, spread


@dataclass
class UseRecord(Record):
    """One generated alternative use."""
    au_id: str           # hash of object|generator|level|idx
    object: str
    generator: str
    level: str           # common | creative | highly_creative
    level_code: int      # 1 | 2 | 3 (the oracle's order)
    idx: int
    text: str
    turn: int            # conversation turn whose list was kept (0 = first; >0 = a forceful follow-up)
    refused: bool        # the kept turn was a refusal (then the level has no uses)
    short: bool          # fewer uses than asked, even after the re-asks


@dataclass
class ScoredUseRecord(UseRecord):
    """A row of ``uses``: the use with its two cheap baselines."""
    semdis: float = 0.0  # 1 - cos(embedding of the object, embedding of the use)
    words: int = 0       # length of the use in words


@dataclass
class TurnRecord(Record):
    """One reply of a generation conversation (every attempt of every turn)."""
    object: str
    generator: str
    level: str
    turn: int
    attempt: int         # 0 = the turn itself, >0 = a re-ask for a short list
    reply: str
    n_parsed: int
    refusal: bool


@dataclass
class JudgmentRecord(Record):
    """One use as judged in one list by one judge (one row per use per list per order)."""
    object: str
    au_id: str
    generator: str
    level: str
    level_code: int
    judge: str
    self_judged: bool    # judge == generator
    method: str          # score | rank
    setting: str         # comprehensive | segmented
    group: int           # segmented group (0 for comprehensive)
    n_items: int
    order: str           # forward | reverse
    position: int        # 0-based place in the list as shown
    raw: float | None    # score 1-5, or rank (1 = most creative); None = unparsed
    value: float | None  # higher = more creative: the score, or 1 - (rank - 1) / (n - 1)
    parse_path: str      # text | text-retry | logprobs | imputed | unparsed
    attempts: int
    identity_order: bool  # the ranking equals the presented order


@dataclass
class HumanRecord(Record):
    """One human-rated response as judged by one scorer (no response text: join on item_id at run time)."""
    dataset: str         # ocsai1 | cambridge | sample-ocsai1 | sample-cambridge
    object: str
    item_id: str
    human: float
    scorer: str          # a judge model, or a baseline (semantic distance, length)
    mode: str            # pointwise | segmented-score | segmented-rank | baseline
    group: int
    position: int
    value: float | None
    parse_path: str


@dataclass
class RaterRecord(Record):
    """One Cambridge response with every rater's score (None where that rater did not rate it): the ceiling."""
    item_id: str
    source: str
    scores: dict = spread("rater")       # rater1, rater2, ...: as many columns as the data has raters
