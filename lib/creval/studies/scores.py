"""A judge's score as the chapters show it: never a bare mean, always with how many texts it averages (n), its
95% bootstrap interval over those texts, and the mean length in words of the texts it scored (a judge that
prefers longer texts shows it here first); and a rating scale stated with its anchors.

Pure: scores and lengths in, numbers and strings out. One place for this, so every chapter prints a judge
score the same way: :func:`score_summary` gives the numbers, :func:`fmt_score` the cell, :func:`score_table`
one row per group, :func:`scale_note` the sentence that states a scale.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num

SCORE_COLUMNS = ["n", "mean", "lo", "hi", "words"]


def score_summary(scores: Sequence[float], words: Sequence[float] | None = None, n_boot: int = 1000,
                  seed: int = 0) -> dict:
    """``n`` scored texts (unscored ones, NaN, left out), their ``mean`` score with its percentile bootstrap
    interval ``lo``/``hi`` (NaN below :data:`~creval.measures.stats.correlation.MIN_N` texts), and ``words``: the mean
    length of the same texts (those with a score), NaN when no lengths are given."""
    x = pd.to_numeric(pd.Series(list(scores)), errors="coerce").to_numpy(dtype=float)
    keep = np.isfinite(x)
    w = (pd.to_numeric(pd.Series(list(words)), errors="coerce").to_numpy(dtype=float)[keep]
         if words is not None else np.array([]))
    x = x[keep]
    lo, hi = corr.bootstrap_ci(np.mean, x, n_boot=n_boot, seed=seed) if len(x) else (np.nan, np.nan)
    return {"n": int(len(x)), "mean": float(x.mean()) if len(x) else np.nan, "lo": float(lo), "hi": float(hi),
            "words": float(np.nanmean(w)) if len(w) and np.isfinite(w).any() else np.nan}


def fmt_score(summary: dict, digits: int = 2) -> str:
    """``mean [lo, hi] (n=…; … words)``: each number rounded once; the interval left out where undefined, the
    length where unknown."""
    if not summary.get("n"):
        return "– (n=0)"
    words = summary.get("words", np.nan)
    length = f"; {num.fmt_number(words, 0)} words" if words == words else ""
    return f"{num.fmt_estimate(summary['mean'], summary['lo'], summary['hi'], digits)} (n={summary['n']}{length})"


def score_table(frame: pd.DataFrame, by: list[str], score: str = "value", words: str | None = "words",
                n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per group of ``frame`` (columns ``by``): the group's :func:`score_summary` of column ``score``
    (lengths from column ``words`` when it is there) and ``score [95% CI] (n; words)``, the formatted cell."""
    cols = by + SCORE_COLUMNS + ["score [95% CI] (n; words)"]
    if frame is None or frame.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for key, g in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        s = score_summary(g[score], g[words] if words and words in g else None, n_boot=n_boot, seed=seed)
        rows.append({**dict(zip(by, key)), **s, "score [95% CI] (n; words)": fmt_score(s)})
    return pd.DataFrame(rows, columns=cols)


def scale_note(aspects: Iterable[tuple[str, Sequence, str]]) -> str:
    """The rating scales as a sentence: each aspect's name, its range and its anchors, e.g. "Unconventionality
    (1-5: 1 = the standard way …; 5 = …)". ``aspects`` as :data:`creval.measures.rubric.ASPECTS` holds them."""
    parts = []
    for name, allowed, anchors in aspects:
        lo, hi = min(allowed), max(allowed)
        parts.append(f"{name} ({lo:g}-{hi:g}: {anchors})")
    return "Scale" + ("s" if len(parts) > 1 else "") + ": " + "; ".join(parts) + "." if parts else ""


def words_of(texts: Iterable) -> list[int]:
    """The length in words (whitespace-separated) of each text; 0 for a missing one."""
    return [len(str(t).split()) if isinstance(t, str) else 0 for t in texts]


AUT_SCALE = [("creativity score", (1, 2, 3, 4, 5), "1 = least creative (close to the object's usual use, or "
              "impossible); 5 = most creative (surprising and unusual yet workable)")]
"""The 1-5 scale as the score prompt (judges/prompts/aut_score.txt, aut_definition.txt) states it to the judge
(shown beside every chart of these scores)."""
