"""Benchmark of chapter 07c's two costly steps against the naive way, in the same run, on HANNA Surprise (staged
data or the pinned download): the within-prompt ranks (one vectorised pass against scipy's rankdata per prompt, the
obvious loop) over 1,000 resamples, and one graded response model fit at girth's default 41 quadrature points against
the 21 used. Both pairs must agree (ranks exactly; severities to 0.02).

    python benchmarks/bench_judges.py
"""
from __future__ import annotations

import time

import girth
import numpy as np
from scipy import stats as st

from creval.measures.stats import irt
from creval.measures.stats.prompts import within_ranks
from creval.studies.judges import panels, run


def naive_ranks(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    out = np.zeros(len(v))
    for key in dict.fromkeys(g.tolist()):
        at = np.flatnonzero(g == key)
        out[at] = (st.rankdata(v[at]) - (len(at) + 1) / 2) / len(at)
    return out


def timed(f, *a):
    t = time.perf_counter()
    out = f(*a)
    return out, time.perf_counter() - t


def main() -> None:
    p = panels.panels_of(("hanna",))[0]
    r = run.ratings(p)
    v, g = np.nan_to_num(r.matrix[:, -1]), np.asarray(p.prompt, dtype=object)
    rng = np.random.default_rng(0)
    draws = [rng.integers(0, len(v), len(v)) for _ in range(1000)]
    fast, t_fast = timed(lambda: [within_ranks(v[i], g[i]) for i in draws])
    slow, t_slow = timed(lambda: [naive_ranks(v[i], g[i]) for i in draws])
    assert all(np.allclose(a, b) for a, b in zip(fast, slow))
    print(f"within-prompt ranks, 1,000 resamples of {len(v)} texts in {len(set(g))} prompts: "
          f"{t_fast:.2f} s vectorised vs {t_slow:.2f} s per prompt ({t_slow / t_fast:.0f}x)")
    m = r.matrix.T
    coded = irt.coded(m, irt.levels_of(m))
    with np.errstate(all="ignore"):
        a, t21 = timed(girth.grm_mml, coded, {"quadrature_n": 21})
        b, t41 = timed(girth.grm_mml, coded)
    sev = [np.nanmean(np.where(np.isfinite(x["Difficulty"]), x["Difficulty"], np.nan), axis=1) for x in (a, b)]
    gap = float(np.nanmax(np.abs(sev[0] - sev[1])[-len(p.judges):]))
    print(f"graded response model, {m.shape[0]} raters x {m.shape[1]} texts: {t21:.1f} s at 21 points vs "
          f"{t41:.1f} s at girth's 41 ({t41 / t21:.1f}x); judges' severities differ by at most {gap:.3f}")
    _, t_study = timed(run.panel_tables, run.JudgesConfig.from_params({}), p)
    print(f"one HANNA panel end to end (1,000 resamples, 50 refits): {t_study:.0f} s")


if __name__ == "__main__":
    main()
