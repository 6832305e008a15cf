"""Whom and what a judge favours beyond the people (issue 64): read on texts that people and the judge both scored
on one scale, each against the people's mean, so a judge is charged only for what the people do not do.

- **Author gap**: within each prompt that has texts by a person and by a model, the judge's score gap (person's
  texts minus models') minus the people's gap on the same texts; the mean over prompts. Negative: the judge
  favours the models' texts more than the people do.
- **Length lean**: the Spearman correlation, within prompts, between a text's length and the judge's excess over
  the people (judge minus people's mean). Positive: the judge rewards length beyond what the people do.

Both with percentile intervals from resampling prompts. Pure numpy.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from creval.measures.stats import correlation as corr
from creval.measures.stats.prompts import within_ranks
from creval.measures.stats.resample import boot_rng, cluster_draws, percentile


def prompt_gaps(judge, people, is_person, prompt) -> np.ndarray:
    """Per prompt holding a person's text and a model's (both scored by the judge and the people): the judge's
    person-minus-model gap minus the people's."""
    x, y = np.asarray(judge, float), np.asarray(people, float)
    who, g = np.asarray(is_person, bool), np.asarray(prompt, dtype=object)
    ok = np.isfinite(x) & np.isfinite(y)
    out = []
    for key in dict.fromkeys(g.tolist()):
        at = ok & (g == key)
        p, m = at & who, at & ~who
        if p.any() and m.any():
            out.append((x[p].mean() - x[m].mean()) - (y[p].mean() - y[m].mean()))
    return np.asarray(out, float)


def author_gap(judge, people, is_person, prompt, n_boot: int = 1000, seed: int = 0) -> dict:
    """:func:`prompt_gaps`' mean with its interval over prompts: ``{value, lo, hi, n_prompts}``."""
    gaps = prompt_gaps(judge, people, is_person, prompt)
    out = {"value": float(gaps.mean()) if gaps.size else math.nan, "lo": math.nan, "hi": math.nan,
           "n_prompts": int(gaps.size)}
    if gaps.size > 1 and n_boot:
        rng = boot_rng(seed)
        ci = percentile([gaps[rng.integers(0, gaps.size, gaps.size)].mean() for _ in range(n_boot)], 0.05, n_boot)
        out.update(lo=ci["lo"], hi=ci["hi"])
    return out


def _lean(excess: np.ndarray, words: np.ndarray, g: np.ndarray) -> float:
    return corr.spearman(within_ranks(words, g), within_ranks(excess, g))["rho"] if len(excess) >= corr.MIN_N \
        else math.nan


def length_lean(judge, people, words, prompt, n_boot: int = 1000, seed: int = 0) -> dict:
    """Spearman, within prompts, of length against the judge's excess over the people's mean, with its interval
    resampling prompts: ``{value, lo, hi, n}`` (texts without a length, such as unreleased ones, left out)."""
    x, y, w = (np.asarray(v, float) for v in (judge, people, words))
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w)
    excess, w, g = (x - y)[ok], w[ok], np.asarray(prompt, dtype=object)[ok]
    out = {"value": _lean(excess, w, g), "lo": math.nan, "hi": math.nan, "n": int(ok.sum())}
    if n_boot and len(set(g.tolist())) > 1:
        reps = [_lean(excess[i], w[i], g[i]) for i in cluster_draws(g, len(g), n_boot, seed)]
        ci = percentile(reps, 0.05, n_boot)
        out.update(lo=ci["lo"], hi=ci["hi"])
    return out


def words(texts: Sequence) -> np.ndarray:
    """Each text's length in words (NaN where the text is not released)."""
    return np.array([len(str(t).split()) if isinstance(t, str) and t.strip() else math.nan for t in texts], float)
