"""Run studies in dependency order, each with its wall time and calls: the first half of ``creval book``
and all of ``creval run``. The chapters then only read the records (``STUDY.records(cfg)`` finds them finished)."""
from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER, Ledger
from creval.models import throughput
from creval.studies.contract import is_finished_dir
from creval.studies.registry import Study, in_order


def start_state(run_dir: Path) -> str:
    """What a run folder held before this run: ``finished`` (read back, nothing to do), ``resumed`` (an
    interrupted run's records are kept and only the rest is computed) or ``new``."""
    if is_finished_dir(run_dir):
        return "finished"
    return "resumed" if run_dir.is_dir() and any(run_dir.glob("*.jsonl")) else "new"


def run_study(study: Study, params: dict, where: str = "the parameters") -> dict:
    """Run one study on ``params`` (resumable; a finished run is left as it is); its status row."""
    cfg = study.make_config(params, where=where)
    state = start_state(cfg.run_dir)
    t0 = time.time()
    error = None
    try:
        with LEDGER.collect(keep=False) as tally:
            folder: Path | None = study.ensure(cfg)
    except KeyboardInterrupt:
        raise
    except Exception as e:            # noqa: BLE001 - one study failing must not hide the others' results
        if not isinstance(e, CrevalError):
            traceback.print_exc(file=sys.stderr)
        folder, error = cfg.run_dir, f"{type(e).__name__}: {e}"
    usage = tally.summary()
    return {"study": study.name, "state": state, "run_dir": str(folder), "run_id": cfg.run_id,
            "seconds": round(time.time() - t0, 2),
            "error": error, "usage": usage["total"], "by_kind_model": usage["by_kind_model"],
            "sandbox_runs": sum(v["calls_made"] for k, v in usage["by_kind_model"].items() if k.startswith("sandbox:"))}


def run_studies(params: dict, names=None, where: str = "the parameters", done=None) -> list[dict]:
    """Run the studies named (default: all) and those they read, upstream first; a study whose upstream
    failed is skipped with that reason. ``done(row)`` is called as each study ends (the book's time left)."""
    rows: list[dict] = []
    failed: set[str] = set()
    for s in in_order(names, params):
        bad = [u for u in s.reads if u in failed]
        if bad:
            nothing = Ledger.summarize([])
            rows.append({"study": s.name, "run_dir": None, "seconds": 0.0, "usage": nothing["total"],
                         "by_kind_model": nothing["by_kind_model"], "sandbox_runs": 0,
                         "error": f"skipped: it reads {bad[0]}, which failed"})
            failed.add(s.name)
        else:
            print(f"== study {s.name}", file=sys.stderr, flush=True)
            row = run_study(s, params, where)
            rows.append(row)
            if row["error"]:
                failed.add(s.name)
        if done is not None:
            done(rows[-1])
    return rows


def summary_line(row: dict) -> str:
    """A study's run in one line (state, time, calls, tokens, cost, folder); a failed study's error follows on
    lines of its own, so the summary is never read as part of the error's ``fix:`` sentence."""
    u = row["usage"]
    state = {"finished": " (already finished: read back)", "resumed": " (resumed an interrupted run)"}.get(
        row.get("state", ""), "")
    line = (f"{row['study']}: {'FAILED' if row['error'] else 'ok'}{state} in {row['seconds']:.1f} s; "
            f"calls {u['calls_made']} made, {u['cache_hits']} from cache; sandbox runs {row.get('sandbox_runs', 0)}; "
            f"tokens in/out {u['input_tokens']}/{u['output_tokens']}; cost ${u['cost_usd']:.4f}; "
            f"records {row['run_dir']}")
    if not row["error"]:
        return line
    return line + "\n" + "\n".join(f"  {x}" for x in str(row["error"]).splitlines())


def slowest_phases(rows: list[dict], k: int = 5) -> list[dict]:
    """The ``k`` phases (study x call kind x model) that spent the most seconds in calls made (not served from
    cache): where a faster backend, batching or a smaller profile would pay. Where the model's own speed on
    this machine is stored (``creval throughput``), each LLM phase also gets ``limit_s``, the least time its
    tokens need at that speed, and ``x_limit``, its seconds over that bound."""
    out = []
    for r in rows:
        for key, v in (r.get("by_kind_model") or {}).items():
            kind, model = key.split(":", 1)
            row = {"study": r["study"], "phase": key, "seconds": round(v["seconds"], 1), "calls": v["calls_made"],
                   "tokens in/out": f"{v['input_tokens']}/{v['output_tokens']}"}
            figures = throughput.load(model) if kind in throughput.PREFILL_KINDS + throughput.GENERATE_KINDS else None
            made_in, made_out = v.get("made_input_tokens", 0), v.get("made_output_tokens", 0)
            ratio = throughput.distance(kind, v["seconds"], made_in, made_out, figures)
            if ratio is not None:
                row["limit_s"] = round(throughput.lower_bound_seconds(kind, made_in, made_out, figures), 1)
                row["x_limit"] = round(ratio, 2)
            out.append(row)
    return sorted(out, key=lambda x: -x["seconds"])[:k]


def measure_slow_models(rows: list[dict], k: int = 5) -> None:
    """Measure (once per data home and machine) the speed of the local models behind the ``k`` slowest LLM
    phases that made calls, so :func:`slowest_phases` can say how far each is from it. A model behind an API
    is never measured here (``creval throughput`` does it on request); a failure only costs the comparison."""
    llm = throughput.PREFILL_KINDS + throughput.GENERATE_KINDS
    seen: set[str] = set()
    for p in slowest_phases(rows, k):
        kind, model = p["phase"].split(":", 1)
        if kind in llm and p["seconds"] > 0 and model not in seen and throughput.load(model) is None:
            seen.add(model)             # a model behind several slow phases is measured, and named, once
            try:
                if throughput.behind_api(model):
                    continue            # never measured here: no line saying it is
                print(f"measuring {model}'s own speed on this machine (once; `creval throughput`)", file=sys.stderr)
                throughput.ensure(model)
            except Exception as e:        # noqa: BLE001 - the comparison is optional, the results are not
                print(f"  not measured: {type(e).__name__}: {e}", file=sys.stderr)


def phases_lines(rows: list[dict], k: int = 5) -> list[str]:
    slow = [p for p in slowest_phases(rows, k) if p["seconds"] > 0]
    return [f"slowest phase: {p['study']} · {p['phase']}: {p['seconds']:.1f} s in {p['calls']} calls "
            f"(tokens {p['tokens in/out']})"
            + (f"; {p['x_limit']:.1f}x the {p['limit_s']:.0f} s this machine's measured speed allows"
               if "x_limit" in p else "")
            for p in slow]
