"""Requests written to a batch file instead of sent (``creval run --batch-out FILE``).

Inside ``with batch_out(path):`` a server call whose result is not cached is not sent: its request is
appended to ``path`` in the OpenAI batch input format (one JSON object a line: ``custom_id``, ``method``,
``url``, ``body``), with ``custom_id`` the call's cache key, and what is needed to read its answer back is kept
in the call cache's ``pending`` table; the call raises :class:`Deferred`. The unit that made it stops there
(the unit runner counts it as waiting, not failed) and resumes on the next run, once
:func:`creval.models.batchfile.read_in` has put the engine's answers into the cache under those keys: each run
advances every chain by one wave. The same file works with OpenAI's and other providers' Batch APIs,
``vllm run-batch`` and Ray Data LLM.
"""
from __future__ import annotations

import contextvars
import json
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


class Deferred(Exception):
    """A server call was written to the batch file instead of being sent."""


class BatchOut:
    """The batch file being written: each request once, however many units ask it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        self.ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, cache, key: str, kind: str, path: str, body: dict, meta: dict) -> None:
        with self._lock:
            if key in self.ids:
                return
            self.ids.add(key)
            cache.put_pending(key, kind, meta)
            with open(self.path, "a") as f:
                f.write(json.dumps({"custom_id": key, "method": "POST", "url": "/v1" + path, "body": body},
                                   ensure_ascii=False) + "\n")

    @property
    def written(self) -> int:
        return len(self.ids)


_ACTIVE: contextvars.ContextVar[BatchOut | None] = contextvars.ContextVar("creval_batch_out", default=None)


@contextmanager
def batch_out(path: str | Path) -> Iterator[BatchOut]:
    """Write uncached server requests to ``path`` instead of sending them (see the module doc)."""
    out = BatchOut(path)
    token = _ACTIVE.set(out)
    try:
        yield out
    finally:
        _ACTIVE.reset(token)


def active() -> BatchOut | None:
    return _ACTIVE.get()
