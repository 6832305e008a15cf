"""Requests written to batch files instead of sent (``creval run --batch-out FILE``).

Inside ``with batch_out(path):`` a server call whose result is not cached is not sent: its request is appended
in the OpenAI batch input format (one JSON object a line: ``custom_id``, ``method``, ``url``, ``body``), with
``custom_id`` the call's cache key, and what is needed to read its answer back is kept in the call cache's
``pending`` table; the call raises :class:`Deferred`. The unit that made it stops there (the unit runner counts
it as waiting, not failed) and resumes on the next run, once :func:`creval.models.batchfile.read_in` has put the
engine's answers into the cache under those keys: each run advances every chain by one wave.

Batch engines take one model and one endpoint per file (OpenAI's Batch API; ``vllm run-batch`` serves one model
and answers ``/v1/chat/completions`` but not ``/v1/completions``), so ``wave.jsonl`` becomes one file per pair,
``wave.<model>.<endpoint>.jsonl`` (:func:`file_for`). A request whose last answer was a client error (HTTP 4xx,
recorded by ``read_in``) is held back, not written again, unless ``retry_failed``: it would fail the same way.
"""
from __future__ import annotations

import contextvars
import json
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


class Deferred(Exception):
    """A server call was written to the batch file instead of being sent."""


ENDPOINTS = {"/chat/completions": "chat", "/completions": "completions"}
VLLM_RUN_BATCH = {"chat"}     # the endpoints `vllm run-batch` answers (of those creval writes)


def file_for(path: str | Path, model: str, endpoint: str) -> Path:
    """The batch file of one (model, endpoint) pair: ``wave.jsonl`` -> ``wave.<model>.<endpoint>.jsonl``
    (a model name's ``/`` and spaces become ``_``)."""
    p = Path(path)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"
    return p.with_name(f"{p.stem}.{safe}.{endpoint}{p.suffix or '.jsonl'}")


class BatchOut:
    """The batch files being written (one per model and endpoint): each request once, however many units ask
    it; ``counts`` per file, ``held`` the requests not written again (their last answer was a 4xx: key -> reason)."""

    def __init__(self, path: str | Path, retry_failed: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.retry_failed = retry_failed
        self.ids: set[str] = set()
        self.counts: dict[Path, int] = {}
        self.held: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, cache, key: str, kind: str, path: str, body: dict, meta: dict) -> None:
        with self._lock:
            if key in self.ids or key in self.held:
                return
            before = cache.pending(key)
            failed = (before[1].get("failed") or {}) if before else {}
            status = int(failed.get("status", 0))       # a 4xx, or a 200 whose answer did not parse: held back
            if failed and (400 <= status < 500 or status == 200) and not self.retry_failed:
                self.held[key] = f"HTTP {failed['status']}: {failed.get('reason', '')}"
                return
            self.ids.add(key)
            cache.put_pending(key, kind, meta)
            target = file_for(self.path, str(body.get("model", "")), ENDPOINTS.get(path, path.strip("/")))
            with open(target, "a" if target in self.counts else "w") as f:     # a rerun starts each file afresh
                f.write(json.dumps({"custom_id": key, "method": "POST", "url": "/v1" + path, "body": body},
                                   ensure_ascii=False) + "\n")
            self.counts[target] = self.counts.get(target, 0) + 1

    @property
    def written(self) -> int:
        return len(self.ids)

    def lines(self) -> list[str]:
        """One line per file written (with what can answer it), then the requests held back with their reasons."""
        out = []
        for f, n in sorted(self.counts.items()):
            endpoint = f.stem.rsplit(".", 1)[-1]
            engines = "any OpenAI-style Batch API or `vllm run-batch`" if endpoint in VLLM_RUN_BATCH else \
                "OpenAI's Batch API (not `vllm run-batch`: it has no /v1/completions)"
            out.append(f"  {f}: {n} requests to /v1/{endpoint.replace('chat', 'chat/completions')} ({engines})")
        if self.held:
            out.append(f"  {len(self.held)} requests held back (their answer was a client error; --batch-retry-failed "
                       f"writes them again):")
            out += [f"    {k}: {why}" for k, why in sorted(self.held.items())[:20]]
        return out


_ACTIVE: contextvars.ContextVar[BatchOut | None] = contextvars.ContextVar("creval_batch_out", default=None)


@contextmanager
def batch_out(path: str | Path, retry_failed: bool = False) -> Iterator[BatchOut]:
    """Write uncached server requests to files named after ``path`` instead of sending them (see the module doc)."""
    out = BatchOut(path, retry_failed)
    token = _ACTIVE.set(out)
    try:
        yield out
    finally:
        _ACTIVE.reset(token)


def active() -> BatchOut | None:
    return _ACTIVE.get()
