"""The tables two more sets of human judgment give the report card (issue 54): per text, per pair and per rater.

**LAMP** (:mod:`creval.datasets.lamp`): for each instruction an LLM's paragraph (raw), a professional writer's
edit of it and an LLM's edit of it, ranked 1-3 by three expert writers. The paper's claim is pairwise: writers
prefer the writer's edit to the raw paragraph (and the AI edit sits between). So the tables are per pair of
versions of one item (:data:`PAIRS`): how many writers preferred the edit (:func:`lamp_pairs`), whether a
measure prefers it too (:func:`measure_prefs`, :func:`judge_prefs` for a judge asked in both orders), the share
of pairs where the two agree, resampled by instruction (:func:`pair_agreement`), and the writers' own agreement,
the ceiling (:func:`writer_agreement`).

**Confederacy** (:mod:`creval.datasets.confederacy`): 65 stories on one prompt, each scored by two raters on ten
rubric items. One row per story with the raters' mean Creativity and total, the author and each rater's scores
(:func:`confederacy_table`); the raters' agreement with one another is the ceiling (:func:`rater_ceiling`).

The cheap measures come from the functions ``creval grade`` uses (:func:`creval.grade.grading.measure_table`,
:func:`text_measures`); the card's word from the grading rule through :func:`rule` only. :func:`export_lamp_csv`
and :func:`export_confederacy_csv` write files ``creval grade`` reads (docs/human-sets.md has the recipes).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.core.table import TextTable
from creval.datasets import confederacy, lamp
from creval.grade import grading as G
from creval.measures import pertext as P
from creval.measures.stats import correlation as corr
from creval.measures.stats import raters
from creval.measures.stats.resample import cluster_bootstrap

PAIRS = {"writer_edit": (lamp.WRITER_EDIT, lamp.RAW), "ai_edit": (lamp.AI_EDIT, lamp.RAW)}
"""The comparisons of the card: (the edited version, the raw paragraph) of one item."""
TIE = 0.5   # a preference with no side: a measure's tie, a judge whose two orders disagree


# -- LAMP ------------------------------------------------------------------------------------------------
def text_id(item_id: str, version: str) -> str:
    """The id of one version of one item: ``<item id>::<version>``."""
    return f"{item_id}::{version}"


def lamp_texts(items: Sequence[lamp.LampItem], rankings: Sequence[lamp.LampRanking]) -> pd.DataFrame:
    """One row per (item, version): ``id, item_id, unit, batch, version, source, text, n_writers, mean_rank``
    (1 = best) and ``points`` (the writers' mean of 3 - rank: 2 when all put it first, 0 when all last)."""
    ranks = lamp.ranks_of(rankings)
    rows = []
    for it in items:
        for v in lamp.VERSIONS:
            if v not in it.texts:
                continue
            got = ranks.get((it.item_id, v), [])
            mean = float(np.mean(got)) if got else math.nan
            rows.append({"id": text_id(it.item_id, v), "item_id": it.item_id, "unit": it.unit, "batch": it.batch,
                         "version": v, "source": it.source, "text": it.texts[v], "n_writers": len(got),
                         "mean_rank": mean, "points": 3 - mean})
    return pd.DataFrame(rows)


def writer_prefs(rankings: Sequence[lamp.LampRanking], pair: str) -> pd.DataFrame:
    """One row per (item, writer) of ``pair`` (a key of :data:`PAIRS`): ``item_id, unit, writer,
    prefers_first`` (1 when the writer ranked the edited version above the raw one, else 0)."""
    first, second = PAIRS[pair]
    return pd.DataFrame([{"item_id": r.item_id, "unit": r.unit, "writer": r.writer,
                          "prefers_first": int(r.ranks[first] < r.ranks[second])} for r in rankings],
                        columns=["item_id", "unit", "writer", "prefers_first"])


def lamp_pairs(items: Sequence[lamp.LampItem], rankings: Sequence[lamp.LampRanking],
               pairs: Sequence[str] = tuple(PAIRS)) -> pd.DataFrame:
    """One row per (item, pair): ``item_id, unit, batch, source, pair, first, second`` (the versions),
    ``first_id, second_id`` (their text ids), ``n_writers, n_first`` (writers who preferred the first),
    ``share_first`` and ``experts``: the majority's preference for the first (1 or 0; NaN on a tie)."""
    by_item = {it.item_id: it for it in items}
    rows = []
    for pair in pairs:
        first, second = PAIRS[pair]
        prefs = writer_prefs(rankings, pair)
        for iid, g in prefs.groupby("item_id", sort=False):
            it = by_item[iid]
            n, k = len(g), int(g["prefers_first"].sum())
            rows.append({"item_id": iid, "unit": it.unit, "batch": it.batch, "source": it.source, "pair": pair,
                         "first": first, "second": second, "first_id": text_id(iid, first),
                         "second_id": text_id(iid, second), "n_writers": n, "n_first": k, "share_first": k / n,
                         "experts": 1.0 if 2 * k > n else 0.0 if 2 * k < n else math.nan})
    return pd.DataFrame(rows)


def measure_prefs(pairs: pd.DataFrame, values: Mapping[str, float]) -> np.ndarray:
    """Per row of ``pairs``: 1 when the measure (``values``: text id -> value, oriented so that higher means
    more creative) is higher on the first version, 0 when lower, :data:`TIE` when equal, NaN when either
    value is missing."""
    out = []
    for a, b in zip(pairs["first_id"], pairs["second_id"]):
        x, y = float(values.get(a, math.nan)), float(values.get(b, math.nan))
        out.append(math.nan if not (math.isfinite(x) and math.isfinite(y)) else 1.0 if x > y else 0.0 if x < y
                   else TIE)
    return np.array(out, float)


def judge_prefs(first_shown_first: Sequence, first_shown_second: Sequence) -> np.ndarray:
    """A pairwise judge's preference per pair from its two orders (as :mod:`creval.judges.pairwise` asks):
    each argument holds, per pair, whether the judge picked the first version (True/False, None when its
    reply did not parse) with that version shown first, resp. second. Both orders agree: 1 or 0; they
    disagree (a flip: the judge preferred a position): :data:`TIE`; either unparsed: NaN."""
    if len(first_shown_first) != len(first_shown_second):
        raise ValueError("one answer per pair in each order")
    out = []
    for a, b in zip(first_shown_first, first_shown_second):
        out.append(math.nan if a is None or b is None else float(bool(a)) if bool(a) == bool(b) else TIE)
    return np.array(out, float)


def agreement_each(prefs: Sequence[float], experts: Sequence[float]) -> np.ndarray:
    """Per pair: 1 when a preference matches the experts' majority, 0 when it is the opposite, 0.5 for a tie on
    either side; NaN where either is missing. (1 - |pref - experts|.)"""
    p, e = np.asarray(prefs, float), np.asarray(experts, float)
    return 1.0 - np.abs(p - e)


def pair_agreement(pairs: pd.DataFrame, prefs: Sequence[float], n_boot: int = 2000, seed: int = 0) -> dict:
    """The share of pairs where ``prefs`` agrees with the experts' majority (:func:`agreement_each`), with a
    percentile interval resampled by instruction (``pairs.unit``), and ``prefers_first`` (how often the
    measure prefers the edited version, whoever is right): ``{agreement, lo, hi, n, n_units,
    prefers_first}``. Pairs whose experts tie or whose preference is missing are left out."""
    a = agreement_each(prefs, pairs["experts"])
    keep = np.isfinite(a)
    units_kept = pairs["unit"].to_numpy()[keep]
    got = cluster_bootstrap(np.mean, a[keep], cluster=units_kept, n_boot=n_boot, seed=seed) if keep.any() else {}
    p = np.asarray(prefs, float)[keep]
    return {"agreement": got.get("value", math.nan), "lo": got.get("lo", math.nan), "hi": got.get("hi", math.nan),
            "n": int(keep.sum()), "n_units": int(got.get("n_units", 0)),
            "prefers_first": float(np.mean(p)) if p.size else math.nan}


def better_orientation(result: dict) -> dict:
    """A baseline's agreement in its better direction (a trivial feature may run either way: shorter or
    longer text preferred): ``result`` with agreement (and interval) mirrored around 0.5 when below it, and
    ``orientation`` = +1 or -1."""
    if not math.isfinite(result["agreement"]) or result["agreement"] >= 0.5:
        return {**result, "orientation": 1}
    return {**result, "agreement": 1 - result["agreement"], "lo": 1 - result["hi"], "hi": 1 - result["lo"],
            "prefers_first": 1 - result["prefers_first"], "orientation": -1}


def writer_agreement(rankings: Sequence[lamp.LampRanking], pair: str) -> dict:
    """The writers' agreement with one another on ``pair``, the ceiling of any measure: ``pairwise`` (the share
    of two writers of one item who prefer the same version) and ``leave_one_out`` (each writer against the
    majority of the item's other writers, :data:`TIE` when they split: what a measure as good as one more
    writer would score), with ``n_items``."""
    prefs = writer_prefs(rankings, pair)
    same, loo = [], []
    for _, g in prefs.groupby("item_id", sort=False):
        p = g["prefers_first"].to_numpy(float)
        if len(p) < 2:
            continue
        same += [float(p[i] == p[j]) for i in range(len(p)) for j in range(i + 1, len(p))]
        for i in range(len(p)):
            others = np.delete(p, i)
            k, n = others.sum(), len(others)
            maj = 1.0 if 2 * k > n else 0.0 if 2 * k < n else TIE
            loo.append(1.0 - abs(p[i] - maj))
    return {"pairwise": float(np.mean(same)) if same else math.nan,
            "leave_one_out": float(np.mean(loo)) if loo else math.nan,
            "n_items": int(prefs["item_id"].nunique())}


def text_measures(texts: pd.DataFrame, measures: Sequence[str] = ("ci", "lexical", "templates"),
                  group: str | None = "unit", **options) -> dict[str, np.ndarray]:
    """Every asked-for cheap measure and baseline per row of ``texts`` (columns ``id``, ``text``), computed by
    :func:`creval.grade.grading.measure_table`, the function ``creval grade`` uses. ``group``: the column of
    the instruction or author, whose other texts a leave-group-out creativity index must not count as reuse
    (LAMP's three versions of one paragraph share most of their words). ``options``: further
    :class:`~creval.grade.grading.GradeOptions` fields."""
    table = TextTable(Path("<memory>"), [str(i) for i in texts["id"]], [str(t) for t in texts["text"]],
                      texts.to_dict("records"))
    opt = G.GradeOptions(labels="", group=group, measures=tuple(measures), **options)
    return G.measure_table(table, opt)


def measure_agreements(pairs: pd.DataFrame, texts: pd.DataFrame, cols: Mapping[str, Sequence[float]],
                       n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per measure of ``cols`` (one value per row of ``texts``) and per pair: its agreement with the experts
    (:func:`pair_agreement`), each measure oriented by :data:`~creval.measures.pertext.DIRECTION`, each
    baseline (:data:`~creval.measures.pertext.BASELINES`) in its better direction (``kind`` says which)."""
    ids = [str(i) for i in texts["id"]]
    rows = []
    for name, v in cols.items():
        base = name in P.BASELINES
        values = dict(zip(ids, np.asarray(v, float) if base else P.oriented(name, v)))
        for pair, g in pairs.groupby("pair", sort=False):
            r = pair_agreement(g, measure_prefs(g, values), n_boot=n_boot, seed=seed)
            r = better_orientation(r) if base else r
            rows.append({"measure": name, "kind": "baseline" if base else "measure", "pair": pair, **r})
    return pd.DataFrame(rows)


# -- Confederacy -----------------------------------------------------------------------------------------
def confederacy_table(stories: Sequence[confederacy.Story], ratings: Sequence[confederacy.Rating],
                      items: Sequence[str] = ("creativity",)) -> pd.DataFrame:
    """One row per story: ``id, author, kind, rating_group, number, text``, for each of ``items`` and for the
    ``total`` the raters' mean and each rater slot's score (``creativity``, ``creativity_r1``,
    ``creativity_r2``, ...; NaN where a rater left it blank), ``n_raters`` and the raters' names."""
    by: dict[str, list[confederacy.Rating]] = {}
    for r in ratings:
        by.setdefault(r.story_id, []).append(r)
    rows = []
    for s in stories:
        rs = sorted(by.get(s.story_id, []), key=lambda r: r.slot)
        row = {"id": s.story_id, "author": s.author, "kind": s.kind, "rating_group": s.rating_group,
               "number": s.number, "text": s.text, "n_raters": len(rs), "raters": " ".join(r.rater for r in rs)}
        for key in (*items, "total"):
            vals = [r.total if key == "total" else r.scores.get(key, math.nan) for r in rs]
            for r, v in zip(rs, vals):
                row[f"{key}_r{r.slot}"] = v
            ok = [v for v in vals if math.isfinite(v)]
            row[key] = float(np.mean(ok)) if ok else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def rater_columns(table: pd.DataFrame, item: str) -> list[str]:
    """The per-rater columns of ``item`` in a :func:`confederacy_table` (``item_r1``, ``item_r2``, ...)."""
    return sorted((c for c in table.columns if c.startswith(f"{item}_r") and c[len(item) + 2:].isdigit()),
                  key=lambda c: int(c[len(item) + 2:]))


def leave_one_rater_out(matrix) -> float:
    """The mean over raters of Spearman's rho between one rater's scores and the mean of the other raters'
    (``matrix``: items x raters, NaN = not rated): how well one more rater tracks the rest."""
    m = np.asarray(matrix, float)
    rhos = []
    for j in range(m.shape[1]):
        with np.errstate(all="ignore"):
            rest = np.nanmean(np.delete(m, j, axis=1), axis=1)
        r = corr.spearman(m[:, j], rest)["rho"]
        if math.isfinite(r):
            rhos.append(r)
    return float(np.mean(rhos)) if rhos else math.nan


def rater_ceiling(table: pd.DataFrame, item: str = "creativity", by: str | None = "rating_group") -> dict:
    """How far the raters agree on ``item``: ``rho`` (Spearman between two rater slots, pooled over stories;
    the mean over pairs of slots when there are more),
    ``leave_one_out`` (:func:`leave_one_rater_out`), ``ceiling`` (the highest Spearman any measure can reach
    against the raters' mean, :func:`creval.measures.stats.raters.noise_ceiling`), ``one_rater`` (what one more rater
    would score against that mean, :func:`~creval.measures.stats.raters.one_vs_mean`), ``within`` (per value of
    ``by``, the slots' Spearman inside it: one pair of raters scored each rating group), ``k`` and ``n``."""
    cols = rater_columns(table, item)
    if len(cols) < 2:
        raise CrevalError(f"{item}: {len(cols)} rater column(s); rater agreement needs two",
                          "build the table with confederacy_table from every rater's scores")
    m = table[cols].to_numpy(float)
    k = len(cols)

    def mean_rho(sub: pd.DataFrame) -> float:
        rs = [corr.spearman(sub[a], sub[b])["rho"] for i, a in enumerate(cols) for b in cols[i + 1:]]
        rs = [r for r in rs if math.isfinite(r)]
        return float(np.mean(rs)) if rs else math.nan
    rho = mean_rho(table)
    within = {g: mean_rho(sub) for g, sub in table.groupby(by, sort=True)} if by is not None else {}
    return {"item": item, "n": int(np.isfinite(m).all(axis=1).sum()), "k": k, "rho": rho,
            "leave_one_out": leave_one_rater_out(m), "ceiling": raters.noise_ceiling(rho, k),
            "one_rater": raters.one_vs_mean(rho, k), "within": within}


# -- the files creval grade reads ------------------------------------------------------------------------
def _write(path: str | Path, df: pd.DataFrame) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(p, index=False, quoting=csv.QUOTE_NONNUMERIC)
    return p


def export_lamp_csv(items: Sequence[lamp.LampItem], rankings: Sequence[lamp.LampRanking], path: str | Path,
                    pair: str | None = "writer_edit") -> Path:
    """A CSV ``creval grade`` reads, one row per text: ``id, text, unit`` (the instruction: the cluster),
    ``item_id`` (the item as shown: the stratum), ``version`` (the author label), ``source, batch, points,
    mean_rank, n_writers`` and, with ``pair``, only that pair's two versions of each item and ``preferred``
    (1 on the version the majority preferred, 0 on the other; items whose writers tie are left out)."""
    texts = lamp_texts(items, rankings)
    if pair is not None:
        pairs = lamp_pairs(items, rankings, (pair,)).dropna(subset=["experts"])
        won = {(r.first_id if r.experts == 1 else r.second_id) for r in pairs.itertuples()}
        keep = set(pairs["first_id"]) | set(pairs["second_id"])
        texts = texts[texts["id"].isin(keep)].copy()
        texts["preferred"] = texts["id"].isin(won).astype(int)
    cols = ["id", "text", "unit", "item_id", "version", "source", "batch", "points", "mean_rank", "n_writers"]
    return _write(path, texts[cols + (["preferred"] if pair is not None else [])])


def export_confederacy_csv(stories: Sequence[confederacy.Story], ratings: Sequence[confederacy.Rating],
                           path: str | Path) -> Path:
    """A CSV ``creval grade`` reads, one row per story: ``id, text, author`` (the model or human: the cluster
    and the stratum), ``kind`` (person or model: the author label), ``creativity`` and ``total`` (the
    raters' means), each rater's, ``rating_group``."""
    t = confederacy_table(stories, ratings)
    cols = ["id", "text", "author", "kind", "rating_group", "creativity", "total",
            *rater_columns(t, "creativity"), *rater_columns(t, "total")]
    return _write(path, t[cols])


def export_all(folder: str | Path, lamp_given=None, confederacy_given=None) -> dict[str, Path]:
    """Load both sets through their loaders and write ``lamp_writer_edit.csv``, ``lamp_ai_edit.csv``,
    ``lamp_all.csv`` (three versions, ``points``) and ``confederacy.csv`` under ``folder``."""
    items, rankings, _ = lamp.load(lamp_given)
    stories, ratings, _ = confederacy.load(confederacy_given)
    d = Path(folder)
    return {"lamp_writer_edit": export_lamp_csv(items, rankings, d / "lamp_writer_edit.csv", "writer_edit"),
            "lamp_ai_edit": export_lamp_csv(items, rankings, d / "lamp_ai_edit.csv", "ai_edit"),
            "lamp_all": export_lamp_csv(items, rankings, d / "lamp_all.csv", None),
            "confederacy": export_confederacy_csv(stories, ratings, d / "confederacy.csv")}
