"""Many claims at once (issue 40): Holm's step-down and Benjamini-Hochberg's step-up adjustment of p-values,
and the adjusted verdict shown beside the raw one on the report card.

With 26 rows at alpha 0.05, about one "finding" is expected by chance alone; Holm (1979) controls the chance
of any false finding, Benjamini & Hochberg (1995) the expected share of false findings. Pure numpy.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from creval.measures.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, Verdict


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values: sorted ascending, p_(i) * (m - i + 1) made monotone, capped
    at 1. NaN p-values stay NaN and do not count in m."""
    p = np.asarray(pvalues, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out.tolist()


def bh(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg (1995) step-up adjusted p-values (q-values): p_(i) * m / i, made monotone from the
    largest down, capped at 1. NaN p-values stay NaN and do not count in m."""
    p = np.asarray(pvalues, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 1.0
    for i in range(m - 1, -1, -1):
        j = order[i]
        running = min(running, p[j] * m / (i + 1))
        out[j] = running
    return out.tolist()


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
