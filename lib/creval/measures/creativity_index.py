"""Creativity index (Lu et al. 2024c; as used by Lu et al. 2025, "Rethinking creativity evaluation", App. B).

For a text x of N word tokens and a reference corpus C:

    cov_L(x)  = |U_{i : x[i:i+L] in C} {i, ..., i+L-1}| / N      (words inside a reused window of L words)
    uniq_L(x) = 1 - cov_L(x)                                       (L-uniqueness; 1.0 when N < L)
    CI(x)     = mean_{L in Ls} uniq_L(x)    (Rethinking: Ls = 5..7)   or   sum_{L in Ls} uniq_L(x)

The anchors' DJ Search records matched spans of length >= L and takes their union; every sub-window of a
matched span is itself matched, so that union equals the union of matched windows of length exactly L,
which is what is computed here (one vectorised membership test per window and length). The aggregation is
always explicit (``agg="mean"`` as Rethinking, ``"sum"`` as the membership-inference code of the Salieri
lineage) and recorded with the result.

References: an :class:`~creval.measures.ngram_index.NgramIndex`. Leave-group-out (``exclude_group``): the
windows found only in the scored item's own group (its MacGyver problem, its TTCW plot) do not count.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

from creval.measures.ngram_index import NgramIndex, token_values, window_hashes, word_tokenize

AGGREGATIONS = ("mean", "sum")


@dataclass(frozen=True)
class CIRecord:
    """The creativity index of one text: per-L uniqueness, the aggregate, and what it was measured against."""
    ci: float
    l_uniq: dict
    agg: str
    n_tokens: int
    reference: str
    reference_hash: str
    exclude_group: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["l_uniq"] = {str(k): v for k, v in self.l_uniq.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "CIRecord":
        return cls(float(d["ci"]), {int(k): float(v) for k, v in d["l_uniq"].items()}, d["agg"], int(d["n_tokens"]),
                   d["reference"], d["reference_hash"], d.get("exclude_group"))


def l_range(lo: int, hi: int) -> tuple[int, ...]:
    """The inclusive range lo..hi of n-gram lengths."""
    if lo < 1 or hi < lo:
        raise ValueError(f"bad L range {lo}..{hi}")
    return tuple(range(lo, hi + 1))


def covered(matched_starts: np.ndarray, n: int, L: int) -> np.ndarray:
    """Boolean per token: inside at least one matched window of length L (window i covers i..i+L-1)."""
    diff = np.zeros(n + 1, dtype=np.int64)
    starts = np.flatnonzero(matched_starts)
    np.add.at(diff, starts, 1)
    np.add.at(diff, starts + L, -1)
    return np.cumsum(diff[:n]) > 0


def aggregate(l_uniq: dict, agg: str) -> float:
    if agg not in AGGREGATIONS:
        raise ValueError(f"agg must be one of {AGGREGATIONS}, got {agg!r}")
    vals = list(l_uniq.values())
    return float(np.mean(vals)) if agg == "mean" else float(np.sum(vals))


def l_uniqueness(tokens: Sequence[str], index: NgramIndex, L: int, exclude_group: str | None = None) -> float:
    """uniq_L of one tokenised text (1.0 when it has fewer than L tokens)."""
    n = len(tokens)
    if n < L:
        return 1.0
    return 1.0 - float(covered(index.matched(tokens, L, exclude_group), n, L).sum()) / n


def creativity_index(text: str | Sequence[str], index: NgramIndex, Ls: Iterable[int] = (5, 6, 7), agg: str = "mean",
                     exclude_group: str | None = None) -> CIRecord:
    """CI of one text (a string is tokenised with :func:`word_tokenize`)."""
    toks = word_tokenize(text) if isinstance(text, str) else list(text)
    lu = {L: l_uniqueness(toks, index, L, exclude_group) for L in Ls}
    return CIRecord(aggregate(lu, agg), lu, agg, len(toks), index.name, index.corpus_hash[:16], exclude_group)


def creativity_index_many(texts: Sequence[str], index: NgramIndex, Ls: Iterable[int] = (5, 6, 7), agg: str = "mean",
                          exclude_groups: Sequence[str | None] | None = None) -> list[CIRecord]:
    """CI of many texts at once (the fast path; equal to :func:`creativity_index` per text).

    All texts are concatenated into one array of token values; per length L the window hashes of the whole
    array are computed once, windows that would cross a text boundary are dropped, ONE sorted lookup answers
    the rest, and coverage is a running count of matched window starts: token k is covered iff some matched
    window starts in [k-L+1, k]. Per-text sums come from one ``np.add.reduceat``."""
    Ls = tuple(Ls)
    groups = list(exclude_groups) if exclude_groups is not None else [None] * len(texts)
    if len(groups) != len(texts):
        raise ValueError(f"{len(groups)} groups for {len(texts)} texts")
    toks = [word_tokenize(t) if isinstance(t, str) else list(t) for t in texts]
    sizes = np.array([len(t) for t in toks], dtype=np.int64)
    total = int(sizes.sum())
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(toks) else np.zeros(0, np.int64)
    vals = token_values([w for t in toks for w in t])
    owner = np.repeat(np.arange(len(toks)), sizes)                       # text of each token
    gid = np.array([index.group_id(g) for g in groups], dtype=np.int64)
    end_of = (starts + sizes)[owner] if total else np.zeros(0, np.int64)  # end of each token's text
    per_text: list[dict] = [dict() for _ in texts]
    nonempty = sizes > 0
    for L in Ls:
        uniq = np.ones(len(toks))
        if total >= L:
            h = window_hashes(vals, L)                                    # windows starting at 0..total-L
            pos = np.arange(h.size)
            valid = pos + L <= end_of[:h.size]
            hit = np.zeros(h.size, dtype=bool)
            hit[valid] = index.lookup(h[valid], L, gid[owner[:h.size][valid]])
            c = np.concatenate([[0], np.cumsum(hit)])                     # c[k] = matched starts before k
            k = np.arange(total)
            lo = np.maximum(k - L + 1, 0)
            cov = (c[np.minimum(k + 1, h.size)] - c[np.minimum(lo, h.size)]) > 0
            if nonempty.any():
                covered_n = np.add.reduceat(cov.astype(np.int64), starts[nonempty])
                frac = covered_n / sizes[nonempty]
                long_enough = sizes[nonempty] >= L
                uniq[np.flatnonzero(nonempty)[long_enough]] = 1.0 - frac[long_enough]
        for j in range(len(toks)):
            per_text[j][L] = float(uniq[j])
    return [CIRecord(aggregate(lu, agg), lu, agg, len(t), index.name, index.corpus_hash[:16], g)
            for lu, t, g in zip(per_text, toks, groups)]


def reused_spans(text: str | Sequence[str], index: NgramIndex, L: int = 5,
                 exclude_group: str | None = None) -> list[tuple[int, int]]:
    """Maximal runs ``[start, end)`` of tokens covered by reused windows of L words (for highlighting):
    the words that make ``uniq_L`` fall below 1."""
    toks = word_tokenize(text) if isinstance(text, str) else list(text)
    if len(toks) < L:
        return []
    cov = covered(index.matched(toks, L, exclude_group), len(toks), L)
    spans, start = [], None
    for i, c in enumerate(list(cov) + [False]):
        if c and start is None:
            start = i
        elif not c and start is not None:
            spans.append((start, i))
            start = None
    return spans


def highlight(text: str, index: NgramIndex, L: int = 5, exclude_group: str | None = None,
              mark: tuple[str, str] = ("[", "]")) -> str:
    """The tokens of ``text`` with every reused span wrapped in ``mark`` (HTML ``<mark>`` in the chapter)."""
    toks = word_tokenize(text)
    out, spans = [], reused_spans(toks, index, L, exclude_group)
    opens = {s for s, _ in spans}
    closes = {e for _, e in spans}
    for i, t in enumerate(toks):
        if i in opens:
            out.append(mark[0])
        out.append(t)
        if i + 1 in closes:
            out.append(mark[1])
    return " ".join(out).replace(f"{mark[0]} ", mark[0]).replace(f" {mark[1]}", mark[1])


def dj_search_spans(tokens: Sequence[str], index: NgramIndex, L_min: int, L_max: int,
                    exclude_group: str | None = None) -> list[tuple[int, int]]:
    """The peers' DJ Search exact loop, minus its network: two pointers over the text, ONE index query
    per window; a matched window grows to the right (up to ``L_max``, then both pointers slide), an
    unmatched one drops its first word (or slides when it is ``L_min`` long). Returns the recorded spans.
    Kept as the naive baseline of the benchmark and tested equal to :func:`creativity_index`."""
    n, spans = len(tokens), []
    f, s = 0, L_min
    while s <= n:
        if index.contains(tokens[f:s], exclude_group):
            if spans and spans[-1][0] == f:
                spans[-1] = (f, s)
            else:
                spans.append((f, s))
            if s - f == L_max:
                f += 1
            s += 1
        elif s - f == L_min:
            f += 1
            s += 1
        else:
            f += 1
    return spans


def ci_from_spans(spans: list[tuple[int, int]], n: int, Ls: Iterable[int], agg: str = "mean") -> float:
    """CI from recorded spans: uniq_L = 1 - |union of spans of length >= L| / n (DJ Search's reading)."""
    lu = {}
    for L in Ls:
        if n < L:
            lu[L] = 1.0
            continue
        cov = np.zeros(n, dtype=bool)
        for a, b in spans:
            if b - a >= L:
                cov[a:b] = True
        lu[L] = 1.0 - cov.sum() / n
    return aggregate(lu, agg)
