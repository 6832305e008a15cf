"""Typed records of the divergent study: one :class:`StepRecord` per sampled step (``steps.jsonl``) and
one :class:`ProblemRecord` per finished problem (``problems.jsonl``). Field meanings are documented in
:mod:`creval.studies.divergent.generation`; ``to_dict`` gives exactly the JSONL row."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass
class StepRecord(Record):
    problem_id: str
    domain: str
    model: str
    step_index: int                          # 0-based
    samples: list[dict]                      # {text, clean, token_logprobs, mean_logprob, n_tokens, finish_reason,
                                             #  stop_vote}
    cluster_ids: list[int]                   # one per sample, classes numbered by first appearance
    semantic_entropy: float                  # nats (Rao-Blackwell estimate over clusters)
    naive_entropy: float
    discrete_entropy: float
    n_clusters: int
    chosen_index: int | None                 # index into samples; None for a STOP row
    stop_votes: int
    is_stop: bool
    temperature: float
    top_p: float
    n: int
    nli: str                                 # the entailment backend that really ran
    strict: bool
    logprob_kind: str
    seed: int


@dataclass
class ProblemRecord(Record):
    problem_id: str
    domain: str
    model: str
    problem_text: str
    solution: str
    steps: list[str]
    n_steps: int
    budget: int
    first_answer: str
    stopped_by: str                          # "vote" | "budget" | "no_candidate"
    mean_semantic_entropy: float             # over the solution's steps (STOP row excluded); NaN when none
    min_semantic_entropy: float
    max_semantic_entropy: float
    mean_naive_entropy: float
    mean_discrete_entropy: float
    mean_n_clusters: float
    duplicate_filtered: bool                 # two consecutive chosen units identical (app. F)
    temperature: float
    n: int
    nli: str
