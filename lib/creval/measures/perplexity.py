"""Perplexity of texts under a language model (Rethinking creativity evaluation, Sec. 4: "PPL").

    PPL(x)     = exp(-(1/T) sum_t log p(x_t | x_<t))        over the model's T tokens of x
    bpb(x)     = -sum_t log p(x_t | x_<t) / (ln 2 * bytes(x))   (bits per UTF-8 byte: comparable across tokenizers)
    PPL(x | c) = the same sums with every token of x conditioned on a context c (e.g. the MacGyver problem)
               whose own tokens are not counted.

Every number comes from :meth:`creval.models.cached.Model.loglikelihood_many` (teacher-forced, BOS
prepended, rolling windows past the context length; cached), so a warm rebuild makes no model call.
The record keeps the summed NLL, tokens and bytes, so PPL, log-PPL and bits per byte are all derivable.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence


@dataclass(frozen=True)
class PPLRecord:
    sum_nll: float
    n_tokens: int
    n_bytes: int
    context_tokens: int
    model: str
    quantisation: str = ""
    windows: int = 1

    @property
    def ppl(self) -> float:
        return math.exp(self.sum_nll / self.n_tokens) if self.n_tokens else float("nan")

    @property
    def bits_per_byte(self) -> float:
        return self.sum_nll / math.log(2) / self.n_bytes if self.n_bytes else float("nan")

    def to_dict(self) -> dict:
        return {**asdict(self), "ppl": self.ppl, "bits_per_byte": self.bits_per_byte}

    @classmethod
    def from_dict(cls, d: dict) -> "PPLRecord":
        return cls(float(d["sum_nll"]), int(d["n_tokens"]), int(d["n_bytes"]), int(d.get("context_tokens", 0)),
                   d.get("model", ""), d.get("quantisation", ""), int(d.get("windows", 1)))


def perplexity_many(model, texts: Sequence[str], contexts: Sequence[str | None] | None = None,
                    tags: Sequence[dict] | None = None) -> list[PPLRecord]:
    """One :class:`PPLRecord` per text (conditioned on ``contexts[i]`` when given and non-empty)."""
    ctx = list(contexts) if contexts is not None else [None] * len(texts)
    if len(ctx) != len(texts):
        raise ValueError(f"{len(ctx)} contexts for {len(texts)} texts")
    lls = model.loglikelihood_many([(t, c or None) for t, c in zip(texts, ctx)], tags=tags)
    return [PPLRecord(-ll.sum_logprob, ll.n_tokens, ll.n_bytes, ll.context_tokens, ll.model or model.name,
                      ll.quantisation, ll.windows) for ll in lls]


def perplexity(model, text: str, context: str | None = None) -> PPLRecord:
    return perplexity_many(model, [text], [context])[0]
