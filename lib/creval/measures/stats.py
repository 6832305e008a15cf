"""Statistics for validating creativity metrics: rank correlations with p-values, bootstrap confidence
intervals, AUC, accuracy, Cohen's kappa and a fixed-count binning helper
(AUARC lives with the judges: :func:`creval.datasets.judge_labels.auarc`).

Every function tolerates tiny or degenerate inputs: pairs with a NaN are dropped, and when fewer than
``MIN_N`` pairs remain (or one side is constant) the result is NaN with a ``note`` saying why, never an
exception. A correlation on fewer than 5 points is not meaningful, whatever its p-value.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

MIN_N = 5


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


def bootstrap_ci(stat: Callable[..., float], *arrays, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0,
                 min_n: int = MIN_N) -> tuple[float, float]:
    """Percentile bootstrap CI of ``stat(*arrays)``: resample the rows (the same indices in every array)
    ``n_boot`` times with a seeded generator, keep the finite statistics, and return their
    ``alpha/2`` and ``1 - alpha/2`` quantiles. (NaN, NaN) when fewer than ``min_n`` rows or < 10 finite
    replicates (e.g. every resample constant)."""
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0])
    if any(len(a) != n for a in arrs):
        raise ValueError("bootstrap arrays must have the same length")
    if n < min_n:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        with np.errstate(all="ignore"):
            try:
                v = float(stat(*[a[idx] for a in arrs]))
            except (ValueError, ZeroDivisionError):
                continue
        if np.isfinite(v):
            vals.append(v)
    if len(vals) < 10:
        return float("nan"), float("nan")
    lo, hi = np.quantile(vals, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _rho(x, y) -> float:
    from scipy import stats
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)


def spearman_ci(x, y, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0, min_n: int = MIN_N) -> dict:
    """:func:`spearman` plus a percentile bootstrap CI of rho: ``{rho, p, n, note, lo, hi}``."""
    r = spearman(x, y, min_n)
    xs, ys = _pairs(x, y)
    lo, hi = (float("nan"), float("nan")) if r["note"] else bootstrap_ci(_rho, xs, ys, n_boot=n_boot, alpha=alpha,
                                                                         seed=seed, min_n=min_n)
    return {**r, "lo": lo, "hi": hi}


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


def accuracy(y_true, y_pred) -> float:
    """Fraction of positions where prediction equals truth (NaN for empty input)."""
    t, p = list(y_true), list(y_pred)
    if len(t) != len(p):
        raise ValueError("y_true and y_pred differ in length")
    return float("nan") if not t else sum(a == b for a, b in zip(t, p)) / len(t)


def cohen_kappa(a, b) -> float:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e): p_o observed agreement, p_e the agreement expected from
    each rater's marginal label frequencies. 1.0 when both raters use one identical label; NaN if empty."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError("raters differ in length")
    if not a:
        return float("nan")
    labels = sorted(set(a) | set(b), key=str)
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((a.count(k) / n) * (b.count(k) / n) for k in labels)
    if pe == 1.0:
        return 1.0 if po == 1.0 else float("nan")
    return (po - pe) / (1 - pe)


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
