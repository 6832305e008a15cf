"""Entropy estimators used for divergent creativity (paper section 3.1 and appendix C).

All functions are small, pure numpy and use the **natural logarithm** (results are in nats), so an
entropy over ``n`` samples is bounded by ``ln n``.

Notation. For a query ``x`` we draw ``n`` samples ``s_1..s_n``. Each sample comes with its
*length-normalised* log-likelihood (appendix C)::

    l_i = (1 / N_i) * sum_{j=1..N_i} log P(t_j | t_<j, x)          # the mean token log-prob

which is what :attr:`creval.models.records.Sample.mean_logprob` holds. Using the mean instead of the sum
(eq. 1) keeps long samples from dominating the estimate just because they have more tokens.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["semantic_entropy", "naive_entropy", "discrete_entropy", "class_log_probs", "aggregate", "unweighted"]


def _logsumexp(a: np.ndarray) -> float:
    m = float(np.max(a))
    if not np.isfinite(m):
        return m
    return m + float(np.log(np.sum(np.exp(a - m))))


def _entropy_from_logp(logp: np.ndarray) -> float:
    """``-sum p log p`` for a normalised vector of log-probabilities, clipped at 0 against rounding."""
    p = np.exp(logp)
    h = -float(np.sum(p * np.where(p > 0, logp, 0.0)))      # a class of no mass (log-prob -inf) adds nothing
    return max(h, 0.0) + 0.0          # + 0.0: never -0.0 in a record


def _check(mean_logprobs: Sequence[float]) -> np.ndarray:
    """The log-likelihoods as an array. NaN (a sample the server gave no log-prob for: an empty reply, see
    :attr:`creval.models.records.Sample.mean_logprob`) stays NaN: such a sample has no weight (:func:`_weights`)."""
    lp = np.asarray(mean_logprobs, dtype=float).reshape(-1)
    if lp.size == 0:
        raise ValueError("entropy of zero samples is undefined")
    if np.any(lp == np.inf):
        raise ValueError(f"log-likelihoods must be finite, -inf or NaN (unknown), got {lp.tolist()}")
    return lp


def unweighted(mean_logprobs: Sequence[float]) -> int:
    """How many samples have no log-likelihood (NaN) and so no weight in :func:`class_log_probs`."""
    return int(np.isnan(np.asarray(mean_logprobs, dtype=float)).sum())


def _weights(lp: np.ndarray) -> np.ndarray:
    """The log-weights the classes are summed from: a sample without a log-likelihood (NaN) weighs nothing
    (-inf) rather than probability 1; when no sample has a usable one (all NaN or -inf), all weigh the same."""
    usable = ~np.isnan(lp) & (lp > -np.inf)
    if not usable.any():
        return np.zeros_like(lp)
    return np.where(np.isnan(lp), -np.inf, lp)


def class_log_probs(mean_logprobs: Sequence[float], cluster_ids: Sequence[int]) -> dict[int, float]:
    """Normalised log-probability of each semantic class (eq. 2 with the appendix C normalisation).

    ``log P(C_k | x) = logsumexp_{i in C_k} l_i  -  logsumexp_{i=1..n} l_i``

    i.e. a log-softmax over classes of the summed (length-normalised) sample likelihoods.
    """
    lp = _weights(_check(mean_logprobs))
    ids = np.asarray(cluster_ids).reshape(-1)
    if ids.shape[0] != lp.shape[0]:
        raise ValueError(f"{lp.shape[0]} log-likelihoods but {ids.shape[0]} cluster ids")
    total = _logsumexp(lp)
    return {int(k): _logsumexp(lp[ids == k]) - total for k in dict.fromkeys(ids.tolist())}


def semantic_entropy(mean_logprobs: Sequence[float], cluster_ids: Sequence[int]) -> float:
    """Rao-Blackwellised semantic entropy (paper eqs. 1-3 and appendix C), in nats.

    ``H(x) = - sum_k P(C_k | x) log P(C_k | x)`` where
    ``P(C_k | x) = sum_{i in C_k} exp(l_i) / sum_{i=1..n} exp(l_i)`` and ``l_i`` is sample i's mean
    token log-prob (length normalisation, appendix C).

    Choice on repeats: every drawn sample counts, so a text drawn three times contributes its
    likelihood three times. Repeats are evidence that the model puts mass there (the Monte Carlo
    view); de-duplicating would instead treat the set of distinct texts as the support. With this
    choice ``0 <= H <= ln n`` (``ln n`` when all n samples are in different classes with equal ``l_i``).
    """
    logp = np.array(list(class_log_probs(mean_logprobs, cluster_ids).values()))
    return _entropy_from_logp(logp)


def naive_entropy(mean_logprobs: Sequence[float]) -> float:
    """Sequence-level ("naive") entropy of appendix C.7.1: every sample is its own class.

    Same normalisation as :func:`semantic_entropy`: ``p_i = exp(l_i) / sum_j exp(l_j)`` and
    ``H = -sum_i p_i log p_i`` (nats). Identical to ``semantic_entropy(l, range(n))``.
    """
    lp = _check(mean_logprobs)
    return semantic_entropy(lp, list(range(lp.shape[0])))


def discrete_entropy(cluster_ids: Sequence[int]) -> float:
    """Likelihood-free semantic entropy: class probabilities are cluster counts over ``n``, in nats.

    ``p_k = |C_k| / n`` and ``H = -sum_k p_k ln p_k``.
    """
    ids = np.asarray(cluster_ids).reshape(-1)
    if ids.size == 0:
        raise ValueError("entropy of zero samples is undefined")
    _, counts = np.unique(ids, return_counts=True)
    p = counts / counts.sum()
    return max(-float(np.sum(p * np.log(p))), 0.0) + 0.0


def aggregate(values: Sequence[float], how: str = "mean") -> float:
    """Combine per-step entropies into one solution score (appendix C.7.2): ``mean`` (the paper's
    default), ``min`` or ``max``. NaN values are ignored; an empty input gives NaN."""
    v = np.asarray(values, dtype=float).reshape(-1)
    v = v[~np.isnan(v)]
    if how not in ("mean", "min", "max"):
        raise ValueError(f"unknown aggregation {how!r}; use 'mean', 'min' or 'max'")
    if v.size == 0:
        return float("nan")
    return float({"mean": np.mean, "min": np.min, "max": np.max}[how](v))


def distinct_at_k(cluster_ids: Sequence[int], k: int | None = None) -> int:
    """Number of meaning classes among the first ``k`` samples (all when ``k`` is None): NoveltyBench's
    distinct_k computed on our entailment classes (Zhang et al. 2025)."""
    ids = list(cluster_ids)[: (len(cluster_ids) if k is None else k)]
    return len(set(ids))
