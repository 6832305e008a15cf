"""Resampling by independent unit (issue 40): a cluster bootstrap that draws whole units (a prompt, a writer, a
problem, a pair) rather than rows, percentile bounds with their Monte-Carlo margin, and bootstrap p-values.

Rows of one unit are not independent evidence: 36 stories by 3 writers are 3 units, not 36. Resampling units
(Davison & Hinkley 1997, sec. 3.8, "two-stage" sampling with the second stage kept whole) keeps the interval
honest. A percentile bound read off B resamples moves with the seed; :func:`mc_margin` says by how much (the
order statistic's binomial spread), so a verdict the margin could flip is marked borderline instead of
depending on the seed. Every report-time resample of the book draws from :func:`boot_rng`, whose seed the
environment variable ``CREVAL_BOOT_SEED`` shifts (unset: the seeds as written). Pure numpy.
"""
from __future__ import annotations

import math
import os
from typing import Callable, Iterator, Sequence

import numpy as np

MC_Z = 3 * math.sqrt(2)   # the bounds' Monte-Carlo margin: 3 SDs of two seeds' rank difference (mc_margin)
MAX_UNDEFINED = 0.05  # share of resamples whose statistic may be undefined before no interval is given
SEED_ENV = "CREVAL_BOOT_SEED"   # shifts every report-time bootstrap and permutation seed (records never move)


def boot_seed(seed: int | None = 0) -> int | None:
    """The seed a report-time resample uses: ``seed`` plus the integer in ``CREVAL_BOOT_SEED`` (unset or
    empty: ``seed`` itself, so the book's numbers are today's). Rebuilding with 0..9 there shows whether a
    verdict depends on the bootstrap seed (benchmarks/verdict_seeds.py). None stays None."""
    shift = os.environ.get(SEED_ENV, "").strip()
    if seed is None or not shift:
        return seed
    try:
        return int(seed) + int(shift)
    except ValueError:
        raise ValueError(f"{SEED_ENV}={shift!r}: expected an integer (a shift of every bootstrap seed)") from None


def boot_rng(seed: int | None = 0) -> np.random.Generator:
    """The generator of a report-time bootstrap or permutation: ``default_rng(boot_seed(seed))``."""
    return np.random.default_rng(boot_seed(seed))


def units(cluster: Sequence | None, n: int) -> list[np.ndarray]:
    """The row indices of each independent unit, in order of first appearance (each row its own unit when
    ``cluster`` is None)."""
    if cluster is None:
        return [np.array([i]) for i in range(n)]
    c = np.asarray(cluster, dtype=object).reshape(-1)
    if c.size != n:
        raise ValueError(f"{c.size} cluster labels for {n} rows")
    first: dict = {}
    for i, u in enumerate(c.tolist()):
        first.setdefault(u, []).append(i)
    return [np.array(v) for v in first.values()]


def cluster_draws(cluster: Sequence | None, n: int, n_boot: int, seed: int = 0) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of the rows by unit: each draws as many units as there are, with replacement,
    and keeps every row of a drawn unit (a unit drawn twice is there twice)."""
    groups = units(cluster, n)
    rng = boot_rng(seed)
    if not groups:
        return
    for _ in range(n_boot):
        pick = rng.integers(0, len(groups), len(groups))
        yield np.concatenate([groups[j] for j in pick])


def nested(cluster: Sequence | None, group: Sequence, n: int) -> bool:
    """Whether every unit lies inside one group (each row its own unit when ``cluster`` is None)."""
    if cluster is None:
        return True
    seen: dict = {}
    for u, g in zip(np.asarray(cluster, dtype=object).tolist(), np.asarray(group, dtype=object).tolist()):
        if seen.setdefault(u, g) != g:
            return False
    return True


def strata_draws(cluster: Sequence | None, group: Sequence | None, n: int, n_boot: int,
                 seed: int = 0) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of the rows by unit, within strata: each ``group`` (the prompt a text answers)
    keeps its number of units, drawn with replacement from its own (Davison & Hinkley 1997, sec. 3.8, a
    stratified two-stage bootstrap). The prompts are then fixed, not sampled: the interval speaks for these
    prompts. Without ``group``, or where a unit spans several groups (a writer answering many prompts, who
    must stay whole), the plain :func:`cluster_draws`."""
    if group is None or not nested(cluster, group, n):
        yield from cluster_draws(cluster, n, n_boot, seed)
        return
    g = np.asarray(group, dtype=object).reshape(-1)
    if g.size != n:
        raise ValueError(f"{g.size} group labels for {n} rows")
    strata = []
    for rows in units(g, n):                         # rows of each group, in order of first appearance
        sub = None if cluster is None else np.asarray(cluster, dtype=object)[rows]
        strata.append([rows[u] for u in units(sub, len(rows))])
    rng = boot_rng(seed)
    for _ in range(n_boot):
        yield np.concatenate([s[j] for s in strata for j in rng.integers(0, len(s), len(s))])


def movable(cluster: Sequence | None, group: Sequence | None, n: int) -> int:
    """How many independent units a resample can actually move (issue 66): with strata (:func:`strata_draws`,
    each unit inside one group) only the units of strata holding two or more, since a stratum of one unit is
    redrawn as itself every time; otherwise every unit when there are two or more. 0 means no resample can
    differ from the original, so no interval it gives can be read."""
    if n == 0:
        return 0
    if group is not None and nested(cluster, group, n):
        g = np.asarray(group, dtype=object).reshape(-1)
        total = 0
        for rows in units(g, n):
            sub = None if cluster is None else np.asarray(cluster, dtype=object)[rows]
            k = len(units(sub, len(rows)))
            total += k if k >= 2 else 0
        return total
    k = len(units(cluster, n))
    return k if k >= 2 else 0


FIXED = "the resampling cannot vary"


def fixed_reason(values: Sequence[float] | None, movable_units: int | None = None,
                 bounds: tuple[float, float] | None = None) -> str:
    """Why an interval from these resampled ``values`` cannot be read, or "": no unit a resample can move
    (``movable_units`` 0: every stratum holds one unit, or there is one cluster), or every finite replicate
    equal (a zero-width interval that says nothing of the uncertainty), unless that value is one of the
    statistic's ``bounds`` (a perfect rho or AUROC in every resample is agreement, not a frozen resample)."""
    if movable_units == 0:
        return f"{FIXED}: every stratum holds a single unit (or there is one cluster), so each resample is the data"
    v = np.asarray([] if values is None else values, float)
    v = v[np.isfinite(v)]
    if v.size >= 2 and float(np.ptp(v)) == 0.0 and not (bounds and float(v[0]) in bounds):
        return f"{FIXED}: all {v.size} resamples give the same value ({float(v[0]):.4g})"
    return ""


def _at_rank(v: np.ndarray, t: float, k: float, at: float) -> float:
    """The value at fractional rank ``t`` of the sorted ``v``, extended past either end along the line from the
    quantile (rank ``k``, value ``at``) to that end: a window that runs off B values still has a width."""
    b = v.size
    if t < 0:
        return float(v[0] - (at - v[0]) / k * -t) if k > 0 else float(v[0])
    if t > b - 1:
        return float(v[-1] + (v[-1] - at) / (b - 1 - k) * (t - b + 1)) if k < b - 1 else float(v[-1])
    return float(np.interp(t, np.arange(b), v))


def mc_margin(values: Sequence[float], q: float, z: float = MC_Z) -> float:
    """How far the ``q`` quantile of ``values`` (B bootstrap statistics) could move with another seed. The
    number of resamples below a quantile is binomial, SD s = sqrt(B q (1 - q)) (Efron & Tibshirani 1993,
    sec. 19.3); another seed's bound is the quantile of an independent set of B, so its rank among these
    values spreads by sqrt(2) s. The margin is the larger distance from the bound to the order statistics
    ``z`` s either side (:data:`MC_Z` = 3 sqrt(2): 3 SDs of that two-seed spread), extrapolated linearly past
    the smallest or largest value. Distribution-free, so a bound on an atom of a discrete statistic reaches
    the next atom when another seed could. NaN for fewer than 10 values."""
    v = np.sort(np.asarray(values, float)[np.isfinite(np.asarray(values, float))])
    b = v.size
    if b < 10:
        return float("nan")
    k, d = q * (b - 1), z * math.sqrt(b * q * (1 - q))
    at = float(np.quantile(v, q))
    return max(at - _at_rank(v, k - d, k, at), _at_rank(v, k + d, k, at) - at)


def percentile(values: Sequence[float], alpha: float = 0.05, n_boot: int | None = None,
               max_undefined: float = MAX_UNDEFINED) -> dict:
    """Percentile interval of bootstrap statistics (NaN ones counted as undefined): ``{lo, hi, mc_lo, mc_hi,
    undefined, n_boot, note}``. No interval (NaN) when more than ``max_undefined`` of them are undefined."""
    arr = np.asarray(values, float)
    total = int(arr.size if n_boot is None else n_boot)
    ok = arr[np.isfinite(arr)]
    bad = total - ok.size
    out = {"lo": math.nan, "hi": math.nan, "mc_lo": math.nan, "mc_hi": math.nan, "undefined": bad,
           "n_boot": total, "note": ""}
    if total == 0 or bad > max_undefined * total or ok.size < 10:
        return {**out, "note": f"no interval: the statistic is undefined on {bad} of {total} resamples"}
    lo, hi = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
    return {**out, "lo": float(lo), "hi": float(hi), "mc_lo": mc_margin(ok, alpha / 2),
            "mc_hi": mc_margin(ok, 1 - alpha / 2), "note": f"{bad} of {total} resamples undefined" if bad else ""}


def boot_p(values: Sequence[float], null: float, side: int) -> float:
    """One-sided bootstrap p-value that the statistic lies beyond ``null`` on ``side`` (+1 above, -1 below):
    (1 + #resamples not beyond it) / (1 + B), the share of resamples on the wrong side. NaN when none."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan")
    wrong = np.sum(v <= null) if side > 0 else np.sum(v >= null)
    return float((1 + wrong) / (1 + v.size))


def cluster_bootstrap(stat: Callable[..., float], *arrays, cluster: Sequence | None = None, n_boot: int = 2000,
                      alpha: float = 0.05, seed: int = 0, group: Sequence | None = None) -> dict:
    """``stat(*arrays)`` with a cluster-bootstrap percentile interval (:func:`strata_draws`: units within each
    ``group`` when given, else :func:`cluster_draws`; :func:`percentile`): ``{value, lo, hi, mc_lo, mc_hi,
    undefined, n_boot, note, n, n_units, values}``."""
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0])
    if any(len(a) != n for a in arrs):
        raise ValueError("bootstrap arrays must have the same length")

    def safe(idx) -> float:
        with np.errstate(all="ignore"):
            try:
                return float(stat(*[a[idx] for a in arrs]))
            except (ValueError, ZeroDivisionError, FloatingPointError):
                return math.nan
    draws = strata_draws(cluster, group, n, n_boot, seed)
    vals = np.array([safe(idx) for idx in draws]) if n else np.full(n_boot, np.nan)
    ci = percentile(vals, alpha, n_boot)
    why = fixed_reason(None, movable(cluster, group, n)) if n_boot else ""    # a statistic may sit still honestly
    if why:            # an interval that cannot vary is never read (issue 66)
        ci = {**ci, "lo": math.nan, "hi": math.nan, "mc_lo": math.nan, "mc_hi": math.nan, "note": why}
    return {"value": safe(np.arange(n)) if n else math.nan, **ci, "n": n,
            "n_units": movable(cluster, group, n) if group is not None else len(units(cluster, n)), "values": vals}


def stratified_draws(strata: Sequence, counts: dict, draws: int, seed: int = 0) -> list[np.ndarray]:
    """``draws`` random subsets of the row indices ``0..len(strata)-1``, each holding ``counts[s]`` rows of
    stratum ``s`` drawn without replacement (all of a stratum's rows when it has fewer): the subsamples a
    seeded draw of that shape could have produced."""
    strata = np.asarray(strata, dtype=object)
    where = {s: np.flatnonzero(strata == s) for s in counts}
    rng = boot_rng(seed)
    return [np.concatenate([rng.choice(where[s], size=min(k, len(where[s])), replace=False)
                            for s, k in counts.items()] or [np.zeros(0, int)]) for _ in range(draws)]


def draw_spread(stat: Callable[[np.ndarray], float], draws: Sequence[np.ndarray], observed: float,
                alpha: float = 0.1) -> dict:
    """How one subsample's statistic sits among those of other draws of the same shape: the ``alpha/2`` and
    ``1 - alpha/2`` quantiles of ``stat(idx)`` over ``draws`` (index arrays), and ``percentile``, the share
    of draws whose statistic is below ``observed`` (ties count 1/2). NaN when < 10 draws give a finite
    value. A draw near the 5th or 95th percentile is a lucky or unlucky draw, not the measure."""
    with np.errstate(all="ignore"):
        vals = np.array([stat(idx) for idx in draws], dtype=float)
    vals = vals[np.isfinite(vals)]
    if len(vals) < 10:
        return {"lo": float("nan"), "hi": float("nan"), "percentile": float("nan"), "draws": int(len(vals))}
    lo, hi = np.quantile(vals, [alpha / 2, 1 - alpha / 2])
    pct = float(np.mean(vals < observed) + 0.5 * np.mean(vals == observed)) if np.isfinite(observed) else float("nan")
    return {"lo": float(lo), "hi": float(hi), "percentile": pct, "draws": int(len(vals))}
