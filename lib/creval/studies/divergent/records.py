"""Typed records of the divergent study, its one schema: one :class:`StepRecord` per sampled step and one
:class:`ProblemRecord` per finished problem (what :func:`creval.studies.divergent.generation.solve` returns);
the run's tables ``steps`` and ``problems`` hold them with the domain's ``data_source``
(:class:`SourcedStep`, :class:`SourcedProblem`), ``sweep`` holds :class:`ProblemRecord`; ``entailment`` and
``nli_eval`` say which entailment backend ran and how it scored. ``to_dict`` gives exactly the JSONL row."""
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
                                             #  stop_vote}: the n candidates for the next unit
    cluster_ids: list[int]                   # one per sample, classes numbered by first appearance
    semantic_entropy: float                  # nats (Rao-Blackwell estimate over clusters)
    naive_entropy: float
    discrete_entropy: float
    n_clusters: int
    chosen_index: int | None                 # index into samples; None for a STOP row
    stop_votes: int
    is_stop: bool                            # more than half the samples voted STOP: not part of the solution
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
    solution: str                            # the chosen units joined ("Step k: ..." lines, or a paragraph)
    steps: list[str]                         # the chosen texts
    n_steps: int
    budget: int                              # steps allowed: the units of the first (temperature 0) answer
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


@dataclass
class SourcedStep(StepRecord):
    """A row of ``steps``: the step and where its domain's problems came from."""
    data_source: str = ""                    # sample | download | shared | env (datasets.base.Source.kind)


@dataclass
class SourcedProblem(ProblemRecord):
    """A row of ``problems``: the problem and where its domain's problems came from."""
    data_source: str = ""


@dataclass
class EntailmentRecord(Record):
    """The entailment backend asked for and the one that ran (a fallback says why)."""
    requested: str
    ran: str
    why: str


@dataclass
class NliEvalRecord(Record):
    """One entailment backend on held-out pairs of one dataset (SICK or MSRP) beside the majority baseline."""
    backend: str
    ran: str
    dataset: str
    pairs: int
    accuracy: float | None          # None: not measured (the row's `ran` says why)
    macro_f1: float | None
    baseline: str | None
    baseline_accuracy: float | None
