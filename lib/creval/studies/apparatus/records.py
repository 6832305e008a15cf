"""Typed rows of the apparatus run (``samples``)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record
from creval.models.records import Sample


@dataclass
class SampleRecord(Record):
    """One sampled next step of the problem, with every generated token's log-prob."""
    problem_id: str
    problem_text: str
    sample_index: int
    logprob_kind: str             # what the backend's log-probs are (models.base: exact, approximate, ...)
    text: str
    token_logprobs: list[float]
    finish_reason: str
    mean_logprob: float           # the mean of token_logprobs (paper app. C)
    n_tokens: int
    prompt_tokens: int

    @classmethod
    def of(cls, problem, i: int, logprob_kind: str, s: Sample) -> "SampleRecord":
        return cls(problem_id=problem.problem_id, problem_text=problem.text, sample_index=i,
                   logprob_kind=logprob_kind, **s.to_dict())
