"""Two proportions measured on the same items (a problem solved at state 0 and at state 5; a program passed by
two judges): the exact McNemar test of their difference and Newcombe's score interval for it, the way a
paired 2x2 table is read (Newcombe 1998, "Improved confidence intervals for the difference between binomial
proportions based on paired data", Stat. Med. 17:2635, method 10; McNemar 1947).

The table of ``n`` items, ``x`` the first outcome and ``y`` the second::

                 y true   y false
    x true         a        b        (b: lost)
    x false        c        d        (c: gained)

p_x = (a + b) / n, p_y = (a + c) / n and their difference (b - c) / n depends only on the discordant cells
``b`` and ``c``. Pure: counts or 0/1 sequences in, numbers out.
"""
from __future__ import annotations

import math
from typing import Sequence

from creval.measures.stats.verdicts import wilson


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p of ``b`` discordant pairs one way and ``c`` the other: under the null each
    discordant pair goes either way with probability 1/2, so p = min(1, 2 P(Binomial(b + c, 1/2) <= min(b, c)))
    (McNemar 1947, exact form). 1.0 when there is no discordant pair."""
    if b < 0 or c < 0:
        raise ValueError(f"negative discordant counts {b}, {c}")
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2 ** m
    return min(1.0, 2 * tail)


def newcombe_paired(a: int, b: int, c: int, d: int, alpha: float = 0.05) -> tuple[float, float]:
    """Newcombe's (1998) method 10 interval for p_x - p_y = (b - c) / n of a paired 2x2 table: the Wilson
    intervals [l1, u1] of p_x and [l2, u2] of p_y combined with the phi correlation of the table,
    phi = (ad - bc) / sqrt((a+b)(c+d)(a+c)(b+d)) (0 when a margin is empty):

        lower = D - sqrt((p_x - l1)^2 - 2 phi (p_x - l1)(u2 - p_y) + (u2 - p_y)^2)
        upper = D + sqrt((u1 - p_x)^2 - 2 phi (u1 - p_x)(p_y - l2) + (p_y - l2)^2)

    Unlike a percentile bootstrap it stays honest at 0 and 1. (NaN, NaN) for an empty table."""
    n = a + b + c + d
    if min(a, b, c, d) < 0:
        raise ValueError(f"negative cell in ({a}, {b}, {c}, {d})")
    if n == 0:
        return float("nan"), float("nan")
    px, py = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, alpha)
    l2, u2 = wilson(a + c, n, alpha)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(margins) if margins else 0.0
    diff = px - py
    lo = diff - math.sqrt(max(0.0, (px - l1) ** 2 - 2 * phi * (px - l1) * (u2 - py) + (u2 - py) ** 2))
    hi = diff + math.sqrt(max(0.0, (u1 - px) ** 2 - 2 * phi * (u1 - px) * (py - l2) + (py - l2) ** 2))
    return max(-1.0, lo), min(1.0, hi)


def table(x: Sequence[bool], y: Sequence[bool]) -> tuple[int, int, int, int]:
    """The paired 2x2 table ``(a, b, c, d)`` of two 0/1 outcomes of the same items (see the module's doc)."""
    if len(x) != len(y):
        raise ValueError(f"{len(x)} first outcomes for {len(y)} second ones")
    pairs = [(bool(p), bool(q)) for p, q in zip(x, y)]
    return (pairs.count((True, True)), pairs.count((True, False)), pairs.count((False, True)),
            pairs.count((False, False)))


def paired_change(x: Sequence[bool], y: Sequence[bool], alpha: float = 0.05) -> dict:
    """The change from ``x`` to ``y`` on the same items, every way a reader asks about it: ``n`` items,
    ``k_x``/``k_y`` successes, ``p_x``/``p_y`` with Wilson intervals (``ci_x``/``ci_y``), ``lost`` (b) and
    ``gained`` (c), ``drop`` = p_x - p_y in points of share with Newcombe's interval (``lo``/``hi``), the
    exact McNemar ``p``, and ``kept`` = p_y / p_x (the ratio; NaN when p_x is 0)."""
    a, b, c, d = table(x, y)
    n = a + b + c + d
    lo, hi = newcombe_paired(a, b, c, d, alpha)
    k_x, k_y = a + b, a + c
    return {"n": n, "k_x": k_x, "k_y": k_y, "p_x": k_x / n if n else float("nan"),
            "p_y": k_y / n if n else float("nan"), "ci_x": wilson(k_x, n, alpha), "ci_y": wilson(k_y, n, alpha),
            "lost": b, "gained": c, "drop": (b - c) / n if n else float("nan"), "lo": lo, "hi": hi,
            "p": mcnemar_exact(b, c), "kept": k_y / k_x if k_x else float("nan")}


def share_interval(values: Sequence[float], alpha: float = 0.05) -> tuple[float, float]:
    """Interval of the mean of per-item values in [0, 1] (pass@1 and following are 0/1; divergent and NeoGauge
    are per-problem shares): the Wilson interval with k = sum(values). For 0/1 values it is Wilson's exactly;
    for shares it is conservative, since among variables in [0, 1] with mean p the Bernoulli has the largest
    variance, p(1 - p). Unlike a percentile bootstrap it is not [0, 0] when every value is 0 (0 of 97 gives
    [0, 0.038]). NaN values are dropped; (NaN, NaN) when none is left."""
    v = [float(x) for x in values if x is not None and x == x]
    if any(not 0.0 <= x <= 1.0 for x in v):
        raise ValueError("share_interval takes values in [0, 1]")
    return wilson(sum(v), len(v), alpha) if v else (float("nan"), float("nan"))
