"""The human-sets study's run (chapter 07b, issue 63): each declared set (:data:`~creval.studies.humansets.sets.SETS`)
read through its loader (the fallback chain: env var, staged data, pinned download, our sample), folded to one row
per text (the raters' mean on every criterion), every cheap measure of ``humansets_measures`` computed per text the
way ``creval grade`` computes it (:func:`creval.grade.grading.measure_table`, within the set; no model call), and
the raters' own agreement per criterion. Tables: ``sets``, ``texts``, ``ceilings`` (:mod:`.records`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from creval.core.table import TextTable
from creval.datasets.rated import fold, raters_words
from creval.grade import raters as R
from creval.grade.grading import GradeOptions, measure_table
from creval.studies import contract
from creval.studies.humansets.config import HumansetsConfig
from creval.studies.humansets.records import CeilingRecord, SetRecord, TextRecord
from creval.studies.humansets.sets import SETS, chosen


def whose(long: pd.DataFrame, kind: str) -> str:
    """Whose judgment, in words: raters per text and in all, and their kind."""
    return raters_words(long.groupby("id").size(), long["rater"].nunique(), kind)


JUDGE = "judge:"


def judge_columns(hs, ids: list[str]) -> dict[str, np.ndarray]:
    """The set's released LLM judges (issue 64) as one column per judge and creative criterion,
    ``judge:<judge>:<criterion>``: each text's score averaged over the judge's prompt variants (unread ones left
    out), NaN where the judge gave none; empty when the set has no released judges."""
    if hs.judges is None:
        return {}
    j = hs.judges()
    if j.empty:
        return {}
    creative = {c.column for c in hs.creative}
    j = j[j["criterion"].isin(creative)]
    mean = j.groupby(["judge", "criterion", "id"])["score"].mean()
    return {f"{JUDGE}{judge}:{crit}": mean.loc[(judge, crit)].reindex(ids).to_numpy(float)
            for judge, crit in dict.fromkeys(zip(j["judge"], j["criterion"]))}


KIND = "@"
"""A criterion's column read over one kind of rater only: ``surprise@expert`` (sets whose raters are of two kinds)."""


def by_kind(long: pd.DataFrame, texts: pd.DataFrame, mats: dict, raters: list[str], creative: list[str]) -> tuple:
    """Where a set's raters are of two or more kinds (experts and lay readers): each creative criterion's mean over
    one kind's raters, per text (``criterion@kind``; NaN where no rater of that kind scored the text), and that
    kind's own ceiling rows. Empty for a set of one kind."""
    kinds = sorted(set(long["rater_kind"].astype(str)))
    if len(kinds) < 2:
        return {}, []
    kind_of = dict(zip(long["rater"], long["rater_kind"].astype(str)))
    cols, ceilings = {}, []
    for k in kinds:
        mine = [j for j, r in enumerate(raters) if kind_of[r] == k]
        for c in creative:
            m = mats[c][:, mine]
            with np.errstate(all="ignore"):
                cols[f"{c}{KIND}{k}"] = np.nanmean(m, axis=1) if np.isfinite(m).any() else np.full(len(m), np.nan)
            within, pooled = R.ceiling_within(m, texts["prompt"].to_numpy()), R.ceiling_within(m)
            ceilings.append((f"{c}{KIND}{k}", within, pooled))
    return cols, ceilings


def set_tables(cfg: HumansetsConfig, name: str) -> tuple[dict, list[dict], list[dict]]:
    """The ``sets`` row, the ``texts`` rows and the ``ceilings`` rows of one declared set."""
    hs = SETS[name]
    long, src = hs.load()
    cols = [c.column for c in hs.criteria]
    texts, mats, raters = fold(long, cols)
    table = TextTable(Path(str(src.path)), list(texts["id"]), list(texts["text"]),
                      [{"prompt": p, "group": g} for p, g in zip(texts["prompt_text"], texts["prompt"])])
    measured = measure_table(table, GradeOptions(labels="", group="group", prompt="prompt",
                                                 measures=list(cfg.humansets_measures)))
    info = SetRecord(name, hs.title, str(src), src.is_sample, "only the bundled sample (written for creval)"
                     if src.is_sample else "", len(texts), int(texts["prompt"].nunique()), len(raters),
                     whose(long, hs.rater_kind), hs.cite).to_dict()
    judged = judge_columns(hs, list(texts["id"]))
    kinds, kind_ceilings = by_kind(long, texts, mats, raters, [c.column for c in hs.creative])
    rows = [TextRecord(name, t.id, t.prompt, t.author, t.kind, t.text, int(t.n_raters),
                       {**{c: float(getattr(t, c)) for c in cols},
                        **{k: float(v[i]) for k, v in {**measured, **judged, **kinds}.items()}}).to_dict()
            for i, t in enumerate(texts.itertuples(index=False))]
    ceilings = []
    for c in hs.creative:
        within = R.ceiling_within(mats[c.column], texts["prompt"].to_numpy())
        pooled = R.ceiling_within(mats[c.column])
        ceilings.append(CeilingRecord(name, c.column, within["agreement"], within["n_raters"],
                                      pooled["agreement"]).to_dict())
    ceilings += [CeilingRecord(name, col, w["agreement"], w["n_raters"], p["agreement"]).to_dict()
                 for col, w, p in kind_ceilings]
    return info, rows, ceilings


def run(cfg: HumansetsConfig) -> Path:
    store = contract.start(cfg)
    sets, texts, ceilings = [], [], []
    for name in chosen(cfg.humansets_sets):
        info, rows, ceil = set_tables(cfg, name)
        sets.append(info)
        texts += rows
        ceilings += ceil
    store.write("sets", sets)
    store.write("texts", texts)
    store.write("ceilings", ceilings)
    return contract.finish(store)
