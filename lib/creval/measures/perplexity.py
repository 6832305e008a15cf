"""Perplexity of texts under a language model (Rethinking creativity evaluation, Sec. 4: "PPL"), one definition on
every backend (issue 33).

    PPL(x)     = exp(-(1/T) sum_t log p(x_t | x_<t))        over the model's T tokens of x
    bpb(x)     = -sum_t log p(x_t | x_<t) / (ln 2 * bytes(x))   (bits per UTF-8 byte: comparable across tokenizers)
    PPL(x | c) = the same sums with every token of x conditioned on a context c (e.g. the MacGyver problem)
               whose own tokens are not counted.

The definition:

- a text is scored after the model's *document start* token (:func:`creval.models.document.document_start`: the
  tokenizer's BOS where it opens a document; SmolLM2's GGUF BOS ``<|im_start|>`` opens a chat turn, so there
  it is ``<|endoftext|>``), so its first token is scored as the start of a document, never left out;
- a context and its text are joined with :data:`SEPARATOR` (a new line, as a prompt lays out a problem and
  its answer), unless the context already ends in white space: ``"Uses for a box:"`` + ``"stage"`` is scored
  as ``"Uses for a box:\\nstage"``, not ``"box:stage"``;
- a set of texts is summarised by :func:`perplexity_summary`: the token-weighted perplexity
  exp(sum NLL / sum T) (one long text and one short one weigh by their tokens; a plain mean of per-text
  perplexities is ruled by one-token texts), the per-text median beside it, bits per byte, and the first
  token's share of the NLL (the token scored with the least to go on).

Every number comes from :meth:`creval.models.cached.Model.loglikelihood_many` (teacher-forced, rolling
windows past the context length; cached), so a warm rebuild makes no model call. The record keeps the summed
NLL, the first token's NLL, tokens and bytes, so PPL, log-PPL, bits per byte and the summary are derivable.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

SEPARATOR = "\n"


@dataclass(frozen=True)
class PPLRecord:
    sum_nll: float
    n_tokens: int
    n_bytes: int
    context_tokens: int
    model: str
    quantisation: str = ""
    windows: int = 1
    first_nll: float = float("nan")      # -log p of the text's first token (after the document start or context)

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
                   d.get("model", ""), d.get("quantisation", ""), int(d.get("windows", 1)),
                   float(d.get("first_nll", float("nan"))))


def joined_context(context: str | None, sep: str = SEPARATOR) -> str | None:
    """The context as the text is scored after it: ``context + sep`` unless it already ends in white space;
    None for no (or an empty) context."""
    if not context:
        return None
    return context if context[-1].isspace() else context + sep


def perplexity_many(model, texts: Sequence[str], contexts: Sequence[str | None] | None = None,
                    tags: Sequence[dict] | None = None, sep: str = SEPARATOR) -> list[PPLRecord]:
    """One :class:`PPLRecord` per text (conditioned on ``contexts[i]`` joined by ``sep`` when given and
    non-empty)."""
    ctx = list(contexts) if contexts is not None else [None] * len(texts)
    if len(ctx) != len(texts):
        raise ValueError(f"{len(ctx)} contexts for {len(texts)} texts")
    lls = model.loglikelihood_many([(t, joined_context(c, sep)) for t, c in zip(texts, ctx)], tags=tags)
    return [PPLRecord(-ll.sum_logprob, ll.n_tokens, ll.n_bytes, ll.context_tokens, ll.model or model.name,
                      ll.quantisation, ll.windows, _first(ll)) for ll in lls]


def _first(ll) -> float:
    """-log p of a log-likelihood's first scored token (NaN where the backend gave no per-token log-probs)."""
    lps = getattr(ll, "token_logprobs", None)
    return -float(lps[0]) if lps else float("nan")


def perplexity(model, text: str, context: str | None = None) -> PPLRecord:
    return perplexity_many(model, [text], [context])[0]


def _get(r, key: str, default=float("nan")) -> float:
    v = r.get(key, default) if isinstance(r, dict) else getattr(r, key, default)
    return float("nan") if v is None else float(v)


def perplexity_summary(records: Iterable) -> dict:
    """A set of scored texts in one line: ``{texts, tokens, ppl_token_weighted, ppl_median, ppl_mean,
    bits_per_byte, first_token_share, first_token_nats}``.

    ``records``: :class:`PPLRecord` s or dicts (e.g. the rows of chapter 06's ``perplexity`` records) with
    ``n_tokens`` and either ``sum_nll``/``nll`` or ``ppl`` (NLL = T log PPL), and where known ``first_nll`` and
    ``n_bytes``. Token-weighted PPL = exp(sum NLL / sum T); ``ppl_mean`` is the plain mean of per-text
    perplexities, kept only to show how far one-token texts pull it; ``first_token_share`` = sum of first-token
    NLLs / sum NLL, ``first_token_nats`` their mean (a uniform guess over a vocabulary V costs ln V). Texts
    with no scored token are left out; every value NaN when none is left."""
    rows = []
    for r in records:
        t = _get(r, "n_tokens", 0)
        if not t or math.isnan(t):
            continue
        nll = _get(r, "sum_nll")
        nll = _get(r, "nll") if math.isnan(nll) else nll
        nll = t * math.log(_get(r, "ppl")) if math.isnan(nll) else nll
        rows.append((t, nll, _get(r, "first_nll"), _get(r, "n_bytes")))
    nan = float("nan")
    if not rows:
        return {"texts": 0, "tokens": 0, "ppl_token_weighted": nan, "ppl_median": nan, "ppl_mean": nan,
                "bits_per_byte": nan, "first_token_share": nan, "first_token_nats": nan}
    tokens, nll = sum(t for t, *_ in rows), sum(x for _, x, *_ in rows)
    per_text = [math.exp(x / t) for t, x, *_ in rows]
    firsts = [f for *_, f, _ in rows]
    nbytes = [b for *_, b in rows]
    known = not any(math.isnan(f) for f in firsts)
    return {"texts": len(rows), "tokens": int(tokens), "ppl_token_weighted": math.exp(nll / tokens),
            "ppl_median": statistics.median(per_text), "ppl_mean": statistics.fmean(per_text),
            "bits_per_byte": nll / math.log(2) / sum(nbytes) if not any(math.isnan(b) for b in nbytes) else nan,
            "first_token_share": sum(firsts) / nll if known and nll else nan,
            "first_token_nats": statistics.fmean(firsts) if known else nan}
