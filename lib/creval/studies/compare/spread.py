"""Homogeneity of the models' ideas (and of people's) on the prompts they all answered: embeddings and
entailment through the one call cache (:class:`creval.models.embeddings.Embedder`, the divergent study's
entailment backend), then the pure measures of :mod:`creval.measures.homogeneity`, one row per prompt x
ordered pair of sources (a source against itself: within)."""
from __future__ import annotations

from itertools import product

import numpy as np
import pandas as pd

from creval.measures import homogeneity as H
from creval.measures.clustering import normalise
from creval.measures.nli.backends import Label
from creval.studies.compare.values import PEOPLE

COLUMNS = ["task", "prompt", "a", "b", "n_a", "n_b", "cosine", "overlap"]


def entailment_labels(nli, texts_by_prompt: list[list[str]]) -> dict[tuple[str, str], bool]:
    """``{(premise, hypothesis): entails}`` for every ordered pair of different texts of each prompt, in one
    batch through the backend (each pair cached)."""
    pairs = list(dict.fromkeys((x, y) for texts in texts_by_prompt for x, y in product(texts, texts)
                               if normalise(x) != normalise(y)))
    labels = nli.classify(pairs) if pairs else []
    return {p: lab == Label.ENTAILMENT for p, lab in zip(pairs, labels)}


def entails_matrix(xs: list[str], ys: list[str], entails: dict) -> np.ndarray:
    """``m[i, j]`` = xs[i] entails ys[j] (identical texts, up to whitespace, entail each other)."""
    return np.array([[normalise(x) == normalise(y) or entails.get((x, y), False) for y in ys] for x in xs],
                    dtype=bool).reshape(len(xs), len(ys))


def prompt_rows(task: str, prompt: str, texts: dict[str, list[str]], vec: dict[str, np.ndarray],
                entails: dict) -> list[dict]:
    """One row per ordered pair of sources (a, b) of one prompt: cosine and entailment overlap; a == b gives
    the within-source values."""
    rows = []
    for a, b in product(texts, texts):
        xa, xb = texts[a], texts[b]
        va, vb = np.array([vec[t] for t in xa]), np.array([vec[t] for t in xb])
        same = H.same_idea(entails_matrix(xa, xb, entails), entails_matrix(xb, xa, entails))
        within = a == b
        rows.append({"task": task, "prompt": prompt, "a": a, "b": b, "n_a": len(xa), "n_b": len(xb),
                     "cosine": H.cosine_within(va) if within else H.cosine_between(va, vb),
                     "overlap": H.overlap_within(same) if within else H.overlap(same)})
    return rows


def homogeneity_rows(ideas: pd.DataFrame, embedder, nli) -> list[dict]:
    """Every prompt a model answered beside another source (a second model, or people): the rows of
    :func:`prompt_rows`. With one model under test that is the model against people and each against itself."""
    groups = []
    for (task, prompt), g in ideas.groupby(["task", "prompt"], sort=True):
        texts = {s: list(dict.fromkeys(x["text"])) for s, x in g.groupby("source", sort=False)}
        if len(texts) >= 2 and any(s != PEOPLE for s in texts):
            groups.append((task, prompt, texts))
    if not groups:
        return []
    uniq = list(dict.fromkeys(t for _, _, texts in groups for ts in texts.values() for t in ts))
    vec = dict(zip(uniq, embedder.encode(uniq)))
    entails = entailment_labels(nli, [[t for ts in texts.values() for t in ts] for _, _, texts in groups])
    return [r for task, prompt, texts in groups for r in prompt_rows(task, prompt, texts, vec, entails)]
