"""Units: the independent pieces of work of a study, run together by one runner.

A study lists its units (a problem x model x domain x temperature, a pair x judge x criterion, a live NeoCoder
problem, an AUT list...) and the work of one unit (``work(unit) -> {table: rows}``: the chains inside it run
in order). :func:`run_units` executes them:

- **together**: up to ``width`` units at once in threads; a server's requests from all of them go out
  through its spec's one shared in-flight budget (:mod:`creval.models.endpoint`); local backends serialise
  on the process's local-compute lock, so the width only matters for servers;
- **resumable per unit**: each finished unit's rows and usage are appended (fsync) to
  ``units/<name>.jsonl`` in the run folder the moment it ends; a rerun skips them;
- **nothing lost**: a unit that fails is recorded with its reason in ``units/<name>.failed.jsonl`` while every
  other unit finishes (its calls made so far are in the cache); the runner then raises :class:`UnitsFailed`
  and the next run retries only the failed units;
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

from creval.core.deferral import Deferred, active
from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.core.ledger import LEDGER
from creval.core.runs import jsonable


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
    made since the block began would pass ``usd`` (``None``: no limit)."""

    def __init__(self, usd: float | None):
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


def run_units(root: str | Path, name: str, units: Sequence[Unit], work: Callable[[Unit], dict[str, list]], *,
              width: int = 1, desc: str = "", progress: bool = True) -> dict[str, list[dict]]:
    """Run ``work`` over ``units`` (see the module doc); ``{table: rows}`` in unit order."""
    from tqdm.auto import tqdm

    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"units of {name}: key {dup!r} appears twice")
    folder = Path(root) / "units"
    folder.mkdir(parents=True, exist_ok=True)
    done_file, failed_file = folder / f"{name}.jsonl", folder / f"{name}.failed.jsonl"
    wanted = set(keys)
    done = {r["unit"]: r for r in read_jsonl(done_file) if r.get("unit") in wanted}
    todo = [u for u in units if u.key not in done]
    failed: dict[str, str] = {}
    waiting: list[str] = []
    lock = threading.Lock()

    def one(u: Unit) -> None:
        t0 = time.perf_counter()
        with LEDGER.collect(keep=False) as tally:
            tables = _plain(work(u) or {})
        row = {"unit": u.key, "tables": tables, "usage": tally.summary()["total"],
               "seconds": round(time.perf_counter() - t0, 3)}
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with lock:
            with open(done_file, "a") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            done[u.key] = row
        with _SPENT_LOCK:
            _SPENT["usd"] += row["usage"]["cost_usd"]

    if todo:
        limit = _MAX_COST.get()
        bar = tqdm(total=len(units), initial=len(units) - len(todo), desc=desc or name, unit="unit",
                   disable=not progress, leave=False)
        stopped = False
        with concurrent.futures.ThreadPoolExecutor(max(1, int(width)), thread_name_prefix=f"unit-{name}") as ex:
            pending: dict[concurrent.futures.Future, Unit] = {}
            queue = list(todo)
            costs: list[float] = []
            try:
                while queue or pending:
                    while queue and len(pending) < max(1, int(width)):
                        if limit is not None:
                            per_unit = max(costs) if costs else 0.0
                            if spent() + per_unit * (len(pending) + 1) > limit:
                                stopped = True
                                queue = []
                                break
                        u = queue.pop(0)
                        ctx = contextvars.copy_context()
                        pending[ex.submit(ctx.run, one, u)] = u
                    if not pending:
                        break
                    finished, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for f in finished:
                        u = pending.pop(f)
                        err = f.exception()
                        if isinstance(err, Deferred):          # its next request is in the batch file
                            waiting.append(u.key)
                        elif err is not None:
                            failed[u.key] = f"{type(err).__name__}: {err}"
                            with lock, open(failed_file, "a") as fh:
                                fh.write(json.dumps({"unit": u.key, "error": failed[u.key], "at": time.time()}) + "\n")
                        else:
                            costs.append(done[u.key]["usage"]["cost_usd"])
                        bar.update(1)
                        if failed:
                            bar.set_postfix(failed=len(failed))
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
            finally:
                bar.close()
        if failed:
            first = next(iter(failed.items()))
            raise UnitsFailed(f"{len(failed)} of {len(units)} units of {name} failed (first: {first[0]}: {first[1]}); "
                              f"the other {len(units) - len(failed)} are kept",
                              f"see {failed_file}; fix the cause and rerun: only the failed units run again")
        if waiting:
            batch = active()
            raise WaveWritten(f"{name}: {len(waiting)} of {len(units)} units wait for the answers of requests written "
                              f"to {batch.path if batch else 'a batch file'}",
                              "answer that file with a batch engine, then rerun with --batch-in <its output file> "
                              "(and --batch-out <a new file> for the next wave)")
        if stopped:
            raise BudgetReached(f"{name}: stopped before passing the spending limit of ${limit:.2f} "
                                f"(${spent():.2f} spent; {len(units) - len(done)} units left)",
                                "rerun with a higher --max-cost to go on: finished units are kept")
    out: dict[str, list[dict]] = {}
    for k in keys:
        for table, rows in done[k]["tables"].items():
            out.setdefault(table, []).extend(rows)
    return out


def unit_usage(root: str | Path, name: str) -> dict[str, dict]:
    """Each finished unit's own calls, tokens and cost (``units/<name>.jsonl``)."""
    return {r["unit"]: r["usage"] for r in read_jsonl(Path(root) / "units" / f"{name}.jsonl")}


def width(*models: str) -> int:
    """How many units to run at once: the largest in-flight budget among the named models that are servers
    (their requests overlap), else 1 (a local model computes one batch at a time anyway)."""
    from creval.models.registry import get_spec
    best = 1
    for m in models:
        if not m:
            continue
        spec = get_spec(m)
        if spec.backend == "openai":
            best = max(best, int(spec.concurrency))
    return best
