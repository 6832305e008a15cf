"""The pairwise judge over the released outputs (chapter 09): on ``pairwise_items`` items of each dataset that
every model answered (drawn with ``seed``), every pair of models is judged in both orders by ``judge_model``
(:class:`creval.judges.pairwise.PairwiseJudge`). One unit per dataset x item (its pairs in one batch), through
the one unit runner: resumable, within the run's budget, rows in unit order. Each row carries the judge's
provenance. The fit (Bradley-Terry, :mod:`creval.measures.bradley_terry`) is in the report."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from creval.core.units import Unit, run_units
from creval.judges.pairwise import PairwiseJudge
from creval.models import registry
from creval.models.width import width


def items_for(answers: pd.DataFrame, n: int, seed: int) -> dict[str, list[str]]:
    """Per dataset, ``n`` items (0: all) that every one of its models answered, drawn with ``seed``, sorted."""
    out = {}
    for ds, g in answers.groupby("dataset", sort=False):
        k = g["model"].nunique()
        full = sorted(it for it, x in g.groupby("item") if x["model"].nunique() == k)
        if n and n < len(full):
            full = sorted(np.random.default_rng(seed).choice(full, size=n, replace=False).tolist())
        out[ds] = full
    return out


def units(answers: pd.DataFrame, n: int, seed: int) -> list[Unit]:
    """One unit per dataset x item: its task and the models' answers (first answer of each), pairs in order."""
    out = []
    for ds, items in items_for(answers, n, seed).items():
        g = answers[answers["dataset"] == ds]
        for it in items:
            x = g[g["item"] == it].drop_duplicates("model")
            texts = dict(zip(x["model"], x["text"]))
            out.append(Unit(f"{ds}::{it}", {"dataset": ds, "item": it, "task": str(x["task"].iloc[0]),
                                             "texts": texts}))
    return out


def oriented(pair: tuple[str, str], item: str, seed: int) -> tuple[str, str]:
    """Which model is ``a`` (shown first in the first order): decided by the order seed, per item and pair."""
    h = sum(map(ord, f"{seed}|{item}|{pair[0]}|{pair[1]}"))
    return pair if h % 2 == 0 else (pair[1], pair[0])


def judge_unit(judge_model: str, words: int, seed: int):
    """The work of one unit: every pair of its models in both orders, one row per pair with provenance."""
    def work(u: Unit) -> dict:
        it = u.item
        judge = PairwiseJudge(registry.load_model(judge_model), it["dataset"], words, seed)
        jobs = []
        for p in combinations(sorted(it["texts"]), 2):
            a, b = oriented(p, it["item"], seed)
            jobs.append((it["item"], it["task"], a, it["texts"][a], b, it["texts"][b]))
        rows = [{"dataset": it["dataset"], **j.to_dict(), "provenance": judge.provenance}
                for j in judge.judge_many(jobs)]
        return {"pairwise": rows}
    return work


def pairwise_rows(cfg, answers: list[dict], root) -> list[dict]:
    """Every pairwise judgement of the released outputs (none when ``pairwise_items`` is 0)."""
    if not cfg.compare_pairwise_items or not answers:
        return []
    us = units(pd.DataFrame(answers), cfg.compare_pairwise_items, cfg.seed)
    tables = run_units(root, "pairwise", us, judge_unit(cfg.judge_model, cfg.compare_pairwise_words, cfg.seed),
                       width=width(cfg.judge_model), desc="pairwise judge")
    return tables.get("pairwise", [])
