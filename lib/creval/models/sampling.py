"""Token sampling on raw logits (numpy), for the in-process backends: temperature and nucleus (top-p) draws with
the log-prob of the chosen token under the model's own (unscaled) distribution."""
from __future__ import annotations

import numpy as np


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Log-softmax over the last axis, computed stably."""
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def sample_token(logits: np.ndarray, temperature: float, top_p: float, rng: np.random.Generator) -> tuple[int, float]:
    """Draw a token from raw ``logits`` with temperature and nucleus (top-p) filtering.

    Returns ``(token, log p(token))`` where the log-prob is from the RAW distribution (log-softmax of
    the unscaled logits), whatever the temperature. Temperature 0 is greedy. Top-p keeps the smallest
    set of most likely tokens whose temperature-scaled mass reaches ``top_p``; only tokens with
    probability >= 1e-6 are sorted, unless they hold less than ``top_p`` (then all are): exact either way.
    """
    z = logits - logits.max()
    e = np.exp(z)
    raw_lse = float(np.log(e.sum(dtype=np.float64)))
    if temperature <= 0:
        t = int(np.argmax(z))
        return t, float(z[t]) - raw_lse
    w = e if temperature == 1.0 else np.exp(z / temperature)
    w = w / w.sum(dtype=np.float64)
    if top_p >= 1.0:
        t = int(rng.choice(w.size, p=w))
        return t, float(z[t]) - raw_lse
    cand = np.flatnonzero(w >= 1e-6)
    if w[cand].sum() < top_p:
        cand = np.arange(w.size)
    order = cand[np.argsort(-w[cand], kind="stable")]
    cum = np.cumsum(w[order], dtype=np.float64)
    keep = min(int(np.searchsorted(cum, top_p)) + 1, order.size)
    t = int(order[rng.choice(keep, p=w[order[:keep]] / cum[keep - 1])])
    return t, float(z[t]) - raw_lse


def shared_groups(prompts: list[list[int]], max_tokens: list[int], n_ctx: int, max_seq: int) -> list[list[int]]:
    """Requests in order, at most ``max_seq`` per group and together within the context ``n_ctx`` (counting every
    prompt whole, so the bound holds whatever prefix they share); one too long for that is alone."""
    groups, cur, used = [], [], 0
    for k, (p, m) in enumerate(zip(prompts, max_tokens)):
        need = len(p) + m + 1
        if need >= n_ctx:
            groups.append([k])
            continue
        if cur and (len(cur) == max_seq or used + need >= n_ctx):
            groups.append(cur)
            cur, used = [], 0
        cur.append(k)
        used += need
    return groups + ([cur] if cur else [])
