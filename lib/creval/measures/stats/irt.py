"""Raters in one graded response model (issue 64): people and LLM judges as the model's items, the rated texts as
its persons, so a judge's severity and discrimination are read on the same scale as the people's.

Samejima's graded response model: rater j scores text i at or above level k with probability
logistic(a_j (theta_i - b_jk)); ``a_j`` is the rater's discrimination (how sharply its scores follow the texts'
latent quality theta), the thresholds ``b_jk`` its severity (their mean: how much quality it needs before it gives
a high score). Fitted by marginal maximum likelihood with ``girth.grm_mml`` (MIT; numpy and scipy only; missing
scores allowed, as when each text has only some of the raters; docs/judges.md says why this library). Intervals
come from resampling the texts' units (prompts) and refitting: the fit gives no standard errors. Pure numpy.
"""
from __future__ import annotations

import math
from typing import Sequence

import girth
import numpy as np

from creval.measures.stats.resample import cluster_draws, percentile

MIN_TEXTS = 20
"""A rater enters the model only with this many texts or more: fewer leave its discrimination unidentified (HANNA's
22 crowd workers include several with a handful of stories), and each rater costs the fit as much as one with all."""

QUADRATURE = 21
"""Quadrature points over the latent scale (girth's default is 41): on HANNA's 27 raters x 1,056 stories the fit
takes a third of the time and its severities and discriminations agree to 0.01 (docs/judges.md)."""


def levels_of(matrix: np.ndarray) -> np.ndarray:
    """The distinct finite scores of ``matrix`` (raters x texts), in order: the scale's levels as used."""
    v = np.asarray(matrix, float)
    return np.unique(v[np.isfinite(v)])


def coded(matrix: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``matrix`` (raters x texts, NaN = not rated) as girth's integer codes: 1..K for the levels (a fractional
    score, such as a judge's mean of samples, rounded to the nearest level), its invalid code where not rated."""
    m = np.asarray(matrix, float)
    out = np.zeros(m.shape, int)
    ok = np.isfinite(m)
    out[ok] = 1 + np.abs(m[ok][:, None] - levels[None, :]).argmin(axis=1)
    return girth.tag_missing_data(out, list(range(1, len(levels) + 1)))


def fit(matrix: np.ndarray, levels: np.ndarray | None = None) -> dict:
    """The graded response model of ``matrix`` (raters x texts): ``discrimination`` and ``severity`` (the mean of
    each rater's thresholds on the latent scale, higher = stricter) per rater, and ``ability`` per text (the
    calibrated score). A rater with fewer than two distinct scores has no discrimination (NaN)."""
    m = np.asarray(matrix, float)
    levels = levels_of(m) if levels is None else np.asarray(levels, float)
    flat = np.array([len(np.unique(r[np.isfinite(r)])) < 2 for r in m], bool)   # no order to read (a resample
    disc, sev = np.full(len(m), math.nan), np.full(len(m), math.nan)      # may leave a rare rater none)
    ability = np.full(m.shape[1], math.nan)
    if (~flat).sum() >= 2:
        with np.errstate(all="ignore"):      # girth takes the log of zero probabilities on its way; harmless
            res = girth.grm_mml(coded(m[~flat], levels), options={"quadrature_n": QUADRATURE})
        d = np.asarray(res["Difficulty"], float)
        sev[~flat] = np.nanmean(np.where(np.isfinite(d), d, np.nan), axis=1)
        disc[~flat] = np.asarray(res["Discrimination"], float)
        if res.get("Ability") is not None:
            ability = np.asarray(res["Ability"], float)
    return {"discrimination": disc, "severity": sev, "ability": ability}


def fit_with_intervals(matrix: np.ndarray, units: Sequence | None = None, n_boot: int = 100, seed: int = 0,
                       alpha: float = 0.05) -> dict:
    """:func:`fit` with percentile intervals from ``n_boot`` refits on texts resampled by ``units`` (a prompt per
    text; each text its own when None): ``discrimination``, ``severity`` and their ``_lo``/``_hi`` per rater.
    The levels are fixed from the data so every refit reads one scale; the scale is centred on the texts'
    latent mean in every fit, so severities compare across refits."""
    m = np.asarray(matrix, float)
    levels = levels_of(m)
    base = fit(m, levels)
    draws = [fit(m[:, idx], levels) for idx in cluster_draws(units, m.shape[1], n_boot, seed)]
    out = dict(base)
    for k in ("discrimination", "severity"):
        reps = np.array([d[k] for d in draws]).reshape(len(draws), m.shape[0])    # no refit: no interval
        bounds = [percentile(reps[:, j], alpha, n_boot) for j in range(m.shape[0])]
        out[f"{k}_lo"] = np.array([b["lo"] for b in bounds])
        out[f"{k}_hi"] = np.array([b["hi"] for b in bounds])
    return out
