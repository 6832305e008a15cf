"""Requests for one local model, from many units at once, gathered while the model is busy and run as one batch.

Units run in threads (:mod:`creval.core.units`). A local model computes one batch at a time, so while it is busy
the other units' requests queue up here; the next caller to lead runs every queued request of its group (same
verb and settings) as one batch and hands each caller its own results. This is flat combining: there is no
worker thread, a caller does the work. The lock is the process's local-compute
lock (:data:`creval.core.cache.LOCAL_COMPUTE`): it guards the model, not the unit.

The results of a deterministic verb (greedy decoding, choice scores, log-likelihoods, labels, embeddings) do
not depend on which requests shared its batch, up to float rounding of padded rows; the cache keeps whatever was
computed first, so a run reads back the same records whatever the batching was.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

from creval.core.cache import LOCAL_COMPUTE

UNLOCKED = contextlib.nullcontext()
"""The lock a gathering backend hands :func:`creval.core.cache.cached_batch`: none (the gatherer takes the
local-compute lock itself, after queueing, so waiting callers wait in its queue and not outside it)."""


OFF = ("0", "false", "no", "off")


class Switch:
    """A backend's ``GATHERS``: whether it batches requests across units, read from the environment variable
    ``env`` (unset: ``default``; else on unless it says ``0``/``false``/``no``/``off``) whenever it is read, on
    the class (as
    :func:`creval.models.width.width` reads it, nothing loaded) or on an instance."""

    def __init__(self, env: str, default: bool = True):
        self.env, self.default = env, default

    def __get__(self, obj, owner=None) -> bool:
        said = os.environ.get(self.env, "").strip().lower()
        return self.default if not said else said not in OFF


@dataclass
class _Ticket:
    group: Hashable
    items: list
    done: bool = False
    result: list | None = None
    error: BaseException | None = None

    def outcome(self) -> list:
        if self.error is not None:
            raise self.error
        return list(self.result or [])


@dataclass
class Tally:
    """What a gatherer did: ``batches`` run and the ``requests`` (tickets) and ``items`` in each."""
    requests: list[int] = field(default_factory=list)
    items: list[int] = field(default_factory=list)

    @property
    def batches(self) -> int:
        return len(self.requests)

    def per_batch(self) -> float:
        """Mean requests per batch (1.0: nothing was gathered)."""
        return sum(self.requests) / len(self.requests) if self.requests else 0.0


class Gatherer:
    """``gatherer(group, items) -> results``: ``run(group, items) -> results`` (same order, same length) over
    this call's items and every other waiting call's items of the same ``group``, at most ``limit`` items a
    batch (a single call larger than that still runs whole).

    One caller at a time leads: it takes the queued calls of its group and runs them under ``lock`` while the
    others wait for their results (not for the lock, so they leave as soon as their batch is done). A leader first
    lingers up to ``linger`` seconds until as many calls of its group have queued as its last batch held: the
    units of the last batch come back one by one (each stores its results first), and without the wait the
    first to return would run alone. A caller already holding ``lock`` (a local computation inside another)
    runs its own items at once.

    ``stream(group, feed)``, where given (for the groups ``streams(group)`` accepts), runs a group continuously
    instead: the leader's :class:`Feed` hands it the batch's requests, then any request of the group that queues
    while it runs (the next turn of a unit whose reply it just finished), and lets it finish each request on its own,
    so a caller leaves as soon as its own items are done and its next request joins the running batch."""

    def __init__(self, run: Callable[[Hashable, list], Sequence[Any]], *, limit: int = 256, lock=LOCAL_COMPUTE,
                 linger: float = 0.01, stream: Callable[[Hashable, "Feed"], None] | None = None,
                 streams: Callable[[Hashable], bool] = lambda group: True):
        self.run, self.limit, self.lock, self.linger = run, max(1, int(limit)), lock, linger
        self.stream, self.streams = stream, streams
        self.tally = Tally()
        self._cv = threading.Condition()
        self._queue: list[_Ticket] = []
        self._busy = False
        self._expected: dict[Hashable, int] = {}

    def __call__(self, group: Hashable, items: Sequence[Any]) -> list:
        ticket = _Ticket(group, list(items))
        if not ticket.items:
            return []
        if getattr(self.lock, "_is_owned", lambda: False)():
            self._serve([ticket])
            return ticket.outcome()
        with self._cv:
            self._queue.append(ticket)
            self._cv.notify_all()                    # a lingering leader may be waiting for this call
            while not ticket.done and self._busy:
                self._cv.wait()
            if ticket.done:
                return ticket.outcome()
            self._busy = True
            self._wait_for_company(group)
            mine = self._take(ticket)
        try:
            with self.lock:
                self._serve(mine)
        finally:
            with self._cv:
                self._busy = False
                self._cv.notify_all()
        return ticket.outcome()

    def _wait_for_company(self, group: Hashable) -> None:
        """(Holding the condition) wait up to ``linger`` until the group's queue is as long as its last batch."""
        deadline = time.monotonic() + self.linger
        while sum(t.group == group for t in self._queue) < self._expected.get(group, 1):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._cv.wait(left)

    def _take(self, first: _Ticket) -> list[_Ticket]:
        """(Holding the condition) ``first`` and the queued tickets of its group (oldest first) up to ``limit``
        items, out of the queue."""
        mine, size = [first], len(first.items)
        for t in self._queue:
            if t is not first and t.group == first.group and size + len(t.items) <= self.limit:
                mine.append(t)
                size += len(t.items)
        self._queue = [t for t in self._queue if all(t is not m for m in mine)]
        self._expected[first.group] = len(mine)
        return mine

    def _serve(self, tickets: list[_Ticket]) -> None:
        """Run the tickets as one batch; if that fails, each alone, so one bad request fails only its caller."""
        try:
            self._run_batch(tickets)
        except BaseException as err:            # noqa: BLE001 - handed to the caller that owns the request
            if len(tickets) == 1:
                tickets[0].error, tickets[0].done = err, True
                return
            for t in tickets:
                try:
                    self._run_batch([t])
                except BaseException as one:    # noqa: BLE001
                    t.error, t.done = one, True

    def _run_batch(self, tickets: list[_Ticket]) -> None:
        if self.stream is not None and self.streams(tickets[0].group):
            self._run_stream(tickets)
            return
        flat = [it for t in tickets for it in t.items]
        results = list(self.run(tickets[0].group, flat))
        if len(results) != len(flat):
            raise RuntimeError(f"a gathered batch returned {len(results)} results for {len(flat)} requests")
        self.tally.requests.append(len(tickets))
        self.tally.items.append(len(flat))
        at = 0
        for t in tickets:
            t.result, t.done = results[at:at + len(t.items)], True
            at += len(t.items)

    def _run_stream(self, tickets: list[_Ticket]) -> None:
        """Run ``tickets`` and what joins them through ``stream``. If it fails, each request it took and left
        unfinished runs again alone (``run``), so one bad request fails only its caller."""
        feed = Feed(self, tickets)
        try:
            self.stream(tickets[0].group, feed)
        except BaseException:                   # noqa: BLE001 - retried below, the error handed to its caller
            pass
        finally:
            self.tally.requests.append(len(feed.taken))
            self.tally.items.append(sum(len(t.items) for t in feed.taken))
        for t in [t for t in feed.taken if not t.done]:
            try:
                got = list(self.run(t.group, list(t.items)))
                if len(got) != len(t.items):
                    raise RuntimeError(f"a request of {len(t.items)} items got {len(got)} results")
                feed.finish(t, got)
            except BaseException as err:        # noqa: BLE001 - handed to the caller that owns the request
                with self._cv:
                    t.error, t.done = err, True
                    self._cv.notify_all()


class Feed:
    """What a streamed batch reads its requests from (:class:`Gatherer`'s ``stream``), on the leader's thread."""

    def __init__(self, gatherer: Gatherer, tickets: list[_Ticket]):
        self._g = gatherer
        self._first = list(tickets)
        self.taken: list[_Ticket] = []

    def take(self, room: int) -> list[tuple[_Ticket, list]]:
        """``(handle, items)`` of the batch's first requests (on the first call, whatever ``room``), then of the
        requests of its group queued since, oldest first, while their items fit ``room``. Nothing more is taken
        once a request of another group waits: the stream drains and that request's batch runs next."""
        if self._first:
            got, self._first = self._first, []
        else:
            got, size = [], 0
            with self._g._cv:
                queue = self._g._queue
                group = self.taken[0].group
                if any(t.group != group for t in queue):
                    return []
                for t in queue:
                    if size + len(t.items) > room:
                        break
                    got.append(t)
                    size += len(t.items)
                self._g._queue = [t for t in queue if all(t is not m for m in got)]
        self.taken += got
        return [(t, list(t.items)) for t in got]

    def finish(self, handle: _Ticket, results: Sequence[Any]) -> None:
        """Hand a request its results (one per item, in order): its caller returns now."""
        if len(results) != len(handle.items):
            raise RuntimeError(f"a streamed request got {len(results)} results for {len(handle.items)} items")
        with self._g._cv:
            handle.result, handle.done = list(results), True
            self._g._cv.notify_all()
