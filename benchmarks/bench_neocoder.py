"""Speed of the NeoCoder replay: every stored GPT-4 code under both judges, in the sandbox.

1. Cold: all 1,194 stored codes (199 problems x 6 rounds) under the repo-compatible and the strict judge with an
   empty cache; one sandboxed interpreter per problem runs all its programs, each program (and for single-test
   problems each case) in its own forked process (``neocoder_pack=problem``).
2. Warm: the same call again; every result must come from the cache (the number of sandbox launches is counted
   and must be 0).
3. Baseline, measured in the same run on the first ``--baseline-problems`` problems (cold, its own cache): the
   straightforward safe way, a fresh sandboxed interpreter per test case (strict judge: each case alone behind a
   ``1`` count line) and per program (repo harness). The packed way is timed on the same subset.

4. Legacy (issue 25's speed check), in the same run: the same cold replay with the sandbox as it was before
   issue 25 (one jailed runner per problem forking every program; loaded from git, commit ``LEGACY_COMMIT``), its
   time beside today's and whether every verdict is the same (``--legacy 0`` skips it).

Programs/s counts judged programs (codes x judges); "excluding timeouts" leaves out the programs that hit a
time limit and the wall time they held a worker (their limit / workers). Usage:
    nice -n 10 .venv/bin/python benchmarks/bench_neocoder.py [--workers 2] [--baseline-problems 25]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from creval import sandbox
from creval.datasets import neocoder as neocoder_data
from creval.measures.neocoder import judges as nc
from creval.sandbox import batches


def _fresh_cache(tag: str) -> None:
    d = tempfile.mkdtemp(prefix=f"bench-neocoder-{tag}-")
    os.environ["CREVAL_CACHE"] = os.path.join(d, "calls.sqlite")


class Counter:
    def __init__(self):
        self.launches = 0
        self._orig = batches.launch

    def __enter__(self):
        def wrapped(units):
            self.launches += 1
            return self._orig(units)
        batches.launch = wrapped
        return self

    def __exit__(self, *a):
        batches.launch = self._orig


LEGACY_COMMIT = "46427ca"     # the last commit with the forking runner (sandbox runner version 5)
REPO = Path(__file__).resolve().parents[1]


def legacy_sandbox():
    """The sandbox package as it was at ``LEGACY_COMMIT`` (its ``__init__`` and ``_runner``), imported apart."""
    d = Path(tempfile.mkdtemp(prefix="bench-legacy-sandbox-"))
    for name in ("__init__.py", "_runner.py"):
        src = subprocess.run(["git", "-C", str(REPO), "show", f"{LEGACY_COMMIT}:lib/creval/sandbox/{name}"],
                             capture_output=True, text=True, check=True).stdout
        (d / name).write_text(src)
    spec = importlib.util.spec_from_file_location("creval_legacy_sandbox", d / "__init__.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["creval_legacy_sandbox"] = mod
    spec.loader.exec_module(mod)
    return mod


def legacy_replay(items, workers):
    """The cold replay through the legacy sandbox (its own empty cache); (verdicts, seconds)."""
    legacy = legacy_sandbox()
    _fresh_cache("legacy")
    real = nc.run_units
    nc.run_units = legacy.run_units
    try:
        t0 = time.perf_counter()
        v = nc.judge_codes(items, workers=workers)
        return v, time.perf_counter() - t0
    finally:
        nc.run_units = real


def _timeouts(verdicts) -> tuple[int, float]:
    n, secs = 0, 0.0
    for v in verdicts:
        for j, x in v.items():
            if x.verdict == nc.TLE:
                n += 1
                secs += nc.REPO_LIMITS.wall_s if j == "repo" else nc.STRICT_LIMITS.wall_s
    return n, secs


def judge_all(items, workers, pack="problem"):
    with Counter() as c:
        t0 = time.perf_counter()
        v = nc.judge_codes(items, workers=workers, pack=pack)
        dt = time.perf_counter() - t0
    return v, dt, c.launches


def baseline(items, workers) -> tuple[float, int]:
    """A fresh sandboxed interpreter per test case (strict) and per program (repo), no cache."""
    units = []
    for p, code in items:
        u = nc.strict_units(p, code)
        if u is not None:
            stdins = ([c.stdin(with_count=False) for c in p.cases] if p.flags.single_test
                      else [c.stdin(with_count=True) for c in p.cases])
            units += [[{**u, "stdins": [s]}] for s in stdins]
        r = nc.repo_units(p, code)
        if r is not None:
            units.append([r])
    from concurrent.futures import ThreadPoolExecutor
    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(batches.launch, units))
    return time.perf_counter() - t0, len(units)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--baseline-problems", type=int, default=25)
    ap.add_argument("--legacy", type=int, default=1, help="1: also time the pre-issue-25 sandbox (same run)")
    args = ap.parse_args()
    ps, src = neocoder_data.load()
    items = [(p, rd.code) for p in ps for rd in p.rounds]
    n_prog = 2 * len(items)
    print(f"data: {src}; {len(ps)} problems, {len(items)} stored codes, {n_prog} judged programs; "
          f"workers {args.workers}; isolation {sandbox.isolation().describe()}; interpreter {sandbox.interpreter()}")

    _fresh_cache("cold")
    v, cold, launches = judge_all(items, args.workers)
    n_to, to_secs = _timeouts(v)
    rate = n_prog / cold
    rate_ex = (n_prog - n_to) / max(cold - to_secs / args.workers, 1e-9)
    rows = {j: [sum(x[j].correct for x in v)] for j in nc.JUDGES}
    print(f"cold replay: {cold:.1f} s, {launches} sandbox launches, {rate:.1f} programs/s "
          f"({rate_ex:.1f} programs/s excluding {n_to} timeouts holding {to_secs:.0f} worker-s); "
          f"correct: repo {rows['repo'][0]}, strict {rows['strict'][0]}")

    with Counter() as c:
        t0 = time.perf_counter()
        v2 = nc.judge_codes(items, workers=args.workers)
        warm = time.perf_counter() - t0
    same = all(a[j].verdict == b[j].verdict for a, b in zip(v, v2) for j in nc.JUDGES)
    print(f"warm replay: {warm:.2f} s, {c.launches} sandbox launches (must be 0), same verdicts: {same}")

    if args.legacy:
        vl, leg = legacy_replay(items, args.workers)
        diff = [(items[i][0].problem_id, j, a[j].verdict, b[j].verdict) for i, (a, b) in enumerate(zip(vl, v))
                for j in nc.JUDGES if a[j].verdict != b[j].verdict]
        rows_l = {j: sum(x[j].correct for x in vl) for j in nc.JUDGES}
        print(f"legacy cold replay (forking runner, runner 5): {leg:.1f} s; correct: repo {rows_l['repo']}, "
              f"strict {rows_l['strict']}; today / legacy = {cold / leg:.2f}x; verdicts differing: {len(diff)} "
              f"{diff[:10]}")
    if args.baseline_problems <= 0:
        launch_cost()
        return
    sub = [(p, code) for p, code in items if p in ps[:args.baseline_problems]]
    _fresh_cache("packed-subset")
    vs, packed, _ = judge_all(sub, args.workers)
    _fresh_cache("per-program")
    _, per_prog, n_pp = judge_all(sub, args.workers, pack="none")
    base, n_launch = baseline(sub, args.workers)
    print(f"subset of {args.baseline_problems} problems ({2 * len(sub)} programs): packed {packed:.1f} s "
          f"({2 * len(sub) / packed:.1f} programs/s) vs a fresh jailed interpreter per program {per_prog:.1f} s "
          f"({n_pp} launches, {2 * len(sub) / per_prog:.1f} programs/s): {per_prog / packed:.1f}x; "
          f"vs one per test case {base:.1f} s ({n_launch} launches, {2 * len(sub) / base:.1f} programs/s): "
          f"{base / packed:.1f}x")
    launch_cost()


def launch_cost(n: int = 40) -> None:
    """Wall time of one empty launch (start, run ``pass``, collect), jailed and with the opted-in fallback."""
    os.environ["CREVAL_SANDBOX_FALLBACK"] = "1"
    unit = sandbox.program_unit("pass", [""])
    out = {}
    for kind in ("bwrap", "fallback"):
        os.environ["CREVAL_SANDBOX_BWRAP"] = "1" if kind == "bwrap" else "0"
        sandbox.isolation.cache_clear()
        if sandbox.isolation().kind != kind:
            continue
        sandbox._launch([unit])
        t0 = time.perf_counter()
        for _ in range(n):
            sandbox._launch([unit])
        out[kind] = (time.perf_counter() - t0) / n * 1000
    os.environ.pop("CREVAL_SANDBOX_BWRAP", None)
    sandbox.isolation.cache_clear()
    bw = sandbox.bwrap_binary()
    if bw and sandbox.isolation().kind == "bwrap":
        import subprocess
        t0 = time.perf_counter()
        for _ in range(n):
            subprocess.run(list(sandbox.isolation().prefix) + ["/bin/true"], check=True)
        t1 = time.perf_counter()
        for _ in range(n):
            subprocess.run(["/bin/true"], check=True)
        t2 = time.perf_counter()
        print(f"bwrap alone (jail around /bin/true): {((t1 - t0) - (t2 - t1)) / n * 1000:.1f} ms per launch")
    print("launch cost (one empty program, sequential): " +
          ", ".join(f"{k} {v:.1f} ms" for k, v in out.items()) +
          (f"; the jail adds {out['bwrap'] - out['fallback']:.1f} ms" if len(out) == 2 else ""))


if __name__ == "__main__":
    main()
