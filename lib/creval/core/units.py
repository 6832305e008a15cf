"""Units: the independent pieces of work of a study (or of a judge run), run together by one runner.

A study lists its units (a problem x model x domain x temperature, a pair x judge x criterion, a live NeoCoder
problem, an AUT list...) and the work of one unit (``work(unit) -> {table: rows}``: the chains inside it run
in order). :func:`run_units` executes them:

- **together**: up to ``width`` units at once in threads (:func:`creval.models.width.width` picks it from the
  models involved); a server's requests from all of them go out
  through its spec's one shared in-flight budget (:mod:`creval.models.endpoint`); a local model computes one
  batch at a time behind the process's local-compute lock, which guards the model, not the unit: a backend that
  gathers (:mod:`creval.models.gather`) runs the requests that queued while it was busy as its next batch, so
  :data:`LOCAL_WIDTH` units in flight keep it fed;
- **resumable per unit**: each finished unit's rows and usage are appended (fsync) to
  ``units/<name>.jsonl`` in the run folder the moment it ends; a rerun skips them;
- **nothing lost**: a unit that fails is recorded with its reason in ``units/<name>.failed.jsonl`` while every
  other unit finishes (its calls made so far are in the cache); the runner then raises :class:`UnitsFailed`
  and the next run retries only the failed units (a unit's failure record goes once it is done);
- **independent of scheduling**: the rows come back in the order of ``units``, whatever finished first, and
  each unit's tokens and cost are its own (a ledger tally per unit, not a process-global slice);
- **in waves through files**: inside :func:`creval.core.deferral.batch_out` a unit whose next server request
  is not cached writes it to the batch file and waits (:class:`WaveWritten` after the others), so each run
  advances every chain by one request;
- **within a budget**: ``max_cost`` (USD, from :func:`spending_limit`) stops starting units once the calls
  made would pass it; the run ends with :class:`BudgetReached` and resumes later.
"""
from __future__ import annotations

import concurrent.futures
import contextvars
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from tqdm.auto import tqdm

from creval.core.deferral import Deferred, active
from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.core.ledger import LEDGER
from creval.core.runs import jsonable

LOCAL_WIDTH = 16
"""Units in flight for a local backend that gathers requests across units (its batches hold their requests)."""
GPU_WIDTH = 64
"""The same on a GPU: one decode step costs about the same for 8 rows as for 256 there (it is bound by kernel
launches, not arithmetic), so more requests per batch is nearly free throughput (docs/performance.md, H100)."""


@dataclass(frozen=True)
class Unit:
    """One independent piece of work: ``key`` names it in the run folder (unique within its runner),
    ``item`` is whatever its work function needs."""
    key: str
    item: Any = None


class UnitsFailed(CrevalError):
    """Some units failed for good; the others' rows and calls are kept."""


class WaveWritten(CrevalError):
    """Units wait for the answers of requests written to a batch file (``--batch-out``); a rerun after
    ``--batch-in`` goes on from there."""


class BudgetReached(CrevalError):
    """The run's spending limit would be passed; what finished is kept, a rerun with a higher limit goes on."""


_MAX_COST: contextvars.ContextVar[float | None] = contextvars.ContextVar("creval_max_cost", default=None)
_SPENT = {"usd": 0.0}
_SPENT_LOCK = threading.Lock()


class spending_limit:
    """``with spending_limit(usd):`` every unit runner inside stops starting units once the cost of the calls
    made since the block began would pass ``usd`` (``None``: no limit).
    A negative or NaN budget is refused here, the one place every command's ``--max-cost`` passes."""

    def __init__(self, usd: float | None):
        if usd is not None and not usd >= 0:          # NaN fails every comparison, so it is caught here too
            raise CrevalError(f"--max-cost {usd} is not a budget: it must be a number of US dollars, 0 or more",
                              "give the most the run may spend (e.g. --max-cost 5), or leave the flag out for "
                              "no limit")
        self.usd = usd

    def __enter__(self):
        self.token = _MAX_COST.set(self.usd)
        with _SPENT_LOCK:
            _SPENT["usd"] = 0.0
        return self

    def __exit__(self, *exc):
        _MAX_COST.reset(self.token)


def spent() -> float:
    """USD of the calls made inside the current :class:`spending_limit` block."""
    return _SPENT["usd"]


def _plain(tables: dict) -> dict:
    """Rows as they read back from disk (records dataclasses become dicts), so a fresh and a resumed run
    return the same values."""
    return json.loads(json.dumps(tables, ensure_ascii=False, default=jsonable))


class UnitRun:
    """The state of one :func:`run_units` call: its files, the finished units' rows, failures and waits."""

    def __init__(self, root: str | Path, name: str, units: Sequence[Unit]):
        keys = [u.key for u in units]
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise ValueError(f"units of {name}: key {dup!r} appears twice")
        folder = Path(root) / "units"
        folder.mkdir(parents=True, exist_ok=True)
        self.name, self.units, self.keys = name, list(units), keys
        self.done_file, self.failed_file = folder / f"{name}.jsonl", folder / f"{name}.failed.jsonl"
        wanted = set(keys)
        self.done = {r["unit"]: r for r in read_jsonl(self.done_file) if r.get("unit") in wanted}
        self.failed: dict[str, str] = {}
        self.waiting: list[str] = []
        self.costs: list[float] = []
        self.stopped = False
        self.lock = threading.Lock()
        self.failed_before = {r.get("unit") for r in read_jsonl(self.failed_file)}
        self.forget_failed(set(self.done))

    def todo(self) -> list[Unit]:
        return [u for u in self.units if u.key not in self.done]

    def do(self, work: Callable[[Unit], dict[str, list]], u: Unit) -> None:
        """Run one unit; its rows, own usage and time appended (fsync) to the done file at once."""
        t0 = time.perf_counter()
        with LEDGER.collect(keep=False) as tally:
            tables = _plain(work(u) or {})
        row = {"unit": u.key, "tables": tables, "usage": tally.summary()["total"],
               "seconds": round(time.perf_counter() - t0, 3)}
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self.lock:
            with open(self.done_file, "a") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            self.done[u.key] = row
        with _SPENT_LOCK:
            _SPENT["usd"] += row["usage"]["cost_usd"]

    def settle(self, u: Unit, err: BaseException | None) -> None:
        """Record how a unit ended: done, waiting for a batch file's answer, or failed (with its reason)."""
        if isinstance(err, Deferred):          # its next request is in the batch file
            self.waiting.append(u.key)
        elif err is not None:
            self.failed[u.key] = f"{type(err).__name__}: {err}"
            with self.lock, open(self.failed_file, "a") as fh:
                fh.write(json.dumps({"unit": u.key, "error": self.failed[u.key], "at": time.time()}) + "\n")
        else:
            self.costs.append(self.done[u.key]["usage"]["cost_usd"])
            self.forget_failed({u.key})

    def forget_failed(self, keys: set[str]) -> None:
        """Drop the failure records of ``keys`` (units now done) from the failed file, so it lists only the
        units still failing."""
        with self.lock:
            if not self.failed_before & keys:
                return
            self.failed_before -= keys
            kept = [r for r in read_jsonl(self.failed_file) if r.get("unit") not in keys]
            if not kept:
                self.failed_file.unlink(missing_ok=True)
                return
            tmp = self.failed_file.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))
            os.replace(tmp, self.failed_file)

    def over_budget(self, limit: float | None, in_flight: int) -> bool:
        """Would one more unit (at the dearest unit's cost so far) pass the spending limit?"""
        if limit is None:
            return False
        per_unit = max(self.costs) if self.costs else 0.0
        return spent() + per_unit * (in_flight + 1) > limit

    def drive(self, work, todo: list[Unit], width: int, limit: float | None, bar) -> None:
        """Keep ``width`` units in flight until none is left (or the budget stops new ones)."""
        with concurrent.futures.ThreadPoolExecutor(width, thread_name_prefix=f"unit-{self.name}") as ex:
            pending: dict[concurrent.futures.Future, Unit] = {}
            queue = list(todo)
            try:
                while queue or pending:
                    while queue and len(pending) < width:
                        if self.over_budget(limit, len(pending)):
                            self.stopped, queue = True, []
                            break
                        u = queue.pop(0)
                        pending[ex.submit(contextvars.copy_context().run, self.do, work, u)] = u
                    if not pending:
                        break
                    finished, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for f in finished:
                        self.settle(pending.pop(f), f.exception())
                        bar.update(1)
                        if self.failed:
                            bar.set_postfix(failed=len(self.failed))
            except BaseException:
                for f in pending:
                    f.cancel()
                raise

    def raise_outcome(self, limit: float | None) -> None:
        """Raise :class:`UnitsFailed`, :class:`WaveWritten` or :class:`BudgetReached` when the run is not whole."""
        n = len(self.units)
        if self.failed:
            first = next(iter(self.failed.items()))
            raise UnitsFailed(f"{len(self.failed)} of {n} units of {self.name} failed (first: {first[0]}: "
                              f"{first[1]}); the other {n - len(self.failed)} are kept",
                              f"see {self.failed_file}; fix the cause and rerun: only the failed units run again")
        if self.waiting:
            batch = active()
            raise WaveWritten(f"{self.name}: {len(self.waiting)} of {n} units wait for the answers of requests "
                              f"written to the batch files named after {batch.path if batch else '--batch-out'}",
                              "answer that file with a batch engine, then rerun with --batch-in <its output file> "
                              "(and --batch-out <a new file> for the next wave)")
        if self.stopped:
            raise BudgetReached(f"{self.name}: stopped before passing the spending limit of ${limit:.2f} "
                                f"(${spent():.2f} spent; {n - len(self.done)} units left)",
                                "rerun with a higher --max-cost to go on: finished units are kept")

    def rows(self) -> dict[str, list[dict]]:
        """``{table: rows}`` of every unit, in the units' order (never the order they finished in)."""
        out: dict[str, list[dict]] = {}
        for k in self.keys:
            for table, rows in self.done[k]["tables"].items():
                out.setdefault(table, []).extend(rows)
        return out


def run_units(root: str | Path, name: str, units: Sequence[Unit], work: Callable[[Unit], dict[str, list]], *,
              width: int = 1, desc: str = "", progress: bool = True) -> dict[str, list[dict]]:
    """Run ``work`` over ``units`` (see the module doc); ``{table: rows}`` in unit order."""
    run = UnitRun(root, name, units)
    todo = run.todo()
    if todo:
        limit = _MAX_COST.get()
        bar = tqdm(total=len(units), initial=len(units) - len(todo), desc=desc or name, unit="unit",
                   disable=not progress, leave=False)
        try:
            run.drive(work, todo, max(1, int(width)), limit, bar)
        finally:
            bar.close()
        run.raise_outcome(limit)
    return run.rows()
