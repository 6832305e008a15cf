"""Requests in flight: every study against a stand-in GPU server, at concurrency 64 and at concurrency 1.

The stand-in (``creval.models.standin``) answers each request after a fixed latency and serves ``capacity`` at
once, like a vLLM server with that many slots; it counts requests, the most in flight and the mean in flight
while it had work. Each study runs on a profile with at least 32 independent units, with the stand-in as the
model under test and as the judge, twice, each time with an empty cache and run root: once with the spec's
in-flight budget at 64 and once at 1. The studies it reads run first (not counted). Printed per study:
requests, most and mean in flight, the target 0.6 x min(64, units), the wall time of both arms, their ratio,
and whether the records of both arms are equal.

Usage: nice -n 10 .venv/bin/python benchmarks/bench_server.py [--latency 0.5] [--studies aut convergent]
       [--skip-serial] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# Each study's profile: the smoke profile (params/smoke.yaml) plus these, for >= 32 independent units.
PROFILES: dict[str, dict] = {
    "apparatus": {"apparatus_samples": 32},
    "divergent": {"divergent_domains": ["macgyver"], "divergent_limit": 32, "divergent_n_samples": 4,
                  "divergent_max_steps": 2, "divergent_temperatures": [1.0],
                  "divergent_sweep_limit": 1, "divergent_nli": "minilm-cosine"},
    "convergent": {"divergent_limit": 8, "convergent_human_pairs": 12, "convergent_judges": ["zero-shot", "chateval",
                                                                                             "retrieval"],
                   "convergent_confidence_thresholds": [0.3], "divergent_nli": "minilm-cosine"},
    "validation": {"divergent_limit": 12, "divergent_nli": "minilm-cosine", "aut_items": 32, "aut_objects": 8,
                   "validation_h2_limit": 12,
                   "validation_n_large": 6, "validation_human_ref_problems": 12},
    "neocoder": {"neocoder_problems": 6, "neocoder_live_problems": 32, "neocoder_rounds": 2},
    "rethinking": {"rethink_judge_items": 8, "rethink_rerun_items": 8, "rethink_ppl_items": 16,
                   "rethink_twist_items": 8},
    "aut": {"aut_things": ["fork", "brick", "paperclip", "shoe"], "aut_per_level": 3, "aut_items": 32},
    "judges": {"judges_own_prompts": 4, "judges_own_plots": 4, "judges_prompts": 8, "judges_irt_boot": 10},
}
UNITS_FILES = "units/*.jsonl"


def units_of(run_dir: Path) -> int:
    """Independent units the run recorded (every ``units/<name>.jsonl`` row)."""
    return sum(len(f.read_text().splitlines()) for f in run_dir.glob(UNITS_FILES)
               if not f.name.endswith("failed.jsonl"))


def arm(study: str, params: dict, server, concurrency: int, home: Path) -> dict:
    from creval.book.studies import run_study
    from creval.studies.registry import STUDIES, in_order
    os.environ["CREVAL_CACHE"] = str(home / "calls.sqlite")
    (home / "models").mkdir(exist_ok=True)      # the same model name in both arms: records name it
    (home / "models" / "standin.yaml").write_text(server.spec_yaml("standin", concurrency))
    os.environ["CREVAL_MODELS"] = str(home / "models")
    p = {**params, "model": "standin", "judge_model": "standin", "run_root": str(home / "runs")}
    for up in in_order([study])[:-1]:
        run_study(up, p)
    server.reset()
    t0 = time.perf_counter()
    row = run_study(STUDIES[study], p)
    wall = time.perf_counter() - t0
    cfg = STUDIES[study].make_config(p)
    return {"wall_s": round(wall, 2), "error": row["error"], **server.stats, "units": units_of(cfg.run_dir),
            "records": {t: STUDIES[study].records(cfg)[t].to_dict("records")
                        for t in STUDIES[study].records(cfg).tables}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--capacity", type=int, default=64)
    ap.add_argument("--studies", nargs="*", default=list(PROFILES))
    ap.add_argument("--skip-serial", action="store_true", help="only the concurrency-64 arm")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    import yaml

    from creval.core import paths
    from creval.models.standin import StandIn
    smoke = yaml.safe_load((paths.REPO / "params" / "smoke.yaml").read_text())
    rows = []
    with StandIn(latency=a.latency, capacity=a.capacity) as server:
        for study in a.studies:
            params = {**smoke, **PROFILES.get(study, {})}
            wide = arm(study, params, server, a.capacity, Path(tempfile.mkdtemp(prefix=f"bench-{study}-64-")))
            row = {"study": study, "units": wide["units"], "requests": wide["requests"],
                   "peak_in_flight": wide["peak_in_flight"], "mean_in_flight": wide["mean_in_flight"],
                   "target": round(0.6 * min(a.capacity, max(wide["units"], 1)), 1), "wall_64_s": wide["wall_s"],
                   "error": wide["error"]}
            if not a.skip_serial:
                one = arm(study, params, server, 1, Path(tempfile.mkdtemp(prefix=f"bench-{study}-1-")))
                row.update(wall_1_s=one["wall_s"], speedup=round(one["wall_s"] / max(wide["wall_s"], 1e-9), 1),
                           same_records=_canon(_strip(one["records"])) == _canon(_strip(wide["records"])),
                           differ=_differ(_strip(one["records"]), _strip(wide["records"])))
            rows.append(row)
            print(json.dumps(row), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print("\n| study | units | requests | most in flight | mean in flight (target) | wall at 64 | wall at 1 | ratio"
          " | same records |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['study']} | {r['units']} | {r['requests']} | {r['peak_in_flight']} | {r['mean_in_flight']} "
              f"({r['target']}) | {r['wall_64_s']} s | {r.get('wall_1_s', '-')} s | {r.get('speedup', '-')}x | "
              f"{r.get('same_records', '-')} |")


TIMING = ("seconds", "wall", "elapsed", "latency", "created", "finished", "cpu_s", "rss", "run_dir")


def _canon(x) -> str:
    """JSON text of ``x`` (NaN written as NaN, so two missing values compare equal)."""
    return json.dumps(x, sort_keys=True, default=str)


def _differ(a: dict, b: dict) -> list[str]:
    """The ``table.column`` names whose values differ between two arms' records."""
    out = []
    for t in sorted(set(a) | set(b)):
        ra, rb = a.get(t, []), b.get(t, [])
        if len(ra) != len(rb):
            out.append(f"{t} ({len(ra)} vs {len(rb)} rows)")
            continue
        cols = sorted({k for r in ra + rb for k in r})
        out += [f"{t}.{c}" for c in cols if _canon([r.get(c) for r in ra]) != _canon([r.get(c) for r in rb])]
    return out


def _strip(x):
    """The records without timing fields, at any depth (they differ between any two runs)."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if not any(w in str(k) for w in TIMING)}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


if __name__ == "__main__":
    sys.exit(main())
