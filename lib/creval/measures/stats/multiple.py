"""Many claims at once (issue 40): Holm's step-down and Benjamini-Hochberg's step-up adjustment of p-values,
and the adjusted verdict shown beside the raw one on the report card.

With 26 rows at alpha 0.05, about one "finding" is expected by chance alone; Holm (1979) controls the chance
of any false finding, Benjamini & Hochberg (1995) the expected share of false findings. Pure numpy.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from creval.measures.stats.resample import MC_Z
from creval.measures.stats.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, Verdict


def _ranked(pvalues: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The p-values as floats, an all-NaN output of their shape, and the positions of the finite ones in
    ascending order (ties kept in input order): what Holm and Benjamini-Hochberg both start from."""
    p = np.asarray(pvalues, float)
    ok = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, np.nan), ok[np.argsort(p[ok], kind="stable")]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values: sorted ascending, p_(i) * (m - i + 1) made monotone, capped
    at 1. NaN p-values stay NaN and do not count in m."""
    p, out, order = _ranked(pvalues)
    m = order.size
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out.tolist()


def bh(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg (1995) step-up adjusted p-values (q-values): p_(i) * m / i, made monotone from the
    largest down, capped at 1. NaN p-values stay NaN and do not count in m."""
    p, out, order = _ranked(pvalues)
    m = order.size
    running = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]
        running = min(running, p[j] * m / (i + 1))
        out[j] = running
    return out.tolist()


def by(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Yekutieli (2001) adjusted p-values: Benjamini-Hochberg's times c(m) = 1 + 1/2 + ... + 1/m, capped
    at 1, valid under any dependence between the tests (the alternative-annotator test's held-out annotators share
    their references). NaN p-values stay NaN and do not count in m."""
    finite = int(np.isfinite(np.asarray(pvalues, float)).sum())
    c = sum(1.0 / k for k in range(1, finite + 1))
    return [min(1.0, q * c) if q == q else q for q in bh(pvalues)]


def adjusted_borderline(pvalues: Sequence[float], n_boot: int, method: str = "holm", alpha: float = 0.05,
                        z: float = MC_Z) -> list[bool]:
    """Whether each adjusted p could fall on the other side of ``alpha`` under another bootstrap seed. A bootstrap
    p from ``n_boot`` resamples has Monte-Carlo SD sqrt(p (1 - p) / B) (p floored at 1 / (B + 1)); every p is
    moved ``z`` such SDs down, then up (:data:`~creval.measures.stats.resample.MC_Z`: 3 SDs of two seeds' difference)
    and the family adjusted again. Holm and BH are monotone in each p, so the two runs bound what another seed
    gives; a p whose two adjusted values straddle ``alpha`` is borderline. All False when ``n_boot`` is 0.

    A p at the resampling floor, 1 / (B + 1) (no resample on the wrong side), is not moved up: its SD formula
    would rest on a p the resamples put at zero, and such a p marks nothing by itself (issue 57); whether its
    word could move is the interval's question, answered by the raw verdict's borderline mark."""
    p = np.asarray(pvalues, float)
    if n_boot <= 0:
        return [False] * p.size
    floor = np.clip(np.nan_to_num(p, nan=1.0), 1.0 / (n_boot + 1), 1.0)
    d = z * np.sqrt(floor * (1 - floor) / n_boot)
    at_floor = np.nan_to_num(p, nan=1.0) <= 1.0 / (n_boot + 1) + 1e-12
    f = {"holm": holm, "bh": bh}[method]
    lo, hi = f(np.clip(p - d, 0.0, 1.0)), f(np.clip(np.where(at_floor, p, p + d), 0.0, 1.0))
    return [bool(math.isfinite(a) and math.isfinite(b) and (a < alpha) != (b < alpha)) for a, b in zip(lo, hi)]


def adjusted(verdicts: Sequence[Verdict], pvalues: Sequence[float], method: str = "holm",
             alpha: float = 0.05) -> list[Verdict]:
    """Each verdict after adjusting for the family: a *supports* / *contradicts* whose adjusted p (the
    p-value of the test that decided it, one-sided) is not below ``alpha`` becomes *inconclusive here*, with
    the adjusted p in its reason; other verdicts are kept. ``method``: ``holm`` or ``bh``."""
    adj = {"holm": holm, "bh": bh}[method](pvalues)
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[method]
    out = []
    for v, q in zip(verdicts, adj):
        if v.word in (SUPPORTS, CONTRADICTS) and (math.isnan(q) or q >= alpha):
            out.append(Verdict(INCONCLUSIVE, f"{name}-adjusted p = {q:.3g} over {len(verdicts)} claims; "
                                             f"unadjusted: {v.word}"))
        else:
            out.append(v)
    return out
