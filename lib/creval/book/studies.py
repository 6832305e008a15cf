"""Run studies in dependency order, each with its wall time and calls: the first half of ``creval book``
and all of ``creval run``. The chapters then only read the records (``records(cfg)`` finds them finished)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from creval.core.ledger import LEDGER, Ledger
from creval.studies.registry import Study, in_order


def start_state(run_dir: Path) -> str:
    """What a run folder held before this run: ``finished`` (read back, nothing to do), ``resumed`` (an
    interrupted run's records are kept and only the rest is computed) or ``new``."""
    from creval.studies.contract import is_finished_dir
    if is_finished_dir(run_dir):
        return "finished"
    return "resumed" if run_dir.is_dir() and any(run_dir.glob("*.jsonl")) else "new"


def run_study(study: Study, params: dict, where: str = "the parameters") -> dict:
    """Run one study on ``params`` (resumable; a finished run is left as it is); its status row."""
    cfg = study.make_config(params, where=where)
    state = start_state(cfg.run_dir)
    mark, t0 = LEDGER.mark(), time.time()
    error = None
    try:
        folder: Path | None = study.run(cfg)
    except KeyboardInterrupt:
        raise
    except Exception as e:            # noqa: BLE001 - one study failing must not hide the others' results
        from creval.core.errors import CrevalError
        if not isinstance(e, CrevalError):
            import traceback
            traceback.print_exc(file=sys.stderr)
        folder, error = cfg.run_dir, f"{type(e).__name__}: {e}"
    usage = Ledger.summarize(LEDGER.since(mark))
    return {"study": study.name, "state": state, "run_dir": str(folder), "run_id": cfg.run_id,
            "seconds": round(time.time() - t0, 2),
            "error": error, "usage": usage["total"], "by_kind_model": usage["by_kind_model"],
            "sandbox_runs": sum(v["calls_made"] for k, v in usage["by_kind_model"].items() if k.startswith("sandbox:"))}


def run_studies(params: dict, names=None, where: str = "the parameters") -> list[dict]:
    """Run the studies named (default: all) and those they read, upstream first; a study whose upstream
    failed is skipped with that reason."""
    rows: list[dict] = []
    failed: set[str] = set()
    for s in in_order(names):
        bad = [u for u in s.reads if u in failed]
        if bad:
            rows.append({"study": s.name, "run_dir": None, "seconds": 0.0, "usage": Ledger.summarize([])["total"],
                         "error": f"skipped: it reads {bad[0]}, which failed", "sandbox_runs": 0})
            failed.add(s.name)
            continue
        print(f"== study {s.name}", file=sys.stderr, flush=True)
        row = run_study(s, params, where)
        rows.append(row)
        if row["error"]:
            failed.add(s.name)
    return rows


def summary_line(row: dict) -> str:
    u = row["usage"]
    state = {"finished": " (already finished: read back)", "resumed": " (resumed an interrupted run)"}.get(
        row.get("state", ""), "")
    return (f"{row['study']}: {'FAILED ' + row['error'] if row['error'] else 'ok'}{state} in {row['seconds']:.1f} s; "
            f"calls {u['calls_made']} made, {u['cache_hits']} from cache; sandbox runs {row.get('sandbox_runs', 0)}; "
            f"tokens in/out {u['input_tokens']}/{u['output_tokens']}; cost ${u['cost_usd']:.4f}; "
            f"records {row['run_dir']}")


def slowest_phases(rows: list[dict], k: int = 5) -> list[dict]:
    """The ``k`` phases (study x call kind x model) that spent the most seconds in calls made (not served from
    cache): where a faster backend, batching or a smaller profile would pay."""
    out = [{"study": r["study"], "phase": key, "seconds": round(v["seconds"], 1), "calls": v["calls_made"],
            "tokens in/out": f"{v['input_tokens']}/{v['output_tokens']}"}
           for r in rows for key, v in (r.get("by_kind_model") or {}).items()]
    return sorted(out, key=lambda x: -x["seconds"])[:k]


def phases_lines(rows: list[dict], k: int = 5) -> list[str]:
    slow = [p for p in slowest_phases(rows, k) if p["seconds"] > 0]
    return [f"slowest phase: {p['study']} · {p['phase']}: {p['seconds']:.1f} s in {p['calls']} calls "
            f"(tokens {p['tokens in/out']})" for p in slow]
