"""Diversity of a set of texts (paper appendix C.3): average pairwise cosine similarity of sentence
embeddings, self-BLEU and distinct-n; plus per-item "distance from the crowd" versions and the SemDis
baseline used to validate them on human-rated data.

Every set-level function takes a list of texts (the ``n`` samples of one step, or a set of whole
solutions) and returns NaN when the set is too small for the metric to exist (fewer than 2 texts, or
no n-grams), never an exception. Direction: for cosine and self-BLEU *higher = less diverse*; for
distinct-n *higher = more diverse*.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd

from creval.models.embeddings import Embedder

NAN = float("nan")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize(text: str) -> list[str]:
    """Tokenisation for distinct-n: lowercase, then maximal runs of letters/digits with an optional
    apostrophe suffix (``don't``, ``it's``); punctuation and whitespace are separators and are dropped.
    ``"Tie the rope; don't cut it!" -> ['tie', 'the', 'rope', "don't", 'cut', 'it']``."""
    return _TOKEN.findall(text.lower())


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Distinct-n (Li et al. 2016) over the whole set:

        distinct-n = |unique n-grams over all texts| / |n-grams over all texts (with repeats)|

    n-grams are taken within each text (never across text boundaries) after :func:`tokenize`.
    In (0, 1]; higher = more diverse. NaN when the set has no n-gram at all."""
    grams: list[tuple[str, ...]] = []
    for t in texts:
        grams.extend(_ngrams(tokenize(t), n))
    return len(set(grams)) / len(grams) if grams else NAN


def _cos_matrix(vecs: np.ndarray) -> np.ndarray:
    v = np.asarray(vecs, dtype=float)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    v = v / norms
    return v @ v.T


def avg_cosine_similarity(texts: Sequence[str], embedder=None, vectors: np.ndarray | None = None) -> float:
    """Average pairwise cosine similarity of sentence embeddings:

        cos_avg = 2 / (n (n-1)) * sum_{i<j} (e_i . e_j) / (|e_i| |e_j|)

    with ``e_i = embedder.encode(texts)[i]`` (default :class:`creval.models.embeddings.Embedder`, all-MiniLM-L6-v2).
    Higher = the texts are closer in meaning = less diverse. NaN for fewer than 2 texts.
    Pass ``vectors`` to skip encoding."""
    if vectors is None:
        if len(texts) < 2:
            return NAN
        vectors = _embedder(embedder).encode(list(texts))
    n = len(vectors)
    if n < 2:
        return NAN
    sim = _cos_matrix(vectors)
    iu = np.triu_indices(n, k=1)
    return float(sim[iu].mean())


def _embedder(embedder):
    if embedder is None:
        embedder = Embedder()
    return embedder


def sentence_bleu(hypothesis: str, references: Sequence[str]) -> float:
    """sacrebleu's sentence BLEU in [0, 1] with its sentence-level defaults: ``13a`` tokenisation,
    case-sensitive, up to 4-grams clipped against all references, brevity penalty against the closest
    reference length, ``smooth_method="exp"`` (NIST/mteval smoothing: the k-th n-gram order with zero
    matches gets precision ``1 / (2^k * total_n)``) and effective order (orders longer than the
    hypothesis are dropped from the geometric mean). 0 when nothing at all matches."""
    import sacrebleu
    refs = [r for r in references]
    if not refs:
        return NAN
    return sacrebleu.sentence_bleu(hypothesis, refs, smooth_method="exp", use_effective_order=True).score / 100.0


def self_bleu(texts: Sequence[str]) -> float:
    """Self-BLEU (Zhu et al. 2018): each text is scored as a hypothesis against all the *other* texts
    as references, and the scores are averaged:

        self-BLEU = 1/n * sum_i BLEU(t_i ; {t_j : j != i})

    with :func:`sentence_bleu` (sacrebleu, exp smoothing, effective order), in [0, 1].
    Higher = more n-gram overlap = less diverse. NaN for fewer than 2 texts."""
    texts = list(texts)
    if len(texts) < 2:
        return NAN
    return float(np.mean([sentence_bleu(t, texts[:i] + texts[i + 1:]) for i, t in enumerate(texts)]))


def diversity(texts: Sequence[str], embedder=None, vectors: np.ndarray | None = None) -> dict:
    """All four diversity metrics of one set: ``{cosine, self_bleu, distinct_1, distinct_2, n}``."""
    texts = list(texts)
    return {"cosine": avg_cosine_similarity(texts, embedder, vectors), "self_bleu": self_bleu(texts),
            "distinct_1": distinct_n(texts, 1), "distinct_2": distinct_n(texts, 2), "n": len(texts)}


def diversity_many(sets: Sequence[Sequence[str]], embedder=None) -> list[dict]:
    """:func:`diversity` for many sets, embedding every text in one batched (cached) call."""
    sets = [list(s) for s in sets]
    flat = [t for s in sets for t in s]
    vecs = _embedder(embedder).encode(flat) if flat else np.zeros((0, 0))
    out, k = [], 0
    for s in sets:
        out.append(diversity(s, vectors=vecs[k:k + len(s)] if len(s) >= 2 else np.zeros((len(s), 1))))
        k += len(s)
    return out


# -- per-item versions: how far one response is from the others (used on human-rated data) ------------------
def item_originality(texts: Sequence[str], groups: Sequence | None = None, embedder=None,
                     bleu: bool = True) -> "pd.DataFrame":
    """Per-item diversity scores, each computed against the other items of the same group (e.g. the other
    responses to the same AUT object). They are the terms whose mean gives the set metric:

    - ``cosine_to_others``  = mean_j!=i cos(e_i, e_j)   (its average over i is :func:`avg_cosine_similarity`)
    - ``bleu_to_others``    = BLEU(t_i ; {t_j : j != i}) (its average over i is :func:`self_bleu`)
    - ``distinct_1``, ``distinct_2`` of the text alone (lexical variety inside the response)

    Lower similarity = more different from the crowd = "more original". NaN where the group has one item.
    ``bleu=False`` leaves ``bleu_to_others`` NaN: it scores each text against every other of its group, which
    is quadratic in the group (thousands of responses per object in a full AUT set). Returns a DataFrame
    aligned with ``texts``."""
    texts = list(texts)
    groups = list(groups) if groups is not None else [0] * len(texts)
    vecs = _embedder(embedder).encode(texts) if texts else np.zeros((0, 1))
    cos = np.full(len(texts), NAN)
    bleus = np.full(len(texts), NAN)
    for g in dict.fromkeys(groups):
        idx = [i for i, x in enumerate(groups) if x == g]
        if len(idx) < 2:
            continue
        sim = _cos_matrix(vecs[idx])
        for a, i in enumerate(idx):
            cos[i] = (sim[a].sum() - sim[a, a]) / (len(idx) - 1)
            if bleu:
                bleus[i] = sentence_bleu(texts[i], [texts[j] for j in idx if j != i])
    return pd.DataFrame({"cosine_to_others": cos, "bleu_to_others": bleus,
                         "distinct_1": [distinct_n([t], 1) for t in texts],
                         "distinct_2": [distinct_n([t], 2) for t in texts]})


def semdis(prompts: Sequence[str], responses: Sequence[str], embedder=None) -> np.ndarray:
    """Semantic-distance baseline (Beaty & Johnson 2021, SemDis): ``1 - cos(e(prompt), e(response))``
    for each (prompt, response) pair, with sentence embeddings instead of SemDis's word-vector spaces.
    For the AUT the prompt is the object ("brick"); larger distance = more original."""
    if not responses:
        return np.zeros(0)
    emb = _embedder(embedder)
    p = emb.encode(list(prompts))
    r = emb.encode(list(responses))
    pn = p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-12)
    rn = r / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), 1e-12)
    return 1.0 - np.sum(pn * rn, axis=1)
