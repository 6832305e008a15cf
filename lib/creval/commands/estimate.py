"""``creval estimate``: what running studies will cost (units, calls, tokens, money, wall time), before any call.

The formulas are :mod:`creval.studies.estimate`'s; this module only gathers the models, their speeds and
prints (or writes JSON)."""
from __future__ import annotations

import json

from creval.book.params import effective_params, load_params
from creval.commands.book import params_path
from creval.models.registry import model_name
from creval.studies.estimate import LOCAL_RATES, ZERO, Range, cost, estimate, local_seconds, reasoning, speed, wall
from creval.studies.registry import STUDIES, in_order


def _fmt(r, unit: str = "", money: bool = False) -> str:
    def one(x: float) -> str:
        if money:
            return f"${x:,.2f}"
        return f"{x:,.0f}{unit}"
    return one(r.lo) if round(r.lo, 2) == round(r.hi, 2) else f"{one(r.lo)}..{one(r.hi)}"


def _hours(r) -> str:
    if r is None:
        return "unknown (give --latency/--tokens-per-s, or extra: {latency_s, tokens_per_s} in the spec)"

    def one(s: float) -> str:
        return f"{s / 3600:.1f} h" if s >= 3600 else (f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s")
    return one(r.lo) if round(r.lo) == round(r.hi) else f"{one(r.lo)}..{one(r.hi)}"


KEYS = ("calls", "prompt", "completion", "reasoning", "cost")


def study_rows(est, speeds) -> dict:
    """One study's figures: per role and model, and in all (JSON-ready)."""
    by: dict[tuple, dict] = {}
    for p in est.parts:
        row = by.setdefault((p.role, p.model), {k: ZERO for k in KEYS})
        for k in ("calls", "prompt", "completion"):
            row[k] = row[k] + getattr(p, k)
        row["reasoning"] = row["reasoning"] + reasoning(p)
        row["cost"] = row["cost"] + cost(p)
    total = {k: sum((r[k] for r in by.values()), ZERO) for k in KEYS}
    local = [{"kind": w.kind, "what": w.what, "items": w.items, "unit": LOCAL_RATES[w.kind][1],
              "seconds": Range(local_seconds(w, "lo"), local_seconds(w, "hi"))} for w in est.local]
    return {"study": est.study, "units": est.units, "by": by, "total": total, "local": local,
            "wall": wall(est, speeds), "notes": est.notes}


def _jsonable(x):
    if isinstance(x, Range):
        return {"min": x.lo, "max": x.hi}
    if isinstance(x, dict):
        return {(f"{k[0]}:{k[1]}" if isinstance(k, tuple) else k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    return x


def cmd_estimate(args) -> int:
    ppath = params_path(args.params)
    params = effective_params(load_params(ppath, args.overrides))
    studies = in_order(args.studies or None)
    ests = [estimate(s.make_config(params, where=str(ppath))) for s in studies]
    models = sorted({p.model for e in ests for p in e.parts})
    speeds = {m: speed(m, args.latency, args.tokens_per_s, args.in_flight) for m in models}
    rows = [study_rows(e, speeds) for e in ests]
    total = {k: sum((r["total"][k] for r in rows), ZERO) for k in KEYS}
    walls = [r["wall"] for r in rows]
    total_wall = None if any(w is None for w in walls) else sum(walls, ZERO)
    if args.json:
        out = {"params": str(ppath), "overrides": args.overrides,
               "speeds": {m: (vars(s) if s else None) for m, s in speeds.items()},
               "studies": rows, "total": {**total, "units": sum(r["units"] for r in rows), "wall_s": total_wall}}
        print(json.dumps(_jsonable(out), indent=1, default=str))
        return 0
    given = " with " + " ".join(args.overrides) if args.overrides else ""
    print(f"estimate of {ppath}{given} (before any call; ranges are min..max)")
    for m, s in speeds.items():
        print(f"  {model_name(m)}: " + ("speed unknown" if s is None else
                            f"{s.latency_s:g} s latency, {s.tokens_per_s:g} tokens/s, {s.in_flight} in flight "
                            f"({s.source})"))
    for r in rows:
        print(f"\n{r['study']}: {r['units']:,} units, wall {_hours(r['wall'])}")
        for (role, m), v in r["by"].items():
            print(f"  {role:5s} {model_name(m)}: {_fmt(v['calls'])} calls, "
                  f"{_fmt(v['prompt'])} prompt + {_fmt(v['completion'])} completion tokens"
                  + (f" + {_fmt(v['reasoning'])} reasoning" if v["reasoning"].hi else "")
                  + f", {_fmt(v['cost'], money=True)}")
        for w in r["local"]:
            print(f"  local {w['what']}: {_fmt(w['items'])} ({w['unit']}), {_hours(w['seconds'])} on this machine")
        for n in r["notes"]:
            print(f"  note: {n}")
    print(f"\ntotal: {sum(r['units'] for r in rows):,} units, {_fmt(total['calls'])} calls, "
          f"{_fmt(total['prompt'])} prompt + {_fmt(total['completion'])} "
          "completion tokens" + (f" + {_fmt(total['reasoning'])} reasoning" if total["reasoning"].hi else "")
          + f", {_fmt(total['cost'], money=True)}, wall {_hours(total_wall)}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("estimate", help="units, calls, tokens, cost and wall time of a run, before any call",
                       description="Estimate what running the studies costs, before any call: per study and model "
                                   "role the units, calls (requests), prompt and completion tokens, cost from the "
                                   "model specs' prices and wall time at an endpoint's speed; ranges where a chain's "
                                   "length depends on the model. See docs/estimate.md.")
    p.add_argument("studies", nargs="*", metavar="STUDY",
                   help=f"studies to estimate (default: all): {', '.join(STUDIES)}")
    p.add_argument("--params", default="params/default.yaml", help="flat YAML parameter file (default: %(default)s)")
    p.add_argument("-p", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override one parameter (repeatable)")
    p.add_argument("--latency", type=float, default=None, help="seconds a request takes before its reply streams "
                                                                "(default: the spec's extra latency_s)")
    p.add_argument("--tokens-per-s", type=float, default=None, dest="tokens_per_s",
                   help="reply tokens a second of one request (default: the spec's extra tokens_per_s)")
    p.add_argument("--in-flight", type=int, default=None, dest="in_flight",
                   help="requests an endpoint serves at once (default: the spec's concurrency; 1 for a local model)")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")
    p.set_defaults(func=cmd_estimate)
