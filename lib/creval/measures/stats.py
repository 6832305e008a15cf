"""The one statistics module: rank correlations with p-values, bootstrap confidence intervals (which count the
resamples they cannot compute), AUC, classification agreement (accuracy, macro-F1, Cohen's kappa, AUARC, and
:func:`agreement`, which bundles them for yes/no verdicts against gold labels) and a fixed-count binning helper.
The verdict rule (:mod:`creval.measures.verdicts`), number formatting and rater reliability are re-exported.

Every function tolerates tiny or degenerate inputs: pairs with a NaN are dropped, and when fewer than
``MIN_N`` pairs remain (or one side is constant) the result is NaN with a ``note`` saying why, never an
exception. A correlation on fewer than 5 points is not meaningful, whatever its p-value. Label functions take
``(gold, pred)`` (like sklearn's ``(y_true, y_pred)``); a ``None`` prediction means "no verdict" (unparsed)
and each function says how it treats one. Inputs of different lengths are an error; empty input gives NaN.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from creval.measures.numbers import fmt_estimate, fmt_interval, fmt_number
from creval.measures.raters import noise_ceiling, one_vs_mean, spearman_brown
from creval.measures.resample import boot_rng, draw_spread, mc_margin, stratified_draws
from creval.measures.verdicts import (
    ENOUGH,
    TESTABLE,
    Verdict,
    agrees,
    all_tied,
    constant,
    copies_order,
    decide,
    excludes_chance,
    first_reason,
    no_merge,
    too_few,
    wilson,
)

__all__ = ["ENOUGH", "TESTABLE", "Verdict", "agrees", "all_tied", "boot_rng", "constant", "copies_order", "decide",
           "draw_spread", "excludes_chance", "first_reason", "fmt_estimate", "fmt_interval", "fmt_number", "no_merge",
           "noise_ceiling", "one_vs_mean", "spearman_brown", "stratified_draws", "too_few", "wilson"]

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


def _same_length(gold, pred) -> tuple[list, list]:
    gold, pred = list(gold), list(pred)
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} labels but pred has {len(pred)}")
    return gold, pred


def accuracy(gold, pred, parsed_only: bool = False) -> float:
    """Fraction of pairs with ``pred == gold``.

    A ``None`` prediction (no verdict) counts as wrong, so hiding failures cannot raise the score;
    ``parsed_only=True`` instead drops those pairs (accuracy over the parsed verdicts; report coverage
    beside it). NaN when no pair is left."""
    gold, pred = _same_length(gold, pred)
    pairs = [(g, p) for g, p in zip(gold, pred) if not (parsed_only and p is None)]
    return sum(p is not None and p == g for g, p in pairs) / len(pairs) if pairs else float("nan")


def macro_f1(gold, pred, classes=None) -> float:
    """Unweighted mean over ``classes`` of the per-class F1 = 2 TP / (2 TP + FP + FN); a class with
    TP = 0 scores 0 (also when it occurs in neither list). ``classes`` defaults to the labels seen in
    gold or pred; pass them explicitly so that a never-predicted class still counts. NaN when empty."""
    gold, pred = _same_length(gold, pred)
    classes = list(classes) if classes is not None else list(dict.fromkeys(gold + pred))
    if not gold or not classes:
        return float("nan")
    f1s = []
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, pred))
        fp = sum(g != c and p == c for g, p in zip(gold, pred))
        fn = sum(g == c and p != c for g, p in zip(gold, pred))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(f1s) / len(f1s)


def cohen_kappa(a, b, min_n: int = 2) -> float:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e): p_o the observed agreement, p_e = sum_k p_a(k) p_b(k) the
    agreement expected from each rater's marginal label frequencies. Any hashable labels (``None`` is a
    label like any other: drop unparsed pairs first, as :func:`agreement` does).

    Degenerate cases, decided here: fewer than ``min_n`` (2) pairs -> NaN (one pair says nothing about
    chance); both raters give one and the same label to every item (p_e = 1, so 0/0) -> 1.0, the
    agreement is perfect (sklearn returns NaN there). Otherwise the value equals sklearn's
    ``cohen_kappa_score``."""
    a, b = _same_length(a, b)
    n = len(a)
    if n < min_n or n == 0:
        return float("nan")
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((a.count(k) / n) * (b.count(k) / n) for k in set(a) | set(b))
    if pe == 1.0:     # only when both raters are constant on the same label, so po == 1 too
        return 1.0
    return (po - pe) / (1 - pe)


def auarc(correct, confidence) -> float:
    """Area under the accuracy-rejection curve: sort the items by confidence (highest first); for
    m = 1..n keep the m most confident; AUARC = mean over m of their accuracy (one point per rejection
    rate 0, 1/n, ..., (n-1)/n). Within a group of tied confidences every order is equally likely, so
    the group's correct count enters in proportion (exact expectation, no arbitrary tie order). A
    missing confidence (None or NaN) ranks below every number. NaN for empty input."""
    correct, confidence = _same_length(correct, confidence)
    n = len(correct)
    if n == 0:
        return float("nan")
    groups: dict[float, list[bool]] = {}
    for c, s in zip(correct, confidence):
        key = float("-inf") if s is None or np.isnan(float(s)) else float(s)
        groups.setdefault(key, []).append(bool(c))
    accs, kept, right = [], 0, 0.0
    for key in sorted(groups, reverse=True):
        g = groups[key]
        rate = sum(g) / len(g)
        for t in range(1, len(g) + 1):
            accs.append((right + t * rate) / (kept + t))
        kept += len(g)
        right += sum(g)
    return sum(accs) / n


def agreement(gold, pred, confidence=None) -> dict:
    """Yes/no verdicts ``pred`` (None = unparsed) against boolean ``gold`` labels, with optional
    per-verdict ``confidence``. Returns ``{n, parsed, coverage, unparsed, accuracy, accuracy_all, auarc,
    kappa, label_yes_rate}``: coverage = parsed / n; ``accuracy`` over the parsed verdicts,
    ``accuracy_all`` with unparsed counted wrong; ``auarc`` and ``kappa`` over the parsed verdicts
    (:func:`auarc`, :func:`cohen_kappa`); label_yes_rate = share of gold labels that are yes."""
    gold, pred = _same_length(gold, pred)
    confidence = [None] * len(gold) if confidence is None else _same_length(gold, confidence)[1]
    parsed = [(bool(g), bool(p), c) for g, p, c in zip(gold, pred, confidence) if p is not None]
    n = len(gold)
    nan = float("nan")
    return {"n": n, "parsed": len(parsed), "coverage": len(parsed) / n if n else nan,
            "unparsed": n - len(parsed),
            "accuracy": accuracy(gold, pred, parsed_only=True),
            "accuracy_all": accuracy(gold, pred),
            "auarc": auarc([g == p for g, p, _ in parsed], [c for _, _, c in parsed]),
            "kappa": cohen_kappa([p for _, p, _ in parsed], [g for g, _, _ in parsed]),
            "label_yes_rate": sum(map(bool, gold)) / n if n else nan}


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
    :func:`~creval.measures.verdicts.claim_verdict` gives."""
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
