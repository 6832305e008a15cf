"""Agreement of labels with gold labels: accuracy, macro-F1, Cohen's kappa, AUARC, and :func:`agreement`,
which bundles them for yes/no verdicts. Functions take ``(gold, pred)`` (like sklearn's ``(y_true, y_pred)``);
a ``None`` prediction means "no verdict" (unparsed) and each function says how it treats one. Inputs of
different lengths are an error; empty input gives NaN.
"""
from __future__ import annotations

import numpy as np


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
