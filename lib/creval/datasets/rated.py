"""A set of human judgment as one declaration (issue 63): the texts, the prompt each answers, who wrote each (a
person or a model), the raters and their kind (expert, lay, crowd), the criteria and their scale, and the unit
an interval resamples. A loader returns one long table, one row per text and rater, in the columns below, so
everything downstream (the card's rows, the raters' ceiling, a chapter section, ``creval grade --rater``) reads
every set the same way.

Long table (:data:`LONG`): ``id`` (the text), ``prompt`` (what it answers, an id), ``prompt_text`` (its words,
"" when not released), ``author`` (the writer: a model's
name or a person's id), ``kind`` (``person`` or ``model``), ``text``, ``rater``, ``rater_kind``, then one column
per criterion (its scale in :class:`Criterion`). Pure declarations; the loaders live beside their datasets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from creval.datasets.base import Dataset, Source

LONG = ("id", "prompt", "prompt_text", "author", "kind", "text", "rater", "rater_kind")
KINDS = ("expert", "lay", "crowd")


@dataclass(frozen=True)
class Criterion:
    """One rated criterion: its column, its scale, and whether it is one the card reads as creativity."""
    column: str
    label: str
    lo: float
    hi: float
    creative: bool = False
    raw: str = ""             # the column's name in the released file, when it is not ``label``

    @property
    def source(self) -> str:
        return self.raw or self.label


@dataclass(frozen=True)
class HumanSet:
    """One set of human judgment, declared once. ``load(given)`` returns the long table and its source;
    ``unit``: what an interval resamples whole (the prompt, a real cluster); ``why``: one sentence for docs and
    the chapter; ``cite``: the paper; ``judges``: the released LLM judges' verdicts on the same texts, if any."""
    name: str
    title: str
    dataset: Dataset
    criteria: tuple[Criterion, ...]
    load: Callable[..., tuple[pd.DataFrame, Source]]
    rater_kind: str
    short: str = ""           # the set's name on a card row ("HANNA")
    unit: str = "prompt"
    why: str = ""
    cite: str = ""
    judges: Callable[[], pd.DataFrame] | None = None   # released LLM judges' scores (id, judge, variant, criterion)

    @property
    def creative(self) -> tuple[Criterion, ...]:
        """The criteria nearest to creativity (the card's rows)."""
        return tuple(c for c in self.criteria if c.creative)


def check_long(df: pd.DataFrame, hs: HumanSet) -> pd.DataFrame:
    """``df`` with exactly the declared columns, in order (a loader's contract; a missing one is a bug)."""
    cols = [*LONG, *(c.column for c in hs.criteria)]
    missing = [c for c in cols if c not in df]
    if missing:
        raise ValueError(f"{hs.name}: the loader returned no {', '.join(missing)}")
    return df[cols].reset_index(drop=True)


def raters_words(per_text, total: int, kind: str) -> str:
    """Whose judgment, in words, from each text's number of raters: "3 raters per text, 22 in all (crowd)"."""
    per = np.asarray(per_text)
    each = f"{int(per.min())}" if per.min() == per.max() else f"{int(per.min())}-{int(per.max())}"
    return f"{each} raters per text, {total} in all ({kind})"


def fold(long: pd.DataFrame, criteria: list[str]) -> tuple[pd.DataFrame, dict[str, np.ndarray], list[str]]:
    """The long table folded per text (first appearance order): the text's fields, its number of raters and each
    criterion's mean; and per criterion the texts x raters matrix (NaN where a rater did not score a text)."""
    first = long.drop_duplicates("id").set_index("id")
    ids = list(first.index)
    raters = list(dict.fromkeys(long["rater"]))
    row, col = {k: i for i, k in enumerate(ids)}, {r: j for j, r in enumerate(raters)}
    mats = {}
    for c in criteria:
        m = np.full((len(ids), len(raters)), np.nan)
        m[long["id"].map(row).to_numpy(), long["rater"].map(col).to_numpy()] = long[c].astype(float).to_numpy()
        mats[c] = m
    texts = first.reset_index()[["id", "prompt", "prompt_text", "author", "kind", "text"]]
    texts["n_raters"] = long.groupby("id", sort=False).size().reindex(ids).to_numpy()
    for c in criteria:
        with np.errstate(all="ignore"):
            texts[c] = np.nanmean(mats[c], axis=1)
    return texts, mats, raters
