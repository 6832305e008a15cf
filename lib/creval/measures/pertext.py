"""One number per text for every measure that needs no new sample, and the trivial features a measure must
beat. Pure: texts (and, where a measure needs one, a tagged text or an embedder) in, arrays out.

- **Creativity index** with two references built from the user's own texts (Lu et al. 2025, "Rethinking
  creativity evaluation", App. B; :mod:`creval.measures.creativity_index`): *leave-own-item-out* (each text
  against every other text of the file) and *leave-group-out* (each text against the texts of the other
  groups only: a prompt's other answers share its wording, so they would count as reuse).
- **Templates per token** (Rethinking, Sec. 4: the templates are the ``top`` most frequent POS ``n``-grams of
  the file; a text's rate is its template matches over its tokens).
- **Lexical**: distinct-1/2 of the text alone (Li et al. 2016), moving-average type-token ratio and mean word
  length (:mod:`creval.measures.lexical`).
- **Baselines** (:func:`format_features`): length in words, characters per word, lines, list lines, digits
  and markup: what a measure must beat to be said to see more than the surface of a text.
- **Saturation** (:func:`saturation`): the share of texts at a measure's bound (a creativity index of
  exactly 1.0 on short texts), which leaves the measure nothing to rank them by.

Every measure is oriented by :data:`DIRECTION`: +1 when the papers expect more creative texts to score
higher, -1 when lower (templates per token, similarity to the other texts). A measure that needs only the text
is declared with :func:`text_measure` and then computed, named and oriented everywhere the card reads.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from creval.measures import creativity_index as C
from creval.measures import lexical as X
from creval.measures import templates as T
from creval.measures.diversity import distinct_n
from creval.measures.ngram_index import NgramIndex
from creval.measures.perplexity import PPLRecord, perplexity_many

DIRECTION = {"ci_own": 1, "ci_group": 1, "ppl": 1, "bits_per_byte": 1, "templates_per_token": -1,
             "distinct_1": 1, "distinct_2": 1, "mattr": 1, "mean_word_length": 1, "cosine_to_others": -1,
             "prompt_distance": 1, "judge": 1,
             # chapter 06's record columns (studies/rethinking): the same measures under the names its tables use
             "ci": 1, "ci_unmarked": 1, "tpt": -1, "has_template": -1, "ppl_cond": 1, "bpb": 1}
DESCRIBE = {"ci_own": "creativity index, leave-own-item-out", "ci_group": "creativity index, leave-group-out",
            "ppl": "perplexity", "bits_per_byte": "bits per byte",
            "templates_per_token": "templates per token (negated)", "distinct_1": "distinct-1 of the text",
            "distinct_2": "distinct-2 of the text", "mattr": "moving-average type-token ratio",
            "mean_word_length": "mean word length", "cosine_to_others": "cosine to the other texts (negated)",
            "prompt_distance": "semantic distance to the prompt", "judge": "rubric judge (mean of aspects)"}
BASELINES = ("words", "chars_per_word", "lines", "list_lines", "digits", "markup")


@dataclass(frozen=True)
class TextMeasure:
    """A measure read off each text alone, declared once (:func:`text_measure`)."""
    key: str                  # its column in every table
    describe: str             # its name on the card
    direction: int            # +1: the papers expect more creative texts higher; -1: lower
    family: str               # the ``creval grade --measures`` family it is computed with
    compute: Callable[[Sequence[str]], np.ndarray]


DECLARED: dict[str, TextMeasure] = {}
"""The measures declared with :func:`text_measure`, by column."""


def text_measure(key: str, describe: str, direction: int = 1, family: str = "lexical"):
    """Declare ``fn(texts) -> one number per text`` as a card measure: ``creval grade`` computes it with its
    ``family`` (every human set of chapter 07b with it), the card names it ``describe`` and orients it by
    ``direction``. A new card measure is this decorator on one pure function (docs/CONTRIBUTING.md)."""
    if key in DIRECTION or key in BASELINES:
        raise ValueError(f"measure {key!r} is declared already")

    def declare(fn: Callable[[Sequence[str]], np.ndarray]):
        DECLARED[key] = TextMeasure(key, describe, int(direction), family, fn)
        DIRECTION[key], DESCRIBE[key] = int(direction), describe
        return fn
    return declare


def declared(texts: Sequence[str], families: Sequence[str]) -> dict[str, np.ndarray]:
    """Every declared measure of ``families`` on ``texts``, by column."""
    return {m.key: np.asarray(m.compute(texts), float) for m in DECLARED.values() if m.family in families}
_LIST_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_MARKUP = re.compile(r"[#*_`>|\[\]]")


def format_features(texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The trivial features of each text: ``words`` (length in words), ``chars_per_word``, ``lines`` (non-empty
    lines), ``list_lines`` (lines opening with a bullet or a number), ``digits`` and ``markup`` (characters of
    Markdown markup: ``# * _ ` > | [ ]``)."""
    out = {k: np.zeros(len(texts)) for k in BASELINES}
    for i, t in enumerate(texts):
        w = len(t.split())
        lines = [line for line in t.splitlines() if line.strip()]
        out["words"][i] = w
        out["chars_per_word"][i] = len("".join(t.split())) / w if w else 0.0
        out["lines"][i] = len(lines)
        out["list_lines"][i] = sum(1 for line in lines if _LIST_LINE.match(line))
        out["digits"][i] = sum(c.isdigit() for c in t)
        out["markup"][i] = len(_MARKUP.findall(t))
    return out


def lexical(texts: Sequence[str], window: int = 50) -> dict[str, np.ndarray]:
    """Per text: ``distinct_1``, ``distinct_2`` (distinct n-grams over n-grams, the text alone), ``mattr``
    (type-token ratio averaged over windows of ``window`` words) and ``mean_word_length``."""
    return {"distinct_1": np.array([distinct_n([t], 1) for t in texts], float),
            "distinct_2": np.array([distinct_n([t], 2) for t in texts], float),
            "mattr": np.array([X.mattr(t, window) for t in texts], float),
            "mean_word_length": np.array([X.mean_word_length(t) for t in texts], float)}


def ci_references(texts: Sequence[str], ids: Sequence[str], groups: Sequence[str] | None, Ls: Sequence[int],
                  agg: str = "mean") -> dict[str, np.ndarray]:
    """The creativity index of each text against the file's own texts: ``ci_own`` (the reference is every
    other text: leave-own-item-out) and, when ``groups`` is given, ``ci_group`` (the reference is the texts
    of the other groups: leave-group-out)."""
    Ls = tuple(Ls)
    ids = [str(i) for i in ids]
    own = NgramIndex.build(list(zip(ids, texts)), Ls, "own texts (leave-own-item-out)")
    out = {"ci_own": np.array([r.ci for r in C.creativity_index_many(texts, own, Ls, agg, ids)])}
    if groups is not None:
        gs = [str(g) for g in groups]
        by_group = NgramIndex.build(list(zip(gs, texts)), Ls, "other groups' texts (leave-group-out)")
        out["ci_group"] = np.array([r.ci for r in C.creativity_index_many(texts, by_group, Ls, agg, gs)])
    return out


def ci_bound(Ls: Sequence[int], agg: str) -> float:
    """The largest creativity index there is: every uniq_L equals 1 (mean: 1; sum: the number of lengths)."""
    return 1.0 if agg == "mean" else float(len(tuple(Ls)))


def templates_per_token(tagged: Sequence[T.Tagged], n: int = 5, top: int = 100) -> np.ndarray:
    """Each text's template matches per POS token, the templates being the ``top`` most frequent POS
    ``n``-grams of all the texts together (Rethinking, Sec. 4, "templates per token")."""
    return np.array(T.template_stats(list(tagged), n=n, top_n=top)["tpt"], float)


def saturation(values, bound: float, name: str, share: float = 0.2) -> str | None:
    """A warning when at least ``share`` of the texts sit exactly at ``bound`` (their measure cannot tell them
    apart), else None. NaN values are left out of the share."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if not v.size:
        return None
    at = float(np.mean(np.isclose(v, bound)))
    if at < share:
        return None
    return (f"{name} saturates: {100 * at:.0f}% of {v.size} texts score exactly {bound:g}, its bound; "
            "these texts are tied and the measure cannot rank them")


def oriented(name: str, values) -> np.ndarray:
    """``values`` of measure ``name`` times its :data:`DIRECTION` (higher = more creative, as expected)."""
    return DIRECTION.get(name, 1) * np.asarray(values, float)


def perplexity_each(model, texts: Sequence[str], contexts: Sequence[str | None] | None = None,
                    step=lambda: None, width: int = 1) -> list[PPLRecord]:
    """:func:`~creval.measures.perplexity.perplexity_many` one text per call, ``width`` calls in flight, calling
    ``step()`` as each finishes: the model's cache stores each text's log-likelihood as soon as it is computed, so
    an interrupted run resumes where it stopped (a text already scored is read back, not computed again). A
    model that gathers the calls in flight into one batch (transformers) or a server answers ``width`` at once; a
    model that computes one call at a time gains nothing from ``width`` > 1 and loses nothing."""
    ctx = list(contexts) if contexts is not None else [None] * len(texts)
    if width <= 1 or len(texts) <= 1:
        out = []
        for t, c in zip(texts, ctx):
            out.append(perplexity_many(model, [t], [c])[0])
            step()
        return out
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
    got: dict[int, PPLRecord] = {}
    pool = ThreadPoolExecutor(max_workers=width)
    try:
        running = {pool.submit(perplexity_many, model, [t], [c]): i for i, (t, c) in enumerate(zip(texts, ctx))}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                got[running.pop(f)] = f.result()[0]
                step()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)    # the calls in flight finish (and are cached); no new one
    return [got[i] for i in range(len(texts))]
