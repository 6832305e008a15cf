"""How steady a judge is across prompt variants (issue 64; HANNA's judges were each asked with four prompts,
Chhun et al., TACL 2024): how often two texts of one prompt change order when the judge's prompt changes, and
what share of the judge's score variance the prompt variant carries. Pure numpy."""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from creval.measures.stats.resample import boot_p, boot_rng, percentile


def flip_counts(scores: np.ndarray, group: Sequence | None = None) -> dict:
    """Per prompt (``group``; all texts one prompt when None), ``(flips, pairs)`` over every pair of its texts and
    every pair of variants that orders both texts strictly: how many of those pairs of orders disagree."""
    s = np.asarray(scores, float)
    g = np.zeros(len(s), int) if group is None else np.asarray(group, dtype=object)
    out = {}
    for key in dict.fromkeys(g.tolist()):
        rows = np.flatnonzero(g == key)
        flips = pairs = 0
        for a, b in itertools.combinations(rows, 2):
            d = np.sign(s[a] - s[b])                          # the order of the two texts under each variant
            ordered = d[np.isfinite(d) & (d != 0)]
            n_pos, n_neg = int((ordered > 0).sum()), int((ordered < 0).sum())
            k = n_pos + n_neg
            pairs += k * (k - 1) // 2
            flips += n_pos * n_neg
        out[key] = (flips, pairs)
    return out


def flip_rate(scores: np.ndarray, group: Sequence | None = None, n_boot: int = 0, seed: int = 0) -> dict:
    """``scores``: texts x variants (NaN where unread). The share of ordered pairs (:func:`flip_counts`) whose two
    orders disagree: ``{flips, pairs, rate, lo, hi}`` (rate NaN when no pair is ordered under two variants), the
    interval from ``n_boot`` resamples of the prompts (none when 0)."""
    counts = np.array(list(flip_counts(scores, group).values()), float).reshape(-1, 2)
    flips, pairs = (int(v) for v in counts.sum(axis=0))
    out = {"flips": flips, "pairs": pairs, "rate": flips / pairs if pairs else math.nan, "lo": math.nan,
           "hi": math.nan}
    if n_boot and len(counts) > 1:
        rng = boot_rng(seed)
        with np.errstate(all="ignore"):
            reps = [(c := counts[rng.integers(0, len(counts), len(counts))].sum(axis=0))[0] / c[1]
                    for _ in range(n_boot)]
        ci = percentile(reps, 0.05, n_boot)
        out.update(lo=ci["lo"], hi=ci["hi"])
    return out


def variant_share(scores: np.ndarray) -> dict:
    """The share of a judge's score variance that is not the text's (texts x variants, complete rows only): a
    two-way decomposition without replication, ``text`` (between texts), ``variant`` (between variants) and
    ``inconsistency`` (text x variant, the residual); the prompt's share is ``variant + inconsistency``."""
    s = np.asarray(scores, float)
    s = s[np.isfinite(s).all(axis=1)]
    if s.shape[0] < 2 or s.shape[1] < 2:
        return {"text": math.nan, "variant": math.nan, "inconsistency": math.nan, "n": int(s.shape[0])}
    grand = s.mean()
    ss_text = s.shape[1] * ((s.mean(axis=1) - grand) ** 2).sum()
    ss_var = s.shape[0] * ((s.mean(axis=0) - grand) ** 2).sum()
    total = ((s - grand) ** 2).sum()
    if total == 0:
        return {"text": math.nan, "variant": math.nan, "inconsistency": math.nan, "n": int(s.shape[0])}
    return {"text": ss_text / total, "variant": ss_var / total, "inconsistency": (total - ss_text - ss_var) / total,
            "n": int(s.shape[0])}


def flip_gap(judge: np.ndarray, people: np.ndarray, group: Sequence, n_boot: int = 0, seed: int = 0) -> dict:
    """How much more often a judge's order of two texts of one prompt flips when its wording changes than the
    people's order flips when the rater changes: the judge's flip rate (``judge``: texts x wordings) minus the
    people's (``people``: texts x raters, each rater a "wording"), both by :func:`flip_counts`, with an interval
    from ``n_boot`` resamples of the prompts drawn once for both (so the two rates share each draw).
    ``{value, judge, people, pairs, people_pairs, prompts, lo, hi, mc_lo, mc_hi, p}``; ``p`` one-sided, on the side
    the resamples lean (the test that decides a *supports* or *contradicts*, as the card's Holm correction reads
    every row's p)."""
    j, h = flip_counts(judge, group), flip_counts(people, group)
    keys = [k for k in j if j[k][1] and h.get(k, (0, 0))[1]]       # prompts where both orders were compared
    jc = np.array([j[k] for k in keys], float).reshape(-1, 2)
    hc = np.array([h[k] for k in keys], float).reshape(-1, 2)

    def gap(rows: np.ndarray) -> float:
        a, b = jc[rows].sum(axis=0), hc[rows].sum(axis=0)
        return a[0] / a[1] - b[0] / b[1] if a[1] and b[1] else math.nan

    every = np.arange(len(keys))
    out = {"value": gap(every) if len(keys) else math.nan, "prompts": len(keys),
           "judge": jc[:, 0].sum() / jc[:, 1].sum() if len(keys) else math.nan,
           "people": hc[:, 0].sum() / hc[:, 1].sum() if len(keys) else math.nan,
           "pairs": int(jc[:, 1].sum()), "people_pairs": int(hc[:, 1].sum()),
           "lo": math.nan, "hi": math.nan, "mc_lo": math.nan, "mc_hi": math.nan, "p": math.nan}
    if n_boot and len(keys) > 1:
        rng = boot_rng(seed)
        reps = [gap(rng.integers(0, len(keys), len(keys))) for _ in range(n_boot)]
        ci = percentile(reps, 0.05, n_boot)
        out.update(lo=ci["lo"], hi=ci["hi"], mc_lo=ci["mc_lo"], mc_hi=ci["mc_hi"],
                   p=min(boot_p(reps, 0.0, 1), boot_p(reps, 0.0, -1)))
    return out
