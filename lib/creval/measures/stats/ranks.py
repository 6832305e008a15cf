"""Ranks, in one place: average ranks for rank correlations (:func:`average_ranks`), a standing of models where 1 is
the best (:func:`standing`), and the interval of a model's standing over bootstrap replicates (:func:`rank_bounds`).
Pure numpy."""
from __future__ import annotations

import numpy as np


def average_ranks(a) -> np.ndarray:
    """Average ranks (1..n, ties share their mean rank) down axis 0, a column with a NaN all NaN: the values of
    ``scipy.stats.rankdata(a, axis=0)`` in plain numpy, for the bootstrap calls it thousands of times per
    measure (scipy's checks cost ~0.3 ms a call, the most of a card's time)."""
    a = np.asarray(a, float)
    m = a[:, None] if a.ndim == 1 else a.reshape(a.shape[0], int(np.prod(a.shape[1:])))
    n = len(m)
    order = np.argsort(m, axis=0, kind="stable")
    s = np.take_along_axis(m, order, axis=0)
    pos = np.arange(1, n + 1, dtype=float)[:, None]
    starts = np.ones(m.shape, bool)
    starts[1:] = s[1:] != s[:-1]                                # a new value begins a tie group
    ends = np.ones(m.shape, bool)
    ends[:-1] = starts[1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0.0), axis=0)
    last = np.minimum.accumulate(np.where(ends, pos, n + 1.0)[::-1], axis=0)[::-1]
    r = np.empty(m.shape)
    np.put_along_axis(r, order, (first + last) / 2, axis=0)
    r[:, np.isnan(m).any(axis=0)] = np.nan
    return r.reshape(a.shape)


def standing(values, higher_first: bool = True, tol: float = 0.0, nan_last: bool = False) -> np.ndarray:
    """Competition ranks 1..k: 1 for the highest value when ``higher_first`` (the lowest otherwise); values within
    ``tol`` of each other share the better rank. A NaN keeps a NaN rank, or ranks last with ``nan_last``."""
    v = np.asarray(values, float)
    x = -v if higher_first else v
    if nan_last:
        x = np.where(np.isnan(x), np.inf, x)
    out = np.full(len(x), np.nan)
    ok = ~np.isnan(x)
    out[ok] = [1.0 + np.sum(x[ok] < t - tol) for t in x[ok]]
    return out


def rank_bounds(replicates, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The ``1 - alpha`` percentile interval of each column's standing over replicates (replicates x models, NaN
    where a replicate could not rank a model); NaN where no replicate ranked it."""
    r = np.asarray(replicates, float)
    if r.ndim != 2 or not r.shape[0]:
        k = r.shape[1] if r.ndim == 2 else 0
        return np.full(k, np.nan), np.full(k, np.nan)
    lo, hi = np.full(r.shape[1], np.nan), np.full(r.shape[1], np.nan)
    for j in range(r.shape[1]):
        c = r[:, j][np.isfinite(r[:, j])]
        if len(c):
            lo[j], hi[j] = np.percentile(c, 100 * alpha / 2), np.percentile(c, 100 * (1 - alpha / 2))
    return lo, hi
