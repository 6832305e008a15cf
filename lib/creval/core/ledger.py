"""Accounting of every expensive call: made or served from cache, tokens, cost, seconds.

Every call adds a :class:`CallRecord` to :data:`LEDGER`, which keeps only running totals per (kind, model)
(memory stays flat over a paper-scale run) and hands the record to the *tallies* open in the caller's
context. A tally (``with LEDGER.collect() as t:``) sees exactly the calls made inside its block, in this
thread and in the unit threads it starts (they copy its context), never another unit's: tags
(``LEDGER.tagged(agent=..., phase=...)``) and tallies are context variables, not process-global lists.
:meth:`Ledger.stream_to` (called by whoever owns the process: the book's chapter kernels, the command line)
appends every call to a JSON-lines file; nothing is read from the environment.
"""
from __future__ import annotations

import contextvars
import json
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator


@dataclass
class CallRecord:
    kind: str                 # sample | chat | choice | loglikelihood | nli | embed
    model: str
    cached: bool
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    tags: dict = field(default_factory=dict)
    key: str = ""


def _empty() -> dict:
    return {"calls_made": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
            "seconds": 0.0, "made_input_tokens": 0, "made_output_tokens": 0}


class Totals:
    """Running totals overall and per ``kind:model`` (the shape of :meth:`Ledger.summarize`)."""

    def __init__(self) -> None:
        self.total, self.by = _empty(), defaultdict(_empty)

    def add(self, r: CallRecord) -> None:
        for agg in (self.total, self.by[f"{r.kind}:{r.model}"]):
            agg["cache_hits" if r.cached else "calls_made"] += 1
            agg["input_tokens"] += r.input_tokens
            agg["output_tokens"] += r.output_tokens
            agg["cost_usd"] += r.cost_usd
            agg["seconds"] += r.seconds
            if not r.cached:
                agg["made_input_tokens"] += r.input_tokens
                agg["made_output_tokens"] += r.output_tokens

    def summary(self) -> dict:
        return {"total": dict(self.total), "by_kind_model": {k: dict(v) for k, v in self.by.items()}}


class Tally:
    """The calls made inside one ``LEDGER.collect()`` block: ``records`` (kept unless ``keep=False``),
    running ``totals`` and an optional ``sink(record)`` (e.g. a run's ``calls.jsonl`` writer)."""

    def __init__(self, keep: bool = True, sink=None) -> None:
        self.keep, self.sink, self.records, self.totals = keep, sink, [], Totals()
        self._lock = threading.Lock()

    def add(self, rec: CallRecord) -> None:
        with self._lock:
            self.totals.add(rec)
            if self.keep:
                self.records.append(rec)
            if self.sink is not None:
                self.sink(rec)

    @property
    def made(self) -> list[CallRecord]:
        return [r for r in self.records if not r.cached]

    def summary(self) -> dict:
        return self.totals.summary()


def merge_usage(summaries: list[dict]) -> dict:
    """Several :meth:`Ledger.summarize` results added together."""
    total, by = _empty(), defaultdict(_empty)
    for s in summaries:
        for k, v in (s.get("total") or {}).items():
            total[k] = total.get(k, 0) + v
        for key, agg in (s.get("by_kind_model") or {}).items():
            for k, v in agg.items():
                by[key][k] = by[key].get(k, 0) + v
    return {"total": total, "by_kind_model": dict(by)}


_TAGS: contextvars.ContextVar[tuple] = contextvars.ContextVar("creval_ledger_tags", default=())
_TALLIES: contextvars.ContextVar[tuple] = contextvars.ContextVar("creval_ledger_tallies", default=())


class Ledger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.totals = Totals()
        self.stream: Path | None = None

    def stream_to(self, path: str | Path | None) -> None:
        """Append every call recorded from now on to ``path`` (one JSON object per line), or stop (``None``).
        The book's chapter kernels stream to their chapter's ledger file."""
        with self._lock:
            self.stream = Path(path) if path is not None else None

    def add(self, rec: CallRecord) -> None:
        merged: dict = {}
        for t in _TAGS.get():
            merged.update(t)
        rec.tags = {**merged, **rec.tags}
        with self._lock:
            self.totals.add(rec)
            if self.stream:
                with open(self.stream, "a") as f:
                    f.write(json.dumps(asdict(rec)) + "\n")
        for t in _TALLIES.get():
            t.add(rec)

    @contextmanager
    def tagged(self, **tags) -> Iterator[None]:
        """Attach ``tags`` to every call recorded inside the block (this context only)."""
        token = _TAGS.set(_TAGS.get() + (tags,))
        try:
            yield
        finally:
            _TAGS.reset(token)

    @contextmanager
    def collect(self, keep: bool = True, sink=None) -> Iterator[Tally]:
        """A :class:`Tally` of the calls made inside the block (and in unit threads started from it)."""
        tally = Tally(keep, sink)
        token = _TALLIES.set(_TALLIES.get() + (tally,))
        try:
            yield tally
        finally:
            _TALLIES.reset(token)

    def attach(self, tally: Tally) -> contextvars.Token:
        """Open ``tally`` in the current context until :meth:`detach` (for a run store that outlives a block)."""
        return _TALLIES.set(_TALLIES.get() + (tally,))

    @staticmethod
    def detach(token: contextvars.Token) -> None:
        try:
            _TALLIES.reset(token)
        except ValueError:          # made in another context (that context is gone, and the tally with it)
            pass

    @staticmethod
    def summarize(records: list[CallRecord]) -> dict:
        """Totals overall and per (kind, model): calls made, served from cache, tokens (of every call, a cache
        hit counting its stored reply's), the tokens of the calls made alone, cost and seconds."""
        t = Totals()
        for r in records:
            t.add(r)
        return t.summary()


LEDGER = Ledger()
