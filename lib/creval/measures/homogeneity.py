"""Homogeneity of ideas across sources (models, or people) answering the same prompt: pure maths.

Two views of "the same ideas" (Jiang et al. 2025, *Artificial Hivemind*, measure inter-model similarity by
embedding cosine; Wenger and Kenett 2025 compare the spread of LLM and human ideas on creativity tasks):

- **embedding cosine**: the mean cosine similarity of unit-normalised sentence embeddings, between two
  different sources' outputs (``between``) or between two different outputs of one source (``within``);
- **entailment overlap**: the share of source A's ideas that are also one of source B's ideas, where two
  ideas are the same when each entails the other (bidirectional entailment, the equivalence of semantic
  entropy's classes, Kuhn et al. 2023). ``overlap(A, B)`` is not symmetric.

Every function takes one prompt's outputs and returns a float (NaN when undefined); bootstrap intervals over
prompts are :func:`creval.measures.stats.correlation.bootstrap_ci` of their means.
"""
from __future__ import annotations

import numpy as np


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.ndim != 2:
        raise ValueError(f"expected a (texts, dim) array, got shape {v.shape}")
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def cosine_between(a, b) -> float:
    """Mean cosine over every pair (i of A, j of B): (1 / |A||B|) sum_ij cos(a_i, b_j) (the inter-model
    similarity of Jiang et al. 2025, Sec. 4). NaN when a side is empty."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size == 0 or b.size == 0:
        return float("nan")
    return float((_unit(a) @ _unit(b).T).mean())


def cosine_within(a) -> float:
    """Mean cosine over the pairs i < j of one source's outputs (its intra-source similarity). NaN for
    fewer than 2 outputs."""
    a = np.asarray(a, float)
    if a.ndim != 2 or len(a) < 2:
        return float("nan")
    s = _unit(a) @ _unit(a).T
    iu = np.triu_indices(len(a), k=1)
    return float(s[iu].mean())


def same_idea(entails_ab, entails_ba) -> np.ndarray:
    """The boolean matrix ``same[i, j]`` = A_i entails B_j and B_j entails A_i (bidirectional entailment).
    ``entails_ab[i, j]``: A_i entails B_j; ``entails_ba[j, i]``: B_j entails A_i."""
    ab, ba = np.asarray(entails_ab, bool), np.asarray(entails_ba, bool)
    if ab.shape != ba.T.shape:
        raise ValueError(f"entailment matrices of shapes {ab.shape} and {ba.shape} do not transpose")
    return ab & ba.T


def overlap(same) -> float:
    """Share of A's ideas equal to at least one of B's: (1 / |A|) sum_i [exists j: same[i, j]]
    (``same``: |A| x |B|, from :func:`same_idea`). NaN when A is empty; 0 when B is."""
    s = np.asarray(same, bool)
    if s.ndim != 2 or s.shape[0] == 0:
        return float("nan")
    if s.shape[1] == 0:
        return 0.0
    return float(s.any(axis=1).mean())


def overlap_within(same) -> float:
    """Share of one source's ideas equal to another of its own ideas (i != j): the within-source version of
    :func:`overlap` (``same``: square, the source against itself; its diagonal is ignored). NaN for fewer
    than 2 ideas."""
    s = np.asarray(same, bool).copy()
    if s.ndim != 2 or s.shape[0] != s.shape[1] or len(s) < 2:
        return float("nan")
    np.fill_diagonal(s, False)
    return float(s.any(axis=1).mean())
