"""One in-flight budget per served model, shared by every unit and study of the process.

An :class:`Endpoint` (one per model spec: its name, ``base_url`` list and key) owns a persistent HTTP client
on one background event loop, and an :class:`AdaptiveLimit`: at most ``spec.concurrency`` requests in flight;
a 429 or 503 halves the limit (never below 1) and every ``limit`` successes in a row add one back, up to the
spec's value (additive increase, multiplicative decrease, as TCP and inspect's adaptive connections do).
Several ``base_url``s are replicas: each request goes to the one with the fewest requests in flight.
The budget never enters a call's identity: a run at concurrency 64 reuses the cache of a run at 1.

Callers submit from any thread (``submit``) and get a :class:`concurrent.futures.Future`; the loop and the
clients live as long as the process (closed at exit).
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from typing import Any, Awaitable, Callable

import httpx


def loop() -> asyncio.AbstractEventLoop:
    """The process's background event loop (started on first use, in a daemon thread)."""
    return ENDPOINTS.loop()


def submit(coro: Awaitable) -> concurrent.futures.Future:
    """Run ``coro`` on the background loop; its future."""
    return asyncio.run_coroutine_threadsafe(coro, loop())


class AdaptiveLimit:
    """At most ``limit`` holders at once; ``limit`` moves between 1 and ``ceiling`` (see the module doc)."""

    def __init__(self, ceiling: int):
        self.ceiling = max(1, int(ceiling))
        self.limit = self.ceiling
        self.in_flight = 0
        self.peak = 0
        self._streak = 0
        self._cond: asyncio.Condition | None = None

    def _c(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self) -> None:
        async with self._c():
            await self._c().wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    async def release(self, outcome: str = "ok") -> None:
        """``outcome``: ``ok`` (a reply), ``busy`` (429/503: back off), or ``other`` (neither)."""
        async with self._c():
            self.in_flight -= 1
            if outcome == "busy":
                self.limit, self._streak = max(1, self.limit // 2), 0
            elif outcome == "ok":
                self._streak += 1
                if self._streak >= self.limit and self.limit < self.ceiling:
                    self.limit, self._streak = self.limit + 1, 0
            self._c().notify_all()


class Endpoint:
    """The shared client and budget of one served model (see the module doc)."""

    def __init__(self, urls: tuple[str, ...], headers: dict, concurrency: int, timeout: float):
        self.urls, self.headers, self.timeout = urls, headers, timeout
        self.budget = AdaptiveLimit(concurrency)
        self.replica_load = {u: 0 for u in urls}
        self.open_client = None

    def client(self):
        if self.open_client is None:
            # no redirects followed: a key is never re-sent to wherever a server points
            self.open_client = httpx.AsyncClient(timeout=self.timeout, headers=self.headers, follow_redirects=False,
                                             limits=httpx.Limits(max_connections=None, max_keepalive_connections=256))
        return self.open_client

    def pick(self) -> str:
        """The replica with the fewest requests in flight (the first on a tie)."""
        return min(self.urls, key=lambda u: self.replica_load[u])

    async def post(self, path: str, body: dict, attempt: Callable[[Any], Awaitable[Any]] | None = None):
        """POST ``body`` to ``path`` on the least-loaded replica inside the budget; returns the response."""
        await self.budget.acquire()
        url = self.pick()
        self.replica_load[url] += 1
        outcome = "other"
        try:
            r = await self.client().post(f"{url}{path}", json=body)
            outcome = "ok" if r.status_code == 200 else "busy" if r.status_code in (429, 503) else "other"
            return r
        finally:
            self.replica_load[url] -= 1
            await self.budget.release(outcome)


class Endpoints:
    """The process's background event loop and its endpoints, one per key (made on first use, kept while the
    process lives); :meth:`reset` closes the clients and stops the loop (also at exit)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.by_key: dict[tuple, Endpoint] = {}

    def loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.event_loop is None or self.event_loop.is_closed():
                lp = asyncio.new_event_loop()
                threading.Thread(target=lp.run_forever, name="creval-http", daemon=True).start()
                self.event_loop = lp
            return self.event_loop

    def get(self, key: tuple, make: Callable[[], Endpoint]) -> Endpoint:
        with self.lock:
            if key not in self.by_key:
                self.by_key[key] = make()
            return self.by_key[key]

    def reset(self) -> None:
        """Close every endpoint's client, stop the loop, forget them all (best effort)."""
        lp = self.event_loop
        if lp is not None and not lp.is_closed():
            for ep in list(self.by_key.values()):
                if ep.open_client is not None:
                    try:
                        submit(ep.open_client.aclose()).result(timeout=2)
                    except Exception:   # noqa: BLE001 - closing is best effort
                        pass
            lp.call_soon_threadsafe(lp.stop)
        with self.lock:
            self.by_key.clear()
            self.event_loop = None


ENDPOINTS = Endpoints()
atexit.register(ENDPOINTS.reset)


def endpoint(key: tuple, urls: tuple[str, ...], headers: dict, concurrency: int, timeout: float) -> Endpoint:
    """The process's one :class:`Endpoint` for ``key`` (created on first use)."""
    return ENDPOINTS.get(key, lambda: Endpoint(urls, headers, concurrency, timeout))


def peak_in_flight() -> dict[str, int]:
    """The most requests each endpoint had in flight at once in this process (for the run summary)."""
    return {f"{k[0]} at {','.join(k[1])}": ep.budget.peak for k, ep in ENDPOINTS.by_key.items()}
