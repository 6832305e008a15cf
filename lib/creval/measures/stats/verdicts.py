"""The one verdict rule of the book (issues 33 and 40), and the small pure tests it rests on.

The rule (:func:`claim_verdict`, specified in docs/verdicts.md) reads a paper's claim off an estimate's
*interval*, never its point: *supports the paper* when the interval lies wholly on the claimed side (a
stronger effect in the claimed direction included), *contradicts the paper* when it lies wholly on the other
side or short of the claimed range, *inconclusive here* when it holds both (at adequate n, with the smallest
effect the test could have detected), *not testable here* when the data cannot test it. "No difference"
claims need a stated margin (two one-sided tests). A verdict that a Monte-Carlo margin on the interval's
bounds could flip is marked *borderline*.

Before it reads the interval, the rule asks whether the data can test the claim at all: each detector below
names one degenerate case (no two samples merged, every comparison tied, a judge that copies the order it was
shown, a constant score, too few units), and any of them makes the claim *not testable here* with that reason.
:func:`agrees` reads a value and its interval against a paper's figure, range or sign. Proportions get
:func:`wilson` intervals; whether an estimate "excludes chance" needs the interval and the test
together (:func:`excludes_chance`).
Everything here is pure: numbers in, a :class:`Verdict` or a reason (``None`` when the data is fine) out.
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

ENOUGH = 30        # items below which a claim is not testable: too few to count as evidence either way
TESTABLE = "not testable here"
SUPPORTS = "supports the paper"
CONTRADICTS = "contradicts the paper"
INCONCLUSIVE = "inconclusive here"
BORDERLINE = "borderline"    # marks a verdict that moving its interval's bounds by their Monte-Carlo margin flips
WORDS = (SUPPORTS, CONTRADICTS, INCONCLUSIVE, TESTABLE)
POWER_Z = 0.8416   # the normal quantile of 80% power: the smallest detectable effect is (z_alpha/2 + POWER_Z) SE
MIN_ITEMS = 5      # fewer items than this make any statistic meaningless (stats.MIN_N)


class Verdict(str):
    """A claim's verdict: one of :data:`WORDS` (or the older *reproduced* / *not reproduced*), with its
    reason (may be empty) and whether it is :data:`BORDERLINE`. It is a ``str`` ("word (reason)", "word,
    borderline (reason)") so that it drops into a sentence; ``.word``, ``.reason`` and ``.borderline`` keep
    the parts apart for tables; ``.label`` is the word with its borderline mark."""

    word: str
    reason: str
    borderline: bool

    def __new__(cls, word: str, reason: str = "", borderline: bool = False) -> "Verdict":
        label = f"{word}, {BORDERLINE}" if borderline else word
        obj = super().__new__(cls, f"{label} ({reason})" if reason else label)
        obj.word, obj.reason, obj.borderline = word, reason, bool(borderline)
        return obj

    @property
    def label(self) -> str:
        return f"{self.word}, {BORDERLINE}" if self.borderline else self.word

    @property
    def testable(self) -> bool:
        return self.word != TESTABLE


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


DEGENERATE_SHARE = 0.9   # a detector fires when at least this share of the items shows the degenerate pattern


def _share(k: int, n: int) -> str:
    return f"every one of {n}" if k == n else f"{k} of {n} ({100 * k / n:.0f}%)"


def all_tied(outcomes: Sequence, tie=0, share: float = DEGENERATE_SHARE) -> str | None:
    """At least ``share`` of the comparisons tied (``outcome == tie``; e.g. a pairwise judge's -1/0/+1 or a
    difference of scores): the ranking left is mostly the tie-break's (a seeded shuffle), not the measure's.
    The reason shows the share."""
    outcomes = list(outcomes)
    k = sum(o == tie for o in outcomes)
    if not outcomes or k < share * len(outcomes):
        return None
    if k == len(outcomes):
        return f"all {k} comparisons tied: the order is the tie-break's"
    return f"{_share(k, len(outcomes))} comparisons tied: the order is mostly the tie-break's"


ORDER_COPY = "the judge copies the order it was shown"
ORDER_COPY_SHARE = 0.75
"""The share of items at which a judge copies the order it was shown. Lower than :data:`DEGENERATE_SHARE`: an
honest ranking judge puts an item at exactly 0.5 under order swapping only when it sits in the middle of an odd
list (at most a third of the items for lists of three or more), and matches a presentation order by chance on
one ranking in k!; so 14 of 16 items (88%) copying is a judge copying the order, not chance (issue 57)."""


def copies_order(means: Sequence[float] | None = None, ranks: Sequence[Sequence] | None = None,
                 shown: Sequence[Sequence] | None = None, tol: float = 1e-9,
                 share: float = ORDER_COPY_SHARE) -> str | None:
    """A judge that returns the order it was shown, on at least ``share`` of the items (one imputed or odd
    item does not hide it). Two signs of it, the share shown in the reason:

    - ``means``: each item's mean preference when presented both first and second (order swapped); an
      order-copying judge gives an item exactly 0.5;
    - ``ranks`` against ``shown``: a ranking equal to the presentation order of its list.
    """
    if means is not None:
        m = [float(x) for x in means if x is not None and not math.isnan(float(x))]
        k = sum(abs(x - 0.5) <= tol for x in m)
        if m and k >= share * len(m):
            verb = "averages" if k == len(m) else "average"
            return f"{ORDER_COPY} ({_share(k, len(m))} items {verb} exactly 0.5 under order swapping)"
    if ranks is not None and shown is not None:
        ranks, shown = [list(r) for r in ranks], [list(s) for s in shown]
        if len(ranks) != len(shown):
            raise ValueError(f"{len(ranks)} rankings for {len(shown)} presented lists")
        k = sum(r == s for r, s in zip(ranks, shown))
        if ranks and k >= share * len(ranks):
            head = f"all {k}" if k == len(ranks) else _share(k, len(ranks))
            return f"{ORDER_COPY} ({head} rankings equal the presentation order)"
    return None


def constant(values: Sequence[float], what: str = "score", share: float = 1.0) -> str | None:
    """At least ``share`` of the (non-missing) values the same (by default every one): a constant ``what``
    can rank nothing; a near-constant one (``share`` < 1, e.g. a judge that says NO to 95% of items) ranks
    only the few others. The reason shows the share."""
    v = [float(x) for x in values if x is not None and not math.isnan(float(x))]
    if len(v) < 2:
        return None
    mode = max(set(v), key=v.count)
    k = v.count(mode)
    if k == len(v):
        return f"a constant {what} ({v[0]:g} on all {len(v)} items)"
    if k >= share * len(v):
        return f"a near-constant {what} ({mode:g} on {_share(k, len(v))} items)"
    return None


def first_reason(*reasons: str | None) -> str | None:
    """The first degenerate reason found (detectors are checked in the order given), or None."""
    return next((r for r in reasons if r), None)


# -- reading a number against the paper -------------------------------------------------------------------
def _side(target) -> int | None:
    if isinstance(target, str):
        return {"+": 1, "positive": 1, ">": 1, "-": -1, "negative": -1, "<": -1}.get(target.strip().lower())
    if isinstance(target, (int, float)) and not isinstance(target, bool) and target in (1, -1):
        return int(target)
    return None


def _missing(*xs) -> bool:
    return any(x is None or (isinstance(x, (int, float)) and math.isnan(float(x))) for x in xs)


def equivalence_margin(claimed) -> float | None:
    """The margin of a "no difference" claim written ``("equivalent", margin)``; None for any other claim."""
    if isinstance(claimed, (tuple, list)) and len(claimed) == 2 and isinstance(claimed[0], str):
        if claimed[0].strip().lower() not in ("equivalent", "equivalence", "same", "="):
            raise ValueError(f"unknown claim {claimed!r}: a no-difference claim is ('equivalent', margin)")
        return abs(float(claimed[1]))
    return None


def outcome(lo: float, hi: float, claimed, null: float | None = 0.0, margin: float | None = None) -> str:
    """The word an interval ``[lo, hi]`` gives a claim (no degeneracy or size check: :func:`claim_verdict`).

    - a direction ``"+"`` / ``"-"`` (or +1 / -1): above (below) ``null``. *supports* when the whole interval
      lies beyond ``null`` on that side; *contradicts* when it lies wholly on the other side, or, given a
      ``margin`` (the smallest effect that matters), wholly short of ``null`` +- ``margin``;
    - a range ``(a, b)`` (a single figure ``(a, a)``) on one side of ``null``: the paper's effect and any
      stronger one in its direction. *supports* when the interval excludes ``null`` and reaches ``a`` (for
      a range above ``null``; mirrored below); *contradicts* when it lies wholly short of the range (so an
      effect weaker than claimed, or of the other sign). A range that holds ``null``, or ``null=None``:
      *supports* when the interval lies inside the range, *contradicts* when it misses it;
    - ``("equivalent", margin)``: no difference beyond ``margin`` (two one-sided tests, Schuirmann 1987:
      a 1 - 2 alpha interval inside ``null`` +- ``margin``). *supports* when the interval lies inside the
      band, *contradicts* when it lies wholly outside it.

    Anything else is *inconclusive here*."""
    lo, hi = sorted((float(lo), float(hi)))
    ref = 0.0 if null is None else float(null)
    band = equivalence_margin(claimed)
    if band is not None:
        if ref - band < lo and hi < ref + band:
            return SUPPORTS
        return CONTRADICTS if lo > ref + band or hi < ref - band else INCONCLUSIVE
    side = _side(claimed)
    if side is not None:
        m = abs(float(margin or 0.0))
        if (lo > ref) if side > 0 else (hi < ref):
            return SUPPORTS
        short = (hi < ref + m if m else hi < ref) if side > 0 else (lo > ref - m if m else lo > ref)
        return CONTRADICTS if short else INCONCLUSIVE
    a, b = sorted(float(t) for t in claimed)
    if null is not None and a > ref:
        return SUPPORTS if lo > ref and hi >= a else CONTRADICTS if hi < a else INCONCLUSIVE
    if null is not None and b < ref:
        return SUPPORTS if hi < ref and lo <= b else CONTRADICTS if lo > b else INCONCLUSIVE
    if a <= lo and hi <= b:
        return SUPPORTS
    return CONTRADICTS if hi < a or lo > b else INCONCLUSIVE


def agrees(value: float, lo: float, hi: float, target, null: float | None = 0.0) -> bool | None:
    """Whether an estimate's interval ``[lo, hi]`` *supports* the paper's ``target`` (:func:`outcome`:
    a direction, a range accepting a stronger effect in its direction, or ``("equivalent", margin)``).
    None when the value or the interval is undefined (the caller's verdict is then *not testable*). Never
    raises on a value outside its interval (a percentile interval need not hold its point): the interval
    decides; the point estimate never does."""
    if _missing(value, lo, hi):
        return None
    return outcome(lo, hi, target, null) == SUPPORTS


def smallest_detectable(lo: float, hi: float, alpha: float = 0.05) -> float:
    """The smallest effect (distance from the null) this test could have detected with 80% power:
    (z_{1-alpha/2} + z_{0.8}) SE, the standard error read off the interval's width, SE = (hi - lo) / 2 z."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return (z + POWER_Z) * abs(hi - lo) / (2 * z)


def _claim_text(claimed, null) -> str:
    band = equivalence_margin(claimed)
    if band is not None:
        return f"within {band:g} of {0.0 if null is None else null:g}"
    side = _side(claimed)
    if side is not None:
        return f"{'above' if side > 0 else 'below'} {0.0 if null is None else null:g}"
    a, b = sorted(float(t) for t in claimed)
    return f"{a:g}" if a == b else f"{a:g} to {b:g}"


def claim_verdict(value: float, lo: float, hi: float, n: int, *, claimed, null: float | None = 0.0,
                  margin: float | None = None, detectable: float | None = None,
                  degenerate: str | None = None, min_n: int = ENOUGH, sample: bool = False,
                  mc: float | tuple[float, float] = 0.0, units: str = "item") -> Verdict:
    """The one verdict rule (docs/verdicts.md). A claim is *not testable here* when the data is degenerate
    (``degenerate``: a detector's reason), when fewer than ``min_n`` independent units (``n``, counted in
    ``units``) carry it, or when its interval is undefined (checked in that order); otherwise
    :func:`outcome` reads the interval ``[lo, hi]`` against ``claimed``, never the point ``value`` (shown
    in the reason only). *inconclusive here* names the smallest effect the test could have detected
    (``detectable``, else :func:`smallest_detectable` from the interval). ``mc``: the Monte-Carlo margin of
    the bounds (one number or ``(lo, hi)``, :func:`creval.measures.stats.resample.mc_margin`); a verdict that
    moving either bound by its margin would change is marked borderline. Bundled sample data is named in
    the reason."""
    tail = ["bundled sample data"] if sample else []
    if degenerate:
        return Verdict(TESTABLE, "; ".join([degenerate] + tail))
    if n < min_n:
        return Verdict(TESTABLE, "; ".join([f"{n} {units}(s), fewer than the {min_n} a verdict needs"] + tail))
    if _missing(lo, hi):
        return Verdict(TESTABLE, "; ".join(["no interval could be computed"] + tail))
    lo, hi = sorted((float(lo), float(hi)))
    word = outcome(lo, hi, claimed, null, margin)
    mlo, mhi = (mc, mc) if isinstance(mc, (int, float)) else mc
    mlo, mhi = (0.0 if _missing(x) else abs(float(x)) for x in (mlo, mhi))
    moved = {outcome(lo + a, hi + b, claimed, null, margin) for a in (-mlo, mlo) for b in (-mhi, mhi)}
    shown = f"{'' if _missing(value) else f'{float(value):.3g} '}[{lo:.3g}, {hi:.3g}] on {n} {units}s"
    paper = _claim_text(claimed, null)
    if word == SUPPORTS:
        why = f"{shown}: the interval lies where the paper put it ({paper})"
    elif word == CONTRADICTS:
        why = f"{shown}: the interval excludes the paper's claim ({paper})"
    else:
        d = smallest_detectable(lo, hi) if detectable is None else detectable
        why = (f"{shown}: the interval holds both the paper's claim ({paper}) and its opposite; the smallest "
               f"effect this test could detect is about {d:.2g}")
    return Verdict(word, "; ".join([why] + tail), borderline=len(moved) > 1)


def seed_verdict(verdicts: Sequence[Verdict]) -> Verdict:
    """One claim's verdicts under several bootstrap seeds: the first, marked borderline unless every seed
    gave the same word."""
    verdicts = list(verdicts)
    if not verdicts:
        raise ValueError("no verdicts to combine")
    words = [v.word for v in verdicts]
    first = verdicts[0]
    flips = len(set(words)) > 1
    reason = first.reason
    if flips:
        reason = "; ".join(t for t in (reason, f"{words.count(first.word)} of {len(words)} seeds give "
                                              f"{first.word}") if t)
    return Verdict(first.word, reason, borderline=first.borderline or flips)


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
