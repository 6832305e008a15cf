"""The estimand when texts answer prompts (issue 63): a measure is credited only for what it tracks *within* a
prompt. When prompts differ in their mean rating, a pooled correlation also credits a measure that only knows
which prompt a text answers; removing each prompt's level first (ranks within the prompt, centred and scaled by
its size) leaves the within-prompt association, whose null is 0 whatever the prompts' means. With few prompts
the conclusion holds for these prompts only, so beside the bootstrap the mean of the per-prompt statistics gets
the wide interval over prompts (a t-interval, G - 1 degrees of freedom). Pure numpy and scipy.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as st


def within_ranks(v: Sequence[float], group: Sequence) -> np.ndarray:
    """Each value's rank within its group (ties averaged), centred on the group's middle rank and divided by the
    group's size: (r - (n_g + 1) / 2) / n_g, in (-1/2, 1/2), 0 for a group of one. The prompt's level is gone; the
    order within it is kept, so a pooled statistic of these values is a within-prompt one."""
    v = np.asarray(v, float)
    n = len(v)
    if n == 0:
        return np.zeros(0)
    codes = pd.factorize(np.asarray(group, dtype=object))[0]
    order = np.lexsort((v, codes))                       # by group, then by value
    vs, cs = v[order], codes[order]
    at = np.arange(n)
    starts = np.r_[True, cs[1:] != cs[:-1]]
    rank = at - np.maximum.accumulate(np.where(starts, at, 0)) + 1     # 1-based position within the group
    tie = np.cumsum(starts | np.r_[True, vs[1:] != vs[:-1]]) - 1      # runs of equal values within a group
    mean_rank = (np.bincount(tie, weights=rank) / np.bincount(tie))[tie]
    size = np.bincount(cs)[cs].astype(float)
    out = np.empty(n)
    out[order] = (mean_rank - (size + 1) / 2) / size
    out[~np.isfinite(v)] = np.nan
    return out


def per_group(x: Sequence[float], y: Sequence[float], group: Sequence, stat) -> list[dict]:
    """The statistic ``stat(x, y)`` inside each group: ``{group, n, value}`` in order of first appearance (NaN
    where it is undefined there: one text, a constant column)."""
    x, y, g = np.asarray(x, float), np.asarray(y, float), np.asarray(group, dtype=object)
    out = []
    for key in dict.fromkeys(g.tolist()):
        at = g == key
        with np.errstate(all="ignore"):
            v = float(stat(x[at], y[at])) if at.sum() >= 2 else math.nan
        out.append({"group": str(key), "n": int(at.sum()), "value": v})
    return out


def t_interval(values: Sequence[float], alpha: float = 0.05) -> dict:
    """The mean of ``values`` (the per-prompt statistics, NaN left out) with its t-interval over them: mean -+
    t_{1 - alpha/2, G - 1} sd / sqrt(G). ``{value, lo, hi, df}``; no interval (NaN) for fewer than 2 values."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"value": math.nan, "lo": math.nan, "hi": math.nan, "df": 0}
    m = float(v.mean())
    if v.size < 2:
        return {"value": m, "lo": math.nan, "hi": math.nan, "df": 0}
    half = float(st.t.ppf(1 - alpha / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return {"value": m, "lo": m - half, "hi": m + half, "df": int(v.size - 1)}
