"""How far raters agree with one another: the reliability of a mean of raters (Spearman-Brown), the
expected correlation of one more rater with that mean, and the noise ceiling it sets (classical test theory)."""
from __future__ import annotations

import numpy as np


def spearman_brown(r: float, k: float) -> float:
    """Reliability of the mean of ``k`` raters when one rater's reliability (correlation with another) is
    ``r``: k r / (1 + (k - 1) r) (Spearman 1910; Brown 1910)."""
    return float(k * r / (1 + (k - 1) * r)) if np.isfinite(r) and 1 + (k - 1) * r != 0 else float("nan")


def one_vs_mean(r: float, k: float) -> float:
    """Expected correlation of one more rater with the mean of ``k`` other raters, all of equal variance
    and pairwise correlation ``r``: r * sqrt(k / (1 + (k - 1) r)). What a judge as good as one person scores
    against a k-rater mean."""
    d = 1 + (k - 1) * r
    return float(r * np.sqrt(k / d)) if np.isfinite(r) and d > 0 else float("nan")


def noise_ceiling(r: float, k: float) -> float:
    """The highest correlation any scorer can reach against a k-rater mean: the square root of that mean's
    reliability, sqrt(spearman_brown(r, k)) (classical test theory)."""
    rel = spearman_brown(r, k)
    return float(np.sqrt(rel)) if np.isfinite(rel) and rel >= 0 else float("nan")
