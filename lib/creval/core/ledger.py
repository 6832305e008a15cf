"""Accounting of every expensive call: made or served from cache, tokens, cost, seconds.

One process-wide :data:`LEDGER` receives a :class:`CallRecord` per call. Run stores snapshot it into the
run manifest (per run) and ``calls.jsonl`` (per call). Tags (``agent``, ``phase``, ``criterion``...) let
judges break tokens down by agent and phase.
"""
from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
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


class Ledger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[CallRecord] = []
        self._tags: list[dict] = []
        # The book runner sets CREVAL_LEDGER_FILE so each chapter's kernel streams its calls there.
        self.stream = os.environ.get("CREVAL_LEDGER_FILE")

    def add(self, rec: CallRecord) -> None:
        merged = {}
        for t in self._tags:
            merged.update(t)
        rec.tags = {**merged, **rec.tags}
        with self._lock:
            self.records.append(rec)
            if self.stream:
                with open(self.stream, "a") as f:
                    f.write(json.dumps(asdict(rec)) + "\n")

    @contextmanager
    def tagged(self, **tags) -> Iterator[None]:
        """Attach ``tags`` to every call recorded inside the block."""
        self._tags.append(tags)
        try:
            yield
        finally:
            self._tags.pop()

    def mark(self) -> int:
        return len(self.records)

    def since(self, mark: int = 0) -> list[CallRecord]:
        return self.records[mark:]

    @staticmethod
    def summarize(records: list[CallRecord]) -> dict:
        """Totals overall and per (kind, model): calls made, served from cache, tokens (of every call, a cache
        hit counting its stored reply's), the tokens of the calls made alone, cost and seconds."""
        def empty():
            return {"calls_made": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                    "seconds": 0.0, "made_input_tokens": 0, "made_output_tokens": 0}
        total, by = empty(), defaultdict(empty)
        for r in records:
            for agg in (total, by[f"{r.kind}:{r.model}"]):
                agg["cache_hits" if r.cached else "calls_made"] += 1
                agg["input_tokens"] += r.input_tokens
                agg["output_tokens"] += r.output_tokens
                agg["cost_usd"] += r.cost_usd
                agg["seconds"] += r.seconds
                if not r.cached:
                    agg["made_input_tokens"] += r.input_tokens
                    agg["made_output_tokens"] += r.output_tokens
        return {"total": total, "by_kind_model": dict(by)}

    def rows(self, mark: int = 0) -> list[dict]:
        return [asdict(r) for r in self.since(mark)]


LEDGER = Ledger()
