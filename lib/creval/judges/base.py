"""The judge protocol, the verdict record, prompt templates and token accounting shared by all judges.

Every judge answers ``judge(problem, solution, criteria, pair_id) -> list[Verdict]`` (one verdict per
criterion). Tokens are never estimated: each model call runs inside ``LEDGER.tagged(judge=..., pair=...,
criterion=..., agent=..., phase=...)`` and the verdict's token counts are summed from the ledger records
of its calls. Cache hits are recorded with the tokens of the stored completion, so a warm rerun reports
the same token counts as the cold run and token comparisons stay valid.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

from creval.core.ledger import LEDGER, CallRecord

PROMPTS = Path(__file__).parent / "prompts"
MODEL_KINDS = ("chat", "choice", "sample")


@lru_cache(maxsize=64)
def template(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text().strip()


def render(name: str, **kw) -> str:
    return template(name).format(**kw)


def clip_words(text: str, n: int) -> str:
    """At most ``n`` words (used for stored fragments; replies themselves are bounded by max_tokens)."""
    w = text.split()
    return text.strip() if len(w) <= n else " ".join(w[:n]) + " ..."


def crit_name(c) -> str:
    return c.name if hasattr(c, "name") else str(c["name"])


def crit_def(c) -> str:
    return c.definition if hasattr(c, "definition") else str(c["definition"])


@dataclass
class Turn:
    """One model call of a judge, for transcripts."""
    agent: str                 # PA | SA | CA | judge | Debater-1 ...
    phase: str                 # init | discussion | confidence | verdict | judge
    round: int
    prompt: str                # short summary (the instruction part, not the whole problem text)
    reply: str
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 1
    retrieved_ids: list = field(default_factory=list)
    retrieved: list = field(default_factory=list)
    parsed: object = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Verdict:
    pair_id: str
    criterion: str
    verdict: bool | None           # None only when unparsed
    confidence: float | None       # the judge's confidence that ``verdict`` is right (0-1), None if unknown
    judge: str
    model: str
    p_yes: float | None = None     # stated / log-prob probability that the criterion is met, when given
    rounds: int = 0
    early_exit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    unparsed: bool = False
    verdict_path: str = "text"     # text | text-retry | logprobs | unparsed | majority
    retries: int = 0               # extra re-asks spent on format failures
    tokens_by: dict = field(default_factory=dict)   # "agent/phase" -> [input, output]
    transcript: list = field(default_factory=list)  # list of Turn dicts
    extra: dict = field(default_factory=dict)

    @property
    def problem_id(self) -> str:
        return self.pair_id.split("::")[0]

    def to_dict(self, with_transcript: bool = False) -> dict:
        d = asdict(self)
        d["problem_id"] = self.problem_id
        if not with_transcript:
            d.pop("transcript")
        return d


@runtime_checkable
class Judge(Protocol):
    name: str
    model: object

    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Verdict]:
        """One verdict per criterion, in the order of ``criteria``."""


def verdict_confidence(verdict: bool | None, p_yes: float | None) -> float | None:
    """Confidence that the verdict is right, from a probability that the criterion is met."""
    if verdict is None or p_yes is None:
        return None
    return p_yes if verdict else 1.0 - p_yes


def model_records(records: list[CallRecord]) -> list[CallRecord]:
    return [r for r in records if r.kind in MODEL_KINDS]


def token_summary(records: list[CallRecord]) -> dict:
    """Totals and an ``agent/phase`` breakdown from ledger records (cache hits included)."""
    recs = model_records(records)
    by: dict[str, list[int]] = {}
    for r in recs:
        key = f"{r.tags.get('agent', '?')}/{r.tags.get('phase', '?')}"
        agg = by.setdefault(key, [0, 0])
        agg[0] += r.input_tokens
        agg[1] += r.output_tokens
    return {"input_tokens": sum(r.input_tokens for r in recs), "output_tokens": sum(r.output_tokens for r in recs),
            "calls": len(recs), "cached_calls": sum(r.cached for r in recs), "tokens_by": by}


def split_evenly(total: int, n: int) -> list[int]:
    base, rem = divmod(total, n)
    return [base + (1 if i < rem else 0) for i in range(n)]


def fill_tokens(v: Verdict, records: list[CallRecord]) -> Verdict:
    s = token_summary(records)
    v.input_tokens, v.output_tokens, v.calls, v.tokens_by = s["input_tokens"], s["output_tokens"], s["calls"], s["tokens_by"]
    return v


def strip_markup(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def chat_many_tagged(model, convs: list, item_tags: list[dict], *, max_tokens: int, seed: int = 0,
                     temperature: float = 0.0):
    """``model.chat_many`` (one batch), then add ``item_tags[i]`` to the ledger record of request ``i``.

    Records are matched to requests by cache key (a batch records cache hits before misses).
    """
    from creval.core.cache import make_key
    from creval.models.base import ChatRequest
    m = LEDGER.mark()
    outs = model.chat_many(convs, max_tokens=max_tokens, seed=seed, temperature=temperature)
    recs = [r for r in LEDGER.since(m) if r.kind == "chat"]
    ident = model._ident() if hasattr(model, "_ident") else None
    if ident is not None:
        keys = [make_key("chat", model=ident, call=ChatRequest(tuple(c), temperature, max_tokens, seed).describe())
                for c in convs]
        for r in recs:
            if r.key in keys:
                r.tags.update(item_tags[keys.index(r.key)])
    return outs


def records_for(records: list[CallRecord], **tags) -> list[CallRecord]:
    return [r for r in records if all(r.tags.get(k) == v for k, v in tags.items())]
