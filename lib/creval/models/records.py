"""What a backend returns (the protocol is :mod:`creval.models.base`): a sampled continuation with its token log-probs
(:class:`Sample`), a chat reply (:class:`Completion`), the log-prob of each given answer (:class:`ChoiceScores`) and
a text's teacher-forced log-likelihood (:class:`LogLikelihood`). Each reads back from the dict it writes."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Sample:
    """One sampled continuation with the log-prob of each generated token (stop token included)."""
    text: str
    token_logprobs: tuple[float, ...]
    finish_reason: str = "stop"
    prompt_tokens: int = 0            # tokens of the prompt it continued (for accounting)

    @property
    def n_tokens(self) -> int:
        return len(self.token_logprobs)

    @property
    def mean_logprob(self) -> float:
        """Length-normalised log-likelihood (paper app. C): mean of the token log-probs; NaN for a sample the
        server gave no log-prob for (an empty reply): unknown, never probability 1 (the entropy leaves it out of
        its weights and counts it, measures/entropy.py)."""
        return sum(self.token_logprobs) / len(self.token_logprobs) if self.token_logprobs else math.nan

    def to_dict(self) -> dict:
        return {"text": self.text, "token_logprobs": list(self.token_logprobs), "finish_reason": self.finish_reason,
                "mean_logprob": self.mean_logprob, "n_tokens": self.n_tokens, "prompt_tokens": self.prompt_tokens}

    @classmethod
    def from_dict(cls, d: dict) -> "Sample":
        return cls(d["text"], tuple(d["token_logprobs"]), d.get("finish_reason", "stop"), d.get("prompt_tokens", 0))


@dataclass(frozen=True)
class Completion:
    """A chat reply. ``reasoning`` holds stripped thinking text (thinking models), counted separately."""
    text: str
    input_tokens: int
    output_tokens: int
    reasoning: str = ""
    reasoning_tokens: int = 0
    finish_reason: str = "stop"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ChoiceScores:
    """The log-prob of each choice as the start of the reply, and the prompt's tokens (for accounting).

    ``unparsed``: some choice has no finite log-prob (the server returned no log-probs, or a choice is not among
    the reply's listed likely tokens): the scores cannot be compared (a missing NO would make P(YES) exactly 1),
    and a caller must not turn them into a label."""
    logprobs: dict[str, float]
    input_tokens: int = 0

    @property
    def unparsed(self) -> bool:
        return no_evidence(self.logprobs)

    def to_dict(self) -> dict:
        return {"logprobs": dict(self.logprobs), "input_tokens": self.input_tokens}

    @classmethod
    def from_dict(cls, d: dict) -> "ChoiceScores":
        if set(d) == {"logprobs", "input_tokens"} and isinstance(d["logprobs"], dict):
            return cls({k: float(v) for k, v in d["logprobs"].items()}, int(d["input_tokens"]))
        # cache entries written before this record existed: a flat dict with an ``_input_tokens`` key
        return cls({k: float(v) for k, v in d.items() if k != "_input_tokens"}, int(d.get("_input_tokens", 0)))


def no_evidence(logprobs: dict) -> bool:
    """True when some choice of a ``{choice: log-prob}`` map (or every one) has no finite log-prob, so the choices
    cannot be compared (see ``ChoiceScores.unparsed``)."""
    return not logprobs or not all(v is not None and math.isfinite(v) for v in logprobs.values())


@dataclass(frozen=True)
class LogLikelihood:
    """Teacher-forced log-likelihood of a text (natural log), optionally given a context.

    ``token_logprobs``: log p(token | everything before it) for each scored token of the text;
    ``context_tokens``: tokens of the context it was conditioned on (not counted; the BOS token neither);
    ``n_bytes``: UTF-8 bytes of the text (for bits per byte); ``windows``: rolling windows used (1 when the
    text fits the model's window); ``skipped_tokens``: text tokens the backend could not score (a server's
    first token when no context and no document start is sent); ``quantisation``: of the weights that scored it.
    """
    sum_logprob: float
    token_logprobs: tuple[float, ...]
    n_bytes: int
    context_tokens: int = 0
    windows: int = 1
    skipped_tokens: int = 0
    model: str = ""
    quantisation: str = ""
    logprob_kind: str = ""

    @property
    def n_tokens(self) -> int:
        return len(self.token_logprobs)

    @property
    def mean_logprob(self) -> float:
        return self.sum_logprob / self.n_tokens if self.n_tokens else 0.0

    @property
    def perplexity(self) -> float:
        """exp(-mean token log-prob); 1.0 for an empty text."""
        return math.exp(-self.mean_logprob)

    @property
    def bits_per_byte(self) -> float:
        return -self.sum_logprob / math.log(2) / self.n_bytes if self.n_bytes else 0.0

    def to_dict(self) -> dict:
        return {"sum_logprob": self.sum_logprob, "token_logprobs": list(self.token_logprobs),
                "n_tokens": self.n_tokens, "n_bytes": self.n_bytes, "context_tokens": self.context_tokens,
                "windows": self.windows, "skipped_tokens": self.skipped_tokens, "model": self.model,
                "quantisation": self.quantisation, "logprob_kind": self.logprob_kind}

    @classmethod
    def from_dict(cls, d: dict) -> "LogLikelihood":
        return cls(float(d["sum_logprob"]), tuple(float(x) for x in d["token_logprobs"]), int(d["n_bytes"]),
                   int(d.get("context_tokens", 0)), int(d.get("windows", 1)), int(d.get("skipped_tokens", 0)),
                   d.get("model", ""), d.get("quantisation", ""), d.get("logprob_kind", ""))
