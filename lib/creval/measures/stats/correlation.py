"""Rank correlations with p-values, bootstrap confidence intervals (which count the resamples they cannot
compute), AUC with its interval, paired differences of two measures against one outcome, rater pairs and a
fixed-count binning helper.

Every function tolerates tiny or degenerate inputs: pairs with a NaN are dropped, and when fewer than
``MIN_N`` pairs remain (or one side is constant) the result is NaN with a ``note`` saying why, never an
exception. A correlation on fewer than 5 points is not meaningful, whatever its p-value. Inputs of
different lengths are an error; empty input gives NaN.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from creval.measures.stats.resample import boot_rng, mc_margin

MIN_N = 5
MAX_UNDEFINED = 0.05   # share of bootstrap resamples whose statistic may be undefined before no interval is given


def _pairs(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float).reshape(-1), np.asarray(y, dtype=float).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"x has {x.size} values but y has {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _why_not(x: np.ndarray, y: np.ndarray, min_n: int) -> str:
    if x.size < min_n:
        return f"n={x.size} < {min_n}: not meaningful"
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return "one variable is constant: undefined"
    return ""


def _corr(kind: str, x, y, min_n: int = MIN_N) -> dict:
    from scipy import stats
    x, y = _pairs(x, y)
    note = _why_not(x, y, min_n)
    if note:
        return {"rho" if kind == "spearman" else "tau": float("nan"), "p": float("nan"), "n": int(x.size), "note": note}
    if kind == "spearman":
        r = stats.spearmanr(x, y)
        return {"rho": float(r.statistic), "p": float(r.pvalue), "n": int(x.size), "note": ""}
    r = stats.kendalltau(x, y)   # tau-b (ties corrected)
    return {"tau": float(r.statistic), "p": float(r.pvalue), "n": int(x.size), "note": ""}


def spearman(x, y, min_n: int = MIN_N) -> dict:
    """Spearman's rank correlation ``rho`` = Pearson correlation of the (average-tie) ranks of x and y,
    with scipy's two-sided p-value (t distribution with n-2 df). Returns ``{rho, p, n, note}``."""
    return _corr("spearman", x, y, min_n)


def kendall(x, y, min_n: int = MIN_N) -> dict:
    """Kendall's tau-b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)) with tie corrections,
    scipy's two-sided p-value. Returns ``{tau, p, n, note}``."""
    return _corr("kendall", x, y, min_n)


class Interval(tuple):
    """A bootstrap interval ``(lo, hi)`` that also says how many resamples had no statistic
    (``undefined`` of ``n_boot``), where no interval is given why (``note``), and its bounds' Monte-Carlo
    margins ``mc_lo``/``mc_hi`` (:func:`mc_margin`; NaN without an interval). Unpacks as a pair."""

    undefined: int
    n_boot: int
    note: str
    mc_lo: float
    mc_hi: float

    def __new__(cls, lo: float, hi: float, undefined: int = 0, n_boot: int = 0, note: str = "",
                mc: tuple[float, float] = (float("nan"), float("nan"))) -> "Interval":
        obj = super().__new__(cls, (float(lo), float(hi)))
        obj.undefined, obj.n_boot, obj.note, (obj.mc_lo, obj.mc_hi) = undefined, n_boot, note, mc
        return obj


def bootstrap_ci(stat: Callable[..., float], *arrays, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0,
                 min_n: int = MIN_N, max_undefined: float = MAX_UNDEFINED) -> Interval:
    """Percentile bootstrap CI of ``stat(*arrays)``: resample the rows (the same indices in every array)
    ``n_boot`` times (generator :func:`boot_rng`, shifted by ``CREVAL_BOOT_SEED``) and return the ``alpha/2`` and
    ``1 - alpha/2`` quantiles of the statistics, as an :class:`Interval` that counts the resamples whose
    statistic is undefined (NaN, or an error: e.g. a resample that misses the one differing item of a rank
    correlation). Undefined resamples are never silently dropped: when more than ``max_undefined`` (5%) of them
    are undefined, no interval is given (NaN, NaN) and ``note`` says how many; below that share the quantiles
    are taken over the defined ones and the count is still reported. (NaN, NaN) too below ``min_n`` rows."""
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0])
    if any(len(a) != n for a in arrs):
        raise ValueError("bootstrap arrays must have the same length")
    if n < min_n:
        return Interval(float("nan"), float("nan"), 0, 0, f"n={n} < {min_n}: no interval")
    rng = boot_rng(seed)
    vals = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        with np.errstate(all="ignore"):
            try:
                v = float(stat(*[a[idx] for a in arrs]))
            except (ValueError, ZeroDivisionError):
                v = float("nan")
        if np.isfinite(v):
            vals.append(v)
    bad = n_boot - len(vals)
    if bad > max_undefined * n_boot or len(vals) < 10:
        share = f"{100 * bad / n_boot:.0f}%" if n_boot else "all"
        return Interval(float("nan"), float("nan"), bad, n_boot,
                        f"no interval: the statistic is undefined on {bad} of {n_boot} resamples ({share})")
    lo, hi = np.quantile(vals, [alpha / 2, 1 - alpha / 2])
    note = f"{bad} of {n_boot} resamples undefined" if bad else ""
    mc = (mc_margin(vals, alpha / 2), mc_margin(vals, 1 - alpha / 2))
    return Interval(float(lo), float(hi), bad, n_boot, note, mc)


def _with_ci(r: dict, ci: Interval | None) -> dict:
    """A statistic's dict with its interval, the undefined-resample count and the interval's note."""
    if ci is None:
        return {**r, "lo": float("nan"), "hi": float("nan"), "undefined": 0, "mc_lo": float("nan"),
                "mc_hi": float("nan")}
    note = "; ".join(t for t in (r.get("note", ""), ci.note) if t)
    return {**r, "lo": ci[0], "hi": ci[1], "undefined": ci.undefined, "note": note, "mc_lo": ci.mc_lo,
            "mc_hi": ci.mc_hi}


def _rho(x, y) -> float:
    from scipy import stats
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)


def spearman_ci(x, y, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, min_n: int = MIN_N) -> dict:
    """:func:`spearman` plus a percentile bootstrap CI of rho (:func:`bootstrap_ci`):
    ``{rho, p, n, note, lo, hi, undefined}``."""
    r = spearman(x, y, min_n)
    xs, ys = _pairs(x, y)
    ci = None if r["note"] else bootstrap_ci(_rho, xs, ys, n_boot=n_boot, alpha=alpha, seed=seed, min_n=min_n)
    return _with_ci(r, ci)


def auc(labels, scores, min_n: int = 2) -> dict:
    """Area under the ROC curve: the probability that a random positive scores above a random negative
    (ties count 1/2), i.e. the Mann-Whitney U of the positives divided by n_pos * n_neg.
    ``labels`` are booleans/0-1. Returns ``{auc, p, n, n_pos, note}`` (p: two-sided Mann-Whitney)."""
    from scipy import stats
    y, s = _pairs(np.asarray(labels, dtype=float), scores)
    pos, neg = s[y == 1], s[y == 0]
    out = {"auc": float("nan"), "p": float("nan"), "n": int(y.size), "n_pos": int(pos.size), "note": ""}
    if pos.size < min_n or neg.size < min_n:
        out["note"] = f"{pos.size} positives / {neg.size} negatives: too few to compare"
        return out
    u = stats.mannwhitneyu(pos, neg, alternative="two-sided")
    out["auc"] = float(u.statistic) / (pos.size * neg.size)
    out["p"] = float(u.pvalue)
    return out


def auc_ci(labels, scores, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, min_n: int = MIN_N) -> dict:
    """:func:`auc` plus a percentile bootstrap CI of the AUC (pairs with a NaN dropped first, then rows
    resampled as in :func:`bootstrap_ci`; a resample with fewer than 2 of either class is undefined):
    ``{auc, p, n, n_pos, note, lo, hi, undefined}``. No interval when the AUC itself is undefined."""
    a = auc(labels, scores)
    y, s = _pairs(np.asarray(labels, dtype=float), scores)
    ci = None if a["note"] else bootstrap_ci(lambda yy, ss: auc(yy, ss)["auc"], y, s, n_boot=n_boot, alpha=alpha,
                                             seed=seed, min_n=min_n)
    return _with_ci(a, ci)


def bin_fixed_count(x, y, size: int = 15):
    """Fixed-count binning for scatter summaries: sort points by x, cut consecutive bins of ``size``
    points (the last bin takes the remainder if it has at least size/2 points, else it joins the
    previous one), and report each bin's median x, mean y, its standard error and count.
    Returns a DataFrame with columns ``x_median, y_mean, y_sem, count``."""
    import pandas as pd
    xs, ys = _pairs(x, y)
    if xs.size == 0:
        return pd.DataFrame(columns=["x_median", "y_mean", "y_sem", "count"])
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    edges = list(range(0, xs.size, size)) + [xs.size]
    if len(edges) > 2 and edges[-1] - edges[-2] < size / 2:
        edges.pop(-2)
    rows = []
    for a, b in zip(edges[:-1], edges[1:]):
        yb = ys[a:b]
        rows.append({"x_median": float(np.median(xs[a:b])), "y_mean": float(yb.mean()),
                     "y_sem": float(yb.std(ddof=1) / np.sqrt(yb.size)) if yb.size > 1 else float("nan"),
                     "count": int(b - a)})
    return pd.DataFrame(rows)


def _auc_stat(scores, labels) -> float:
    return auc(labels, scores)["auc"]


def paired_diff_ci(a, b, y, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, min_n: int = MIN_N,
                   stat: str = "spearman") -> dict:
    """stat(a, y) - stat(b, y) on the same items, with a paired percentile bootstrap CI (every replicate
    resamples the items once and recomputes both statistics on them). ``stat``: ``spearman`` (y a rating) or
    ``auc`` (y a 0/1 label; a and b scores). Items missing in any of
    the three are dropped. ``verdict``: ``better`` / ``worse`` when the CI excludes 0, else
    ``indistinguishable``; ``n/a`` with a ``note`` when too few items; ``borderline`` (:func:`paired_word`)."""
    a, b, y = (np.asarray(v, float) for v in (a, b, y))
    keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(y)
    a, b, y = a[keep], b[keep], y[keep]
    n = int(len(y))
    out = {"n": n, "diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "verdict": "n/a", "note": ""}
    if n < min_n:
        return {**out, "note": f"{n} paired items (< {min_n})"}
    f = {"spearman": _rho, "auc": _auc_stat}[stat]
    ra, rb = f(a, y), f(b, y)
    if not (np.isfinite(ra) and np.isfinite(rb)):
        return {**out, "note": "a constant column"}
    ci = bootstrap_ci(lambda p, q, r: f(p, r) - f(q, r), a, b, y, n_boot=n_boot, alpha=alpha, seed=seed, min_n=min_n)
    return _paired(out, ra - rb, ci)


def _paired_word(lo: float, hi: float) -> str:
    return "n/a" if not np.isfinite(lo) else "better" if lo > 0 else "worse" if hi < 0 else "indistinguishable"


def paired_word(lo: float, hi: float, mc: tuple[float, float] = (0.0, 0.0)) -> tuple[str, bool]:
    """A paired difference's word and mark: ``better`` / ``worse`` when ``[lo, hi]`` excludes 0,
    ``indistinguishable`` when it holds 0, ``n/a`` without an interval; borderline (True) when moving either
    bound by its Monte-Carlo margin (``mc``: ``(mc_lo, mc_hi)``, NaN read as 0) changes the word, the mark
    :func:`~creval.measures.stats.verdicts.claim_verdict` gives."""
    word = _paired_word(lo, hi)
    if word == "n/a":
        return word, False
    ml, mh = (abs(float(m)) if np.isfinite(m) else 0.0 for m in mc)
    return word, len({_paired_word(lo + a, hi + b) for a in (-ml, ml) for b in (-mh, mh)}) > 1


def _paired(out: dict, diff: float, ci: Interval) -> dict:
    """A paired difference's dict: its word (:func:`paired_word`) in ``verdict``, its mark in ``borderline``
    (the interval's note says why there is no interval)."""
    lo, hi = ci
    verdict, marked = paired_word(lo, hi, (ci.mc_lo, ci.mc_hi))
    return {**out, "diff": float(diff), "lo": lo, "hi": hi, "verdict": verdict, "borderline": marked,
            "undefined": ci.undefined, "note": "; ".join(t for t in (out["note"], ci.note) if t), "mc_lo": ci.mc_lo,
            "mc_hi": ci.mc_hi}


def rater_pairs(matrix, names: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0,
                min_n: int = MIN_N) -> list[dict]:
    """Spearman between every pair of rater columns of ``matrix`` (items x raters, NaN = not rated), each on
    the items both rated, with a bootstrap CI: ``[{a, b, n, rho, lo, hi}]``."""
    m = np.asarray(matrix, float)
    names = list(names or [f"rater{i + 1}" for i in range(m.shape[1])])
    rows = []
    for i in range(m.shape[1]):
        for j in range(i + 1, m.shape[1]):
            r = spearman_ci(m[:, i], m[:, j], n_boot=n_boot, seed=seed, min_n=min_n)
            rows.append({"a": names[i], "b": names[j], "n": r["n"], "rho": r["rho"], "lo": r["lo"], "hi": r["hi"]})
    return rows


def paired_mean_diff_ci(a, b, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, min_n: int = MIN_N) -> dict:
    """mean(a) - mean(b) over the same items (e.g. a judge's and a baseline's correctness, 0/1), with a
    paired percentile bootstrap CI and the same ``verdict`` as :func:`paired_diff_ci`."""
    a, b = (np.asarray(v, float) for v in (a, b))
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(len(a))
    out = {"n": n, "diff": float("nan"), "lo": float("nan"), "hi": float("nan"), "verdict": "n/a", "note": ""}
    if n < min_n:
        return {**out, "note": f"{n} paired items (< {min_n})"}
    ci = bootstrap_ci(lambda p, q: float(np.mean(p) - np.mean(q)), a, b, n_boot=n_boot, alpha=alpha, seed=seed,
                      min_n=min_n)
    return _paired(out, float(np.mean(a) - np.mean(b)), ci)
