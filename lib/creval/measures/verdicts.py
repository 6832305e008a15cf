"""The one verdict rule of the book (issue 33), and the small pure tests it rests on.

A claim of a paper is *reproduced*, *not reproduced* or *not testable here*, decided by :func:`decide` from

1. whether the data can test it at all: a detector below names the degenerate case (no two samples merged,
   every comparison tied, a judge that copies the order it was shown, a constant score, too few items);
   any of them makes the claim *not testable here* with that reason;
2. ``ok``, read off the value *and* its interval by :func:`agrees` against the paper's figure, range or
   sign (``None`` when the value or its interval is undefined: *not testable here* too);
3. the number of items: fewer than :data:`ENOUGH` is *not testable here*.

Only then is the claim reproduced (``ok``) or not. Proportions get :func:`wilson` intervals; whether an
estimate "excludes chance" needs the interval and the test together (:func:`excludes_chance`).
Everything here is pure: numbers in, a :class:`Verdict` or a reason (``None`` when the data is fine) out.
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

ENOUGH = 30        # items below which a claim is not testable: too few to count as evidence either way
TESTABLE = "not testable here"
MIN_ITEMS = 5      # fewer items than this make any statistic meaningless (stats.MIN_N)


class Verdict(str):
    """A claim's verdict: *reproduced*, *not reproduced* or *not testable here*, with its reason (may be
    empty). It is a ``str`` ("word (reason)") so that it drops into a sentence; ``.word`` and ``.reason``
    keep the parts apart for tables."""

    word: str
    reason: str

    def __new__(cls, word: str, reason: str = "") -> "Verdict":
        obj = super().__new__(cls, f"{word} ({reason})" if reason else word)
        obj.word, obj.reason = word, reason
        return obj

    @property
    def testable(self) -> bool:
        return self.word != TESTABLE


def decide(ok: bool | None, n: int, *, degenerate: str | None = None, min_n: int = ENOUGH,
           sample: bool = False, unknown: str = "the number or its interval could not be computed") -> Verdict:
    """The one verdict rule of the book. ``ok`` is whether the number agrees with the paper's claim (its
    figure, range or sign, read off the value *and* its interval: :func:`agrees`); ``None`` when it cannot
    be computed (``unknown`` says why). The claim is *not testable here* when the data is degenerate
    (``degenerate`` names why: :func:`no_merge`, :func:`all_tied`, :func:`copies_order`, :func:`constant`,
    :func:`too_few`), when fewer than ``min_n`` items carry it, or when ``ok`` is None; only then is it
    *reproduced* or *not reproduced*. Bundled sample data is named in the reason."""
    tail = ["bundled sample data"] if sample else []
    if degenerate:
        return Verdict(TESTABLE, "; ".join([degenerate] + tail))
    if ok is None:
        return Verdict(TESTABLE, "; ".join([unknown] + tail))
    if n < min_n:
        return Verdict(TESTABLE, "; ".join([too_few(n, min_n)] + tail))
    return Verdict("reproduced" if ok else "not reproduced", "; ".join(tail))


# -- detectors of degenerate data: each returns the reason, or None when the data can test the claim ------
def too_few(n: int, min_n: int = ENOUGH) -> str | None:
    """``n`` items, fewer than ``min_n``: too few to count as evidence either way."""
    return f"{n} item(s), fewer than the {min_n} a verdict needs" if n < min_n else None


def no_merge(classes: Sequence[int], samples: Sequence[int] | int) -> str | None:
    """Semantic entropy (Tan et al., Eq. 2) reduces to naive entropy when the entailment model merged no two
    samples: every step has as many meaning classes as samples. ``classes[i]`` classes of ``samples[i]``
    samples on step i (``samples`` one int for every step). None when any step merged two samples."""
    classes = list(classes)
    sizes = [samples] * len(classes) if isinstance(samples, int) else list(samples)
    if len(sizes) != len(classes):
        raise ValueError(f"{len(classes)} class counts for {len(sizes)} sample counts")
    if not classes or any(c < s for c, s in zip(classes, sizes)):
        return None
    shown = f"{sizes[0]} classes of {sizes[0]}" if len(set(sizes)) == 1 else "as many classes as samples"
    return f"no two samples merged on any of the {len(classes)} steps ({shown}): the check is empty"


def all_tied(outcomes: Sequence, tie=0) -> str | None:
    """Every comparison tied (``outcome == tie``; e.g. a pairwise judge's -1/0/+1 or a difference of
    scores): the ranking left is the tie-break's (a seeded shuffle), not the measure's."""
    outcomes = list(outcomes)
    if not outcomes or any(o != tie for o in outcomes):
        return None
    return f"all {len(outcomes)} comparisons tied: the order is the tie-break's"


ORDER_COPY = "the judge copies the order it was shown"


def copies_order(means: Sequence[float] | None = None, ranks: Sequence[Sequence] | None = None,
                 shown: Sequence[Sequence] | None = None, tol: float = 1e-9) -> str | None:
    """A judge that returns the order it was shown. Two signs of it:

    - ``means``: each item's mean preference when presented both first and second (order swapped); an
      order-copying judge gives every item exactly 0.5;
    - ``ranks`` against ``shown``: every ranking equals the presentation order of its list.
    """
    if means is not None:
        m = [float(x) for x in means if x is not None and not math.isnan(float(x))]
        if m and all(abs(x - 0.5) <= tol for x in m):
            return f"{ORDER_COPY} (every one of {len(m)} items averages exactly 0.5 under order swapping)"
    if ranks is not None and shown is not None:
        ranks, shown = [list(r) for r in ranks], [list(s) for s in shown]
        if len(ranks) != len(shown):
            raise ValueError(f"{len(ranks)} rankings for {len(shown)} presented lists")
        if ranks and all(r == s for r, s in zip(ranks, shown)):
            return f"{ORDER_COPY} (all {len(ranks)} rankings equal the presentation order)"
    return None


def constant(values: Sequence[float], what: str = "score") -> str | None:
    """Every (non-missing) value the same: a constant ``what`` can rank nothing."""
    v = [float(x) for x in values if x is not None and not math.isnan(float(x))]
    if len(v) < 2 or max(v) != min(v):
        return None
    return f"a constant {what} ({v[0]:g} on all {len(v)} items)"


def first_reason(*reasons: str | None) -> str | None:
    """The first degenerate reason found (detectors are checked in the order given), or None."""
    return next((r for r in reasons if r), None)


# -- reading a number against the paper -------------------------------------------------------------------
def _side(target) -> int | None:
    if isinstance(target, str):
        return {"+": 1, "positive": 1, ">": 1, "-": -1, "negative": -1, "<": -1}[target.strip().lower()]
    if isinstance(target, (int, float)) and target in (1, -1):
        return int(target)
    return None


def agrees(value: float, lo: float, hi: float, target, null: float | None = 0.0) -> bool | None:
    """Whether an estimate with its interval ``[lo, hi]`` agrees with the paper. ``target`` is

    - a sign (``"+"``/``"-"`` or +1/-1): the paper says the statistic lies above (below) ``null`` (0 for a
      correlation, 0.5 for an AUROC); agreed only when the whole interval lies on that side;
    - a range ``(a, b)`` (a single figure ``(a, a)``): agreed when the interval overlaps it and, given a
      ``null``, also excludes the null (an interval that holds both the paper and chance tells nothing);
      the value itself must lie inside the interval.

    None when the value or the interval is undefined (the caller's verdict is then *not testable*)."""
    if any(x is None or (isinstance(x, float) and math.isnan(x)) for x in (value, lo, hi)):
        return None
    if not lo <= value <= hi:
        raise ValueError(f"value {value} outside its interval [{lo}, {hi}]")
    side = _side(target)
    if side is not None:
        ref = 0.0 if null is None else null
        return lo > ref if side > 0 else hi < ref
    a, b = sorted(float(t) for t in target)
    overlaps = lo <= b and hi >= a
    clear = null is None or lo > null or hi < null
    return bool(overlaps and clear)


def excludes_chance(lo: float, hi: float, p: float | None, null: float, alpha: float = 0.05) -> bool:
    """"Excludes chance" needs both: the interval strictly excludes ``null`` (a bound *at* chance does not
    exclude it) and the test's two-sided ``p`` is below ``alpha``. ``p=None``: no test was run, the interval
    alone decides; a NaN p or interval excludes nothing."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return False
    outside = lo > null or hi < null
    if p is None:
        return outside
    return bool(outside and not math.isnan(p) and p < alpha)


def wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (Wilson 1927): with z the 1 - alpha/2 normal quantile,
    (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n). Unlike a bootstrap it is honest at the edges:
    12 of 12 gives about [0.76, 1]. (NaN, NaN) for n = 0."""
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= k <= n:
        raise ValueError(f"{k} successes of {n}")
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p, z2 = k / n, z * z
    mid, half = p + z2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lo, hi = (mid - half) / (1 + z2 / n), (mid + half) / (1 + z2 / n)
    return (0.0 if k == 0 else max(0.0, lo)), (1.0 if k == n else min(1.0, hi))
