"""One content-addressed cache for every expensive call (generation, NLI pair, judge turn, embedding,
log-likelihood).

A call is identified by the SHA-256 of its canonical JSON description: the model's identity (only the
fields that change output), the request, and for sampled generations the sample index. Each result is
committed to SQLite (WAL mode) the moment it exists, so a run killed at any point resumes with every
finished call served from here, and concurrent writers (threads or processes) are safe.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from creval.core import paths
from creval.core.deferral import Deferred, active
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER, CallRecord


def canonical(obj: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, floats as repr."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def make_key(kind: str, **parts: Any) -> str:
    """The cache key of a call of ``kind`` described by ``parts``."""
    return hashlib.sha256(canonical({"kind": kind, **parts}).encode()).hexdigest()


class CallCache:
    """A persistent key -> JSON value store. Thread- and process-safe; crash-safe per call."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else paths.cache_file()
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for attempt in range(200):         # another thread or process may be creating it at this moment
                try:
                    with self._conn() as c:
                        c.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, kind TEXT, value TEXT, "
                                  "created REAL)")
                        c.execute("CREATE TABLE IF NOT EXISTS pending (key TEXT PRIMARY KEY, kind TEXT, meta TEXT, "
                                  "created REAL)")
                        c.execute("CREATE TABLE IF NOT EXISTS batch_costs (key TEXT PRIMARY KEY, cost REAL)")
                    break
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or attempt == 199:
                        raise
                    time.sleep(0.05)
        except sqlite3.OperationalError as e:
            raise CrevalError(f"cannot create the call cache {self.path} ({e})",
                              "make its folder writable, or set CREVAL_CACHE / CREVAL_HOME"
                              " to a writable place") from None
        except sqlite3.DatabaseError as e:
            raise CrevalError(f"the call cache {self.path} is not a usable SQLite database ({e})",
                              "move that file away (or point CREVAL_CACHE at a new file);"
                              " it is rebuilt on the next run") from None
        except OSError as e:
            raise CrevalError(f"cannot create the call cache {self.path} ({e})",
                              "make its folder writable, or set CREVAL_CACHE / CREVAL_HOME"
                              " to a writable place") from None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Any | None:
        row = self._conn().execute("SELECT value FROM calls WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, value FROM calls WHERE key IN ({','.join('?' * len(chunk))})"
            found.update({k: json.loads(v) for k, v in self._conn().execute(q, chunk)})
        return found

    def put(self, key: str, kind: str, value: Any) -> None:
        self._conn().execute("INSERT OR REPLACE INTO calls VALUES (?,?,?,?)",
                             (key, kind, canonical(value), time.time()))

    def put_many(self, items: list[tuple[str, str, Any]]) -> None:
        conn = self._conn()
        conn.execute("BEGIN")
        conn.executemany("INSERT OR REPLACE INTO calls VALUES (?,?,?,?)",
                         [(k, kind, canonical(v), time.time()) for k, kind, v in items])
        conn.execute("COMMIT")

    def put_new(self, key: str, kind: str, value: Any) -> bool:
        """Store ``value`` unless ``key`` is already cached (never overwrites); True if stored."""
        cur = self._conn().execute("INSERT OR IGNORE INTO calls VALUES (?,?,?,?)",
                                   (key, kind, canonical(value), time.time()))
        return cur.rowcount == 1

    def put_pending(self, key: str, kind: str, meta: dict) -> None:
        """Remember how to read back the answer of a request written to a batch file (core/deferral.py)."""
        self._conn().execute("INSERT OR REPLACE INTO pending VALUES (?,?,?,?)",
                             (key, kind, canonical(meta), time.time()))

    def pending(self, key: str) -> tuple[str, dict] | None:
        row = self._conn().execute("SELECT kind, meta FROM pending WHERE key=?", (key,)).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def put_batch_cost(self, key: str, cost: float) -> None:
        """What the answer stored under ``key`` cost through a batch engine: the first run that reads it bills it
        (:func:`cached_batch`), once."""
        self._conn().execute("INSERT OR REPLACE INTO batch_costs VALUES (?,?)", (key, float(cost)))

    def take_batch_costs(self, keys: list[str]) -> dict[str, float]:
        """The batch costs of ``keys`` not billed yet, removed as they are read (each is billed once)."""
        out: dict[str, float] = {}
        if self._conn().execute("SELECT 1 FROM batch_costs LIMIT 1").fetchone() is None:
            return out                          # the usual case: a read, no write lock taken
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"DELETE FROM batch_costs WHERE key IN ({','.join('?' * len(chunk))}) RETURNING key, cost"
            out.update(dict(self._conn().execute(q, chunk).fetchall()))
        return out

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def counts(self) -> dict[str, int]:
        return dict(self._conn().execute("SELECT kind, COUNT(*) FROM calls GROUP BY kind").fetchall())


_default: CallCache | None = None
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> CallCache:
    """The process-wide cache at ``paths.cache_file()`` (re-opened if ``CREVAL_CACHE`` changes)."""
    global _default
    with _DEFAULT_LOCK:
        if _default is None or _default.path != paths.cache_file():
            _default = CallCache()
        return _default


LOCAL_COMPUTE = threading.RLock()
"""Held while a local backend (llama.cpp, transformers, a cross-encoder, an embedder) computes: units run in
threads, local weights are not thread-safe and the CPU is the limit anyway. Server calls never take it."""


def cached_batch(kind: str, identity: dict, items: list[Any], describe, compute, *, model: str = "",
                 usage=None, cache: CallCache | None = None, encode=lambda r: r, decode=lambda v: v,
                 tags: list[dict] | None = None, keep=lambda r: True, stream: bool = False,
                 offline=None, lock=None) -> list[Any]:
    """Answer ``items`` from the cache, computing only the misses, in one batch, then storing them.

    The single cache mechanism behind every expensive call.
    - ``describe(item) -> dict``: what identifies the call besides ``identity`` (the model's output-relevant spec).
    - ``compute(missing_items) -> results``: one batched call for all misses (same order), run while holding
      ``lock`` (default :data:`LOCAL_COMPUTE`; the sandbox, whose programs run in their own processes, has its
      own). With ``stream=True`` it is ``compute(missing_items, done)`` instead, calls
      ``done(j, result)`` as each result arrives (a server's concurrent requests) and holds no lock: each
      result is stored the moment it arrives, so when one request fails for good (``compute`` raises after
      the others finished) every other result is kept.
    - ``usage(result) -> (input_tokens, output_tokens)`` for the ledger; ``encode``/``decode`` map results to JSON.
    - ``keep(result)``: whether a computed result may be stored (False: returned but asked again next time).
    - ``tags[i]`` (optional): ledger tags of item ``i``'s record, over those of the enclosing ``LEDGER.tagged``.
    - ``offline(missing_items) -> [(path, body, meta)]`` (servers): the HTTP requests of the misses, for a batch
      file: inside :func:`creval.core.deferral.batch_out` they are written there and :class:`Deferred` raised.
    Every item, hit or miss, is recorded in :data:`creval.core.ledger.LEDGER` (a miss asked twice in one
    batch is computed and recorded once, with the tags of its first occurrence; a miss another thread is
    computing at that moment is awaited and recorded as a hit).
    """
    cache = cache if cache is not None else default_cache()
    if tags is not None and len(tags) != len(items):
        raise ValueError(f"{kind}: {len(tags)} tag sets for {len(items)} items")
    tag = (lambda i: dict(tags[i] or {})) if tags is not None else (lambda i: {})
    keys = [make_key(kind, model=identity, call=describe(it)) for it in items]
    found = cache.get_many(list(dict.fromkeys(keys)))
    out: list[Any] = [None] * len(items)
    missing: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        if k in found:
            out[i] = decode(found[k])
        else:
            missing.setdefault(k, []).append(i)
    rec_usage = usage or (lambda r: (0, 0))
    billed = cache.take_batch_costs(list(found)) if found else {}
    for i, k in enumerate(keys):
        if k in found:
            tin, tout = rec_usage(out[i])
            if k in billed:        # answered by a batch engine: the first read is the call made, at the batch price
                LEDGER.add(CallRecord(kind, model, False, tin, tout, billed.pop(k), 0.0, {**tag(i), "via": "batch"}, k))
            else:
                LEDGER.add(CallRecord(kind, model, True, tin, tout, 0.0, 0.0, tag(i), k))
    if not missing:
        return out
    # A call another thread is computing right now is awaited, not computed twice (units run together).
    mine, theirs, owned = _claim(cache, missing)
    try:
        if mine:
            _compute(kind, cache, mine, items, compute, out, stream=stream, offline=offline, encode=encode,
                     decode=decode, keep=keep, usage=usage, model=model, tag=tag, lock=lock, owned=owned)
    finally:
        _release(cache, owned, list(owned), None)   # claims left (a failure, a deferral): their waiters ask again
    for k, (fut, idx) in theirs.items():
        value = fut.result()
        if value is None:                 # the other thread failed or deferred it: ask for it ourselves
            again = cached_batch(kind, identity, [items[idx[0]]], describe, compute, model=model, usage=usage,
                                 cache=cache, encode=encode, decode=decode, tags=[tag(idx[0])], keep=keep,
                                 stream=stream, offline=offline, lock=lock)[0]
            for i in idx:
                out[i] = decode(encode(again))
            continue
        tin, tout = rec_usage(decode(value))
        LEDGER.add(CallRecord(kind, model, True, tin, tout, 0.0, 0.0, tag(idx[0]), k))
        for i in idx:
            out[i] = decode(value)
    return out


_CLAIMS: dict[tuple[str, str], concurrent.futures.Future] = {}
_CLAIMS_LOCK = threading.Lock()


def _claim(cache: CallCache, missing: dict[str, list[int]]):
    """Split the misses into ``mine`` (``key -> indices``: this thread computes them) and ``theirs`` (another
    thread is computing them: ``key -> (future of the encoded value, indices)``), and the claims this thread
    now holds (``key -> future``). A thread inside a local computation (holding :data:`LOCAL_COMPUTE`) waits
    on nobody: the other thread may need that lock to finish."""
    if LOCAL_COMPUTE._is_owned():
        return dict(missing), {}, {}
    mine, theirs, owned = {}, {}, {}
    with _CLAIMS_LOCK:
        for k, idx in missing.items():
            f = _CLAIMS.get((str(cache.path), k))
            if f is None:
                owned[k] = _CLAIMS[(str(cache.path), k)] = concurrent.futures.Future()
                mine[k] = idx
            else:
                theirs[k] = (f, idx)
    for k, v in (cache.get_many(list(mine)) if mine else {}).items():   # stored by another thread meanwhile
        f: concurrent.futures.Future = concurrent.futures.Future()
        f.set_result(v)
        theirs[k] = (f, mine.pop(k))
        _release(cache, owned, [k], None)
    return mine, theirs, owned


def _release(cache: CallCache, owned: dict, keys, value_of) -> None:
    """Resolve this thread's claims on ``keys`` with their encoded value (``value_of(key)``, or None: not there)."""
    with _CLAIMS_LOCK:
        futs = []
        for k in keys:
            f = owned.pop(k, None)
            if f is not None and _CLAIMS.get((str(cache.path), k)) is f:
                del _CLAIMS[(str(cache.path), k)]
                futs.append((k, f))
    for k, f in futs:
        f.set_result(value_of(k) if value_of else None)


def _compute(kind, cache, missing, items, compute, out, *, stream, offline, encode, decode, keep, usage, model, tag,
             lock, owned) -> None:
    """Compute the claimed misses (see :func:`cached_batch`): store, record and hand each result out as it comes."""
    order = list(missing.items())
    todo = [items[idx[0]] for _, idx in order]
    rec_usage = usage or (lambda r: (0, 0))
    t0 = time.perf_counter()
    got = [False] * len(order)

    def done(j: int, r: Any, seconds: float | None = None, store: bool = True) -> None:
        k, idx = order[j]
        if got[j]:
            raise RuntimeError(f"{kind}: result {j} delivered twice")
        got[j] = True
        value = encode(r)
        if store and keep(r):
            cache.put(k, kind, value)
        tin, tout = rec_usage(r)
        cost = usage.cost(tin, tout) if hasattr(usage, "cost") else 0.0
        dt = time.perf_counter() - t0 if seconds is None else seconds
        LEDGER.add(CallRecord(kind, model, False, tin, tout, cost, dt, tag(idx[0]), k))
        for n, i in enumerate(idx):
            out[i] = r if n == 0 else decode(value)
        _release(cache, owned, [k], lambda _: json.loads(canonical(value)))

    batch = active()
    if batch is not None and offline is not None:
        for (k, _), (path, body, meta) in zip(order, offline(todo)):
            batch.add(cache, k, kind, path, body, meta)
        raise Deferred(f"{kind}: {len(order)} requests written to {batch.path}")
    if stream:
        compute(todo, done)
        if not all(got):
            raise RuntimeError(f"{kind}: backend answered {sum(got)} of {len(got)} requests")
        return
    with lock if lock is not None else LOCAL_COMPUTE:
        results = list(compute(todo))
    if len(results) != len(order):
        raise RuntimeError(f"{kind}: backend returned {len(results)} results for {len(order)} requests")
    per = (time.perf_counter() - t0) / len(order)
    cache.put_many([(k, kind, encode(r)) for (k, _), r in zip(order, results) if keep(r)])
    for j, r in enumerate(results):
        done(j, r, per, store=False)
