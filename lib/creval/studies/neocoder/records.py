"""Typed records of the NeoCoder study: one :class:`CodeRecord` per stored GPT-4 round (the replay) and one
:class:`RoundRecord` per live denial-prompting round."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass(frozen=True)
class CodeRecord(Record):
    """A stored code of one round, judged and analysed."""
    problem_id: str
    round: int
    state: int | None                 # None for a duplicate round (its banned list equals the previous one)
    banned: list                      # the round's banned techniques, oldest first
    code_sha: str
    repo: dict                        # Verdict.to_dict() of the repo-compatible judge
    strict: dict                      # Verdict.to_dict() of the strict judge
    correct_repo: bool
    correct_strict: bool
    salvaged: bool                    # strict judge ran a parsable prefix of a truncated reply
    detector: str
    techniques: list                  # detected in the cleaned program
    detection_status: str
    follows: bool
    novel: list                       # detected techniques no human solution of the problem shows
    novelty: float
    has_humans: bool
    verifiable: bool


@dataclass(frozen=True)
class RoundRecord(Record):
    """One live round of Algorithm 1 (denial prompting) for one problem."""
    problem_id: str
    model: str
    mode: str                          # "thread" (Algorithm 1) | "fresh" (benchmarking: stored statements)
    round: int
    state: int | None
    banned: list                       # after this round's draw, oldest first
    candidates: list                   # sorted detected - banned of the previous round's code
    chosen: str | None                 # the new ban, None when no candidate was left
    rng_key: str
    prompt: str                        # the user turn of this round
    reply: str
    input_tokens: int
    output_tokens: int
    finish_reason: str
    code: str
    extraction: str                    # ok | truncated | no_code
    verdict_repo: dict
    verdict_strict: dict
    detector: str
    techniques: list
    detection_status: str
    follows: bool
    novel: list
    novelty: float
    neogauge_term: float               # follows * correct (strict) * novelty
    seconds: float = 0.0
