"""Lexical measures of a model's texts, beside the semantic ones. Pure: texts in, numbers out.

- **Over-used words** (:func:`log_odds`): the weighted log-odds ratio of a word between two corpora with an
  informative Dirichlet prior (Monroe, Colaresi and Quinn 2008, "Fightin' Words", Eqs. 16-22). With counts
  y_w^a, y_w^b, totals n^a, n^b and prior counts alpha_w = alpha0 * f_w (f_w: the word's share of a reference
  corpus, here both corpora pooled):

      delta_w = log((y_w^a + alpha_w) / (n^a + alpha0 - y_w^a - alpha_w))
              - log((y_w^b + alpha_w) / (n^b + alpha0 - y_w^b - alpha_w))                       (Eq. 16)
      var(delta_w) ~ 1 / (y_w^a + alpha_w) + 1 / (y_w^b + alpha_w)                               (Eq. 20)
      z_w = delta_w / sqrt(var(delta_w))                                                          (Eq. 22)

  z_w > 0: a over-uses w relative to b. The word lists are derived from the data at hand (a model's texts
  against people's texts on the same items), never from another project's list.
- **Typical-word rate** (:func:`word_rate`): the share of a text's words that belong to a given word set (e.g.
  the words the models over-use relative to people, derived on other items).
- **Repetition across a model's own outputs** (:func:`shared_ngram_share`): the share of a text's word n-grams
  that also occur in at least ``k`` of the same model's other texts.
- **Vocabulary complexity**: :func:`mattr` (moving-average type-token ratio over windows of ``w`` words;
  Covington and McFall 2010: length-independent, unlike the plain TTR), :func:`mean_word_length` (letters per
  word) and :func:`rare_share` (share of words outside the ``top`` most frequent words of a reference corpus).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased alphabetic words (apostrophes inside a word kept); digits and punctuation dropped."""
    return _WORD.findall(str(text).lower())


def counts(texts: Iterable[str]) -> Counter:
    return Counter(w for t in texts for w in words(t))


def log_odds(a: Counter, b: Counter, prior: Counter | None = None, alpha0: float = 1000.0,
             min_count: int = 5) -> list[tuple[str, float, int, int]]:
    """``(word, z, count in a, count in b)`` for every word seen at least ``min_count`` times in a and b
    together, by z (Eqs. 16-22) from most over-used in ``a`` to most over-used in ``b``. ``prior``: the
    reference counts behind alpha_w (default a + b)."""
    prior = prior if prior is not None else a + b
    total = sum(prior.values())
    na, nb = sum(a.values()), sum(b.values())
    if not total or not na or not nb:
        return []
    out = []
    for w in set(a) | set(b):
        ya, yb = a.get(w, 0), b.get(w, 0)
        if ya + yb < min_count:
            continue
        al = alpha0 * prior.get(w, 0) / total
        if al <= 0:
            continue
        d = (math.log((ya + al) / (na + alpha0 - ya - al)) - math.log((yb + al) / (nb + alpha0 - yb - al)))
        out.append((w, d / math.sqrt(1 / (ya + al) + 1 / (yb + al)), ya, yb))
    return sorted(out, key=lambda r: -r[1])


def overused(a: Counter, b: Counter, z: float = 1.96, top: int = 50, **kw) -> list[str]:
    """At most ``top`` words that ``a`` over-uses relative to ``b`` with z above ``z``."""
    return [w for w, s, _, _ in log_odds(a, b, **kw) if s > z][:top]


def word_rate(text: str, vocab: set[str]) -> float:
    """Share of the text's words in ``vocab`` (NaN for a text without words)."""
    ws = words(text)
    return sum(w in vocab for w in ws) / len(ws) if ws else float("nan")


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    ws = words(text)
    return {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def shared_ngram_share(texts: Sequence[str], n: int = 3, k: int = 2) -> list[float]:
    """For each text, the share of its distinct word n-grams found in at least ``k`` of the other texts
    (NaN for a text shorter than n words). Higher: the model reuses its phrasings across answers."""
    grams = [ngrams(t, n) for t in texts]
    df = Counter(g for gs in grams for g in gs)
    return [sum(df[g] - 1 >= k for g in gs) / len(gs) if gs else float("nan") for gs in grams]


def mattr(text: str, w: int = 50) -> float:
    """Moving-average type-token ratio over windows of ``w`` words (the plain TTR for shorter texts)."""
    ws = words(text)
    if not ws:
        return float("nan")
    if len(ws) <= w:
        return len(set(ws)) / len(ws)
    window, ratios = Counter(ws[:w]), [len(set(ws[:w])) / w]
    for i in range(w, len(ws)):
        window[ws[i]] += 1
        window[ws[i - w]] -= 1
        if not window[ws[i - w]]:
            del window[ws[i - w]]
        ratios.append(len(window) / w)
    return float(np.mean(ratios))


def mean_word_length(text: str) -> float:
    ws = words(text)
    return float(np.mean([len(x) for x in ws])) if ws else float("nan")


def common_words(reference: Counter, top: int = 1000) -> set[str]:
    """The ``top`` most frequent words of a reference corpus."""
    return {w for w, _ in reference.most_common(top)}


def rare_share(text: str, common: set[str]) -> float:
    """Share of the text's words outside ``common`` (NaN for a text without words)."""
    ws = words(text)
    return sum(w not in common for w in ws) / len(ws) if ws else float("nan")
