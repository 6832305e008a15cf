"""Bradley-Terry strengths of several models from pairwise outcomes, with bootstrap intervals over items and
the ranking's noise floor. Pure: outcomes in, numbers out.

Model (Bradley and Terry 1952): model i beats model j with probability

    P(i > j) = p_i / (p_i + p_j),      p_i = exp(theta_i)                                        (1)

fitted to every pair at once (not against one baseline, as arena-hard-auto recommends) by maximum likelihood,
whose maximum is the fixed point of the minorise-maximise iteration of Hunter (2004, Eq. 3):

    p_i <- W_i / sum_{j != i} n_ij / (p_i + p_j)                                                  (2)

where W_i is i's wins (a tie counts as half a win for each side) and n_ij the comparisons of i and j. A model
that never wins (or never loses) has no finite MLE; ``prior`` adds that many virtual ties to every pair that
was compared (a small symmetric pseudo-count: the estimate of an unbeaten model stays finite and the order of
the others is untouched). Strengths are reported as theta centred on mean 0.

Intervals: each bootstrap replicate resamples the items (with replacement; every comparison of a drawn item
comes along) and refits (2). The **noise floor** of the ranking: replicates are taken two by two and compared:
the mean Kendall tau between their orders, and the share of replicate pairs whose orders are identical (how
often two runs of the same judge on other items of the same kind would agree on the order).
"""
from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np

from creval.core.errors import CrevalError
from creval.measures.stats.ranks import rank_bounds, standing
from creval.measures.stats.resample import boot_rng


def win_matrix(models: Sequence[str], outcomes: Sequence[tuple[str, str, float]]) -> tuple[np.ndarray, np.ndarray]:
    """``W[i, j]`` = i's wins over j (``score`` 1: a wins, 0.5: tie, 0: b wins) and ``N[i, j]`` comparisons."""
    idx = {m: k for k, m in enumerate(models)}
    k = len(models)
    W, N = np.zeros((k, k)), np.zeros((k, k))
    for a, b, s in outcomes:
        if a == b:
            continue
        if not 0.0 <= float(s) <= 1.0:
            raise CrevalError(f"pairwise score {s!r} of {a} vs {b} is not in [0, 1]", "use 1, 0.5 or 0")
        i, j = idx[a], idx[b]
        W[i, j] += s
        W[j, i] += 1.0 - s
        N[i, j] += 1
        N[j, i] += 1
    return W, N


def loglik(theta: np.ndarray, W: np.ndarray, N: np.ndarray) -> float:
    """The log-likelihood of Eq. 1: sum over ordered pairs of W_ij log P(i > j) (ties as half wins)."""
    d = theta[:, None] - theta[None, :]
    return float(np.sum(W * -np.logaddexp(0.0, -d)))


def fit(models: Sequence[str], outcomes: Sequence[tuple[str, str, float]], prior: float = 0.1,
        tol: float = 1e-9, max_iter: int = 100) -> np.ndarray:
    """theta (Eq. 1), centred on mean 0: the maximum of the log-likelihood (the fixed point of Eq. 2), found by
    Newton steps with backtracking (the likelihood is concave in theta; a few steps suffice where the MM
    iteration of Eq. 2 crawls when one model dominates). A model with no comparison gets NaN."""
    W, N = win_matrix(models, outcomes)
    seen = N > 0
    W, N = W + prior / 2 * seen, N + prior * seen
    played = N.sum(1) > 0
    k = int(played.sum())
    theta = np.zeros(len(models))
    if k == 0:
        return np.full(len(models), np.nan)
    Wp, Np = W[np.ix_(played, played)], N[np.ix_(played, played)]
    t = np.zeros(k)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(t[:, None] - t[None, :])))
        grad = Wp.sum(1) - (Np * p).sum(1)
        w = Np * p * (1 - p)
        H = w - np.diag(w.sum(1))                      # negative semi-definite; constant shifts are free
        step = np.linalg.lstsq(H - np.ones((k, k)) / k, -grad, rcond=None)[0]
        base, a = loglik(t, Wp, Np), 1.0
        while a > 1e-6 and loglik(t + a * step, Wp, Np) < base - 1e-12:
            a /= 2
        t = t + a * step
        t -= t.mean()
        if np.max(np.abs(a * step)) < tol:
            break
    theta[played] = t
    theta[~played] = np.nan
    return theta


def win_probability(theta_a: float, theta_b: float) -> float:
    """P(a beats b) under Eq. 1."""
    return float(1.0 / (1.0 + np.exp(theta_b - theta_a)))


def order(theta: np.ndarray) -> list[int]:
    """Indices from strongest to weakest (NaN last)."""
    return sorted(range(len(theta)), key=lambda i: (np.isnan(theta[i]), -np.nan_to_num(theta[i], nan=0.0)))


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-a of two score vectors over the same models (ties in either count 0); NaN under 2."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    pairs = list(combinations(range(len(x)), 2))
    if not pairs:
        return float("nan")
    return float(sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs) / len(pairs))


def bootstrap(models: Sequence[str], outcomes: Sequence[tuple[str, str, str, float]], n_boot: int = 200,
              seed: int = 0, prior: float = 0.1) -> dict:
    """Bradley-Terry over ``outcomes`` = ``(item, a, b, score)`` with bootstrap over items.

    Returns ``theta`` (full data), ``lo``/``hi`` (95% percentile intervals), ``rank`` (1 = strongest),
    ``rank_lo``/``rank_hi``, ``replicates`` (n_boot x models), and the noise floor: ``tau_between``
    (mean Kendall tau of replicate pairs' thetas) and ``same_order`` (share of replicate pairs with the
    same order)."""
    models = list(models)
    items = sorted({o[0] for o in outcomes})
    if not items:
        raise CrevalError("Bradley-Terry: no pairwise outcome to fit", "judge at least one pair of models")
    by_item: dict[str, list] = {}
    for it, a, b, s in outcomes:
        by_item.setdefault(it, []).append((a, b, s))
    theta = fit(models, [o for it in items for o in by_item[it]], prior)
    rng = boot_rng(seed)
    reps = np.array([fit(models, [o for k in rng.integers(0, len(items), len(items)) for o in by_item[items[k]]],
                         prior) for _ in range(n_boot)]).reshape(n_boot, len(models))
    ranks = np.array([_ranks(r) for r in reps]).reshape(n_boot, len(models))
    rank_lo, rank_hi = rank_bounds(ranks)
    pairs = [(reps[i], reps[i + 1]) for i in range(0, n_boot - 1, 2)]
    taus = [kendall_tau(np.nan_to_num(a, nan=-1e9), np.nan_to_num(b, nan=-1e9)) for a, b in pairs]
    same = [bool(np.array_equal(_ranks(a), _ranks(b))) for a, b in pairs]
    q = lambda a, p: np.nanpercentile(a, p, axis=0) if len(a) else np.full(len(models), np.nan)  # noqa: E731
    return {"models": models, "items": len(items), "theta": theta, "lo": q(reps, 2.5), "hi": q(reps, 97.5),
            "rank": _ranks(theta), "rank_lo": rank_lo, "rank_hi": rank_hi, "replicates": reps,
            "tau_between": float(np.mean(taus)) if taus else float("nan"),
            "same_order": float(np.mean(same)) if same else float("nan")}


def _ranks(theta: np.ndarray) -> np.ndarray:
    """Rank 1 = strongest; equal strengths (within 1e-9) share the better rank; NaN ranks last."""
    return standing(theta, tol=1e-9, nan_last=True)
