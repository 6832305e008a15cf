"""The AUT agreement study's run: generate uses, judge them in the paper's four settings, judge human-rated
responses, into the study's run folder (``<run_root>/aut/<run id>``, the contract of
:mod:`creval.studies.contract`). Tables: ``uses`` (with the semantic distance object-use and the length),
``turns``, ``judgments``, ``human``, ``raters`` (the Cambridge raters' scores, for the ceiling) and
``baselines_full`` (semantic distance and length on every human-rated response). Every
model and embedding call goes through the call cache, so an interrupted run resumes and a rerun is free.

Orders (§3.2): the comprehensive list of an object is shuffled once (seeded by ``seed`` and the object);
segmented groups take one use of each (generator, level) cell, the cell's uses being dealt to the groups in a
seeded random order, and each group is shuffled. Every ranking is asked in that order and in its exact
reverse (position bias); scoring is asked in the shuffled order only (the paper's single order).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd

from creval.judges.aut import ListJob, judge_lists, pointwise_scores
from creval.measures.aut_agreement import rank_value
from creval.studies import contract
from creval.studies.aut.config import AutConfig
from creval.studies.aut.records import HumanRecord, JudgmentRecord, TurnRecord, UseRecord


def _rng(*parts) -> random.Random:
    return random.Random(json.dumps([str(p) for p in parts]))


def comprehensive_order(uses: list[dict], seed: int, obj: str) -> list[dict]:
    out = list(uses)
    _rng(seed, obj, "comprehensive").shuffle(out)
    return out


def make_groups(uses: list[dict], seed: int, obj: str) -> list[list[dict]]:
    """Groups holding at most one use of each (generator, level) cell; as many groups as the largest cell.
    A cell's uses are dealt to the groups in a seeded random order; each group is then shuffled."""
    cells: dict[tuple, list[dict]] = {}
    for u in uses:
        cells.setdefault((u["generator"], u["level"]), []).append(u)
    k = max((len(v) for v in cells.values()), default=0)
    groups: list[list[dict]] = [[] for _ in range(k)]
    for key in sorted(cells):
        members = list(cells[key])
        _rng(seed, obj, "deal", *key).shuffle(members)
        slots = list(range(k))
        _rng(seed, obj, "slots", *key).shuffle(slots)
        for u, g in zip(members, slots):
            groups[g].append(u)
    for g, grp in enumerate(groups):
        _rng(seed, obj, "group", g).shuffle(grp)
    return [g for g in groups if g]


def list_plan(uses: pd.DataFrame, cfg: AutConfig) -> list[dict]:
    """Every list a judge sees: ``{object, setting, group, method, order, items}`` (items as shown)."""
    plan = []
    for obj in cfg.aut_things:
        us = uses[uses["object"] == obj].to_dict("records")
        if not us:
            continue
        lists = []
        if "comprehensive" in cfg.aut_settings:
            lists.append(("comprehensive", 0, comprehensive_order(us, cfg.seed, obj)))
        if "segmented" in cfg.aut_settings:
            lists += [("segmented", g, grp) for g, grp in enumerate(make_groups(us, cfg.seed, obj))]
        for setting, g, items in lists:
            for method in cfg.aut_methods:
                orders = ("forward", "reverse") if method == "rank" else ("forward",)
                for order in orders:
                    shown = items if order == "forward" else items[::-1]
                    plan.append({"object": obj, "setting": setting, "group": g, "method": method, "order": order,
                                 "items": shown})
    return plan


def judge_uses(model, judge: str, uses: pd.DataFrame, cfg: AutConfig) -> list[JudgmentRecord]:
    plan = list_plan(uses, cfg)
    jobs = [ListJob(p["method"], p["object"], [u["text"] for u in p["items"]],
                    {"object": p["object"], "setting": p["setting"], "method": p["method"], "order": p["order"]})
            for p in plan]
    res = judge_lists(model, jobs, retries=cfg.aut_retries, via=cfg.aut_verdict_via, seed=cfg.seed)
    out = []
    for p, r in zip(plan, res):
        n = len(p["items"])
        for pos, (u, raw, path) in enumerate(zip(p["items"], r.raw, r.paths)):
            val = None if raw is None else (float(raw) if p["method"] == "score" else rank_value(raw, n))
            out.append(JudgmentRecord(p["object"], u["au_id"], u["generator"], u["level"], int(u["level_code"]),
                                      judge, judge == u["generator"], p["method"], p["setting"], p["group"], n,
                                      p["order"], pos, raw, val, path, r.attempts, r.identity_order))
    return out


def human_items(cfg: AutConfig) -> pd.DataFrame:
    """The human-rated responses: ``dataset, object, item_id, response, human`` (Ocsai-1 main2_test and
    Cambridge, or the bundled illustrative sample; empty when no data can be found)."""
    from creval.core.errors import CrevalError
    from creval.datasets import aut as ds
    frames = []
    try:
        oc = ds.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.data_seed)
        frames.append(oc.assign(dataset=["sample-ocsai1" if s == "sample" else "ocsai1" for s in oc["source"]]))
        cb = ds.load_cambridge(n=cfg.cambridge_items, seed=cfg.data_seed)
        frames.append(cb.assign(dataset=["sample-cambridge" if s == "sample" else "cambridge" for s in cb["source"]]))
    except CrevalError:
        pass
    if not frames:
        return pd.DataFrame(columns=["dataset", "object", "item_id", "response", "human"])
    df = pd.concat(frames, ignore_index=True).rename(columns={"prompt": "object", "score": "human"})
    return df[["dataset", "object", "item_id", "response", "human"]]


def judge_humans(model, judge: str, items: pd.DataFrame, cfg: AutConfig) -> list[HumanRecord]:
    """Pointwise (one response per call, expected score from log-probs) and segmented lists (score and rank,
    forward and reverse) of ``aut_human_list`` same-object responses."""
    out: list[HumanRecord] = []
    rows = items.to_dict("records")
    pw = pointwise_scores(model, [(r["object"], r["response"]) for r in rows], via="logprobs")
    for r, (v, path) in zip(rows, pw):
        out.append(HumanRecord(r["dataset"], r["object"], r["item_id"], float(r["human"]), judge, "pointwise", 0, 0,
                               v, path))
    plan = []
    for (dset, obj), grp in items.groupby(["dataset", "object"], sort=True):
        recs = grp.to_dict("records")
        _rng(cfg.seed, dset, obj, "human").shuffle(recs)
        size = max(2, cfg.aut_human_list)
        for g in range(0, len(recs), size):
            chunk = recs[g:g + size]
            if len(chunk) < 2:
                continue
            plan.append(("score", "forward", g // size, chunk))
            plan.append(("rank", "forward", g // size, chunk))
            plan.append(("rank", "reverse", g // size, chunk[::-1]))
    jobs = [ListJob(m, c[0]["object"], [x["response"] for x in c], {"human": c[0]["dataset"], "method": m})
            for m, _, _, c in plan]
    res = judge_lists(model, jobs, retries=cfg.aut_retries, via=cfg.aut_verdict_via, seed=cfg.seed)
    for (m, order, g, chunk), r in zip(plan, res):
        n = len(chunk)
        for pos, (x, raw, path) in enumerate(zip(chunk, r.raw, r.paths)):
            val = None if raw is None else (float(raw) if m == "score" else rank_value(raw, n))
            out.append(HumanRecord(x["dataset"], x["object"], x["item_id"], float(x["human"]), judge,
                                   f"segmented-{m}", g, pos, val, path))
    return out


def baselines(items: pd.DataFrame) -> list[HumanRecord]:
    """Semantic distance (1 - cos(MiniLM(object), MiniLM(response))) and response length in words."""
    from creval.measures.diversity import semdis
    if items.empty:
        return []
    sd = semdis(list(items["object"]), list(items["response"]))
    out = []
    for r, s in zip(items.to_dict("records"), sd):
        out.append(HumanRecord(r["dataset"], r["object"], r["item_id"], float(r["human"]), "semantic distance",
                               "baseline", 0, 0, float(s), "computed"))
        out.append(HumanRecord(r["dataset"], r["object"], r["item_id"], float(r["human"]), "length (words)",
                               "baseline", 0, 0, float(len(r["response"].split())), "computed"))
    return out


def rater_rows(cfg: AutConfig) -> list[dict]:
    """The Cambridge responses with every rater's score (the human ceiling); empty without the data."""
    from creval.core.errors import CrevalError
    from creval.datasets import aut as ds
    try:
        cb = ds.load_cambridge(n=None, seed=cfg.data_seed, raters=True)
    except CrevalError:
        return []
    cols = [c for c in cb.columns if c.startswith("rater")]
    return [{"item_id": r["item_id"], "source": r["source"], **{c: _num(r[c]) for c in cols}}
            for r in cb.to_dict("records")]


def _num(x):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if x != x else x


def with_distance(uses: list[dict]) -> list[dict]:
    """Each use with ``semdis`` (1 - cos of MiniLM embeddings of object and use) and ``words``."""
    from creval.measures.diversity import semdis
    if not uses:
        return uses
    sd = semdis([u["object"] for u in uses], [u["text"] for u in uses])
    return [{**u, "semdis": float(d), "words": len(u["text"].split())} for u, d in zip(uses, sd)]


def full_baselines(cfg: AutConfig) -> list[dict]:
    """Semantic distance and length on every human-rated response (all of Ocsai-1 main2_test and Cambridge, or
    the bundled samples): cheap, so never subsampled. Empty when ``aut_baselines_full`` is off or no data."""
    from creval.core.errors import CrevalError
    from creval.datasets import aut as ds
    if not cfg.aut_baselines_full:
        return []
    frames = []
    for name, load in (("ocsai1", lambda: ds.load_ocsai(n=None, objects=None)),
                       ("cambridge", lambda: ds.load_cambridge(n=None))):
        try:
            df = load()
        except CrevalError:
            continue
        frames.append(df.assign(dataset=[name if s != "sample" else f"sample-{name}" for s in df["source"]]))
    if not frames:
        return []
    items = pd.concat(frames, ignore_index=True).rename(columns={"prompt": "object", "score": "human"})
    return [x.to_dict() for x in baselines(items)]


def run(cfg: AutConfig, progress: bool = True) -> Path:
    """Every table of ``cfg`` into its run folder; cached calls make a rerun free."""
    from tqdm.auto import tqdm

    from creval.models.registry import load_model
    from creval.studies.aut.generate import generate_uses

    store = contract.start(cfg)
    uses: list[UseRecord] = []
    turns: list[TurnRecord] = []
    bar = tqdm(total=len(cfg.generators) + 2 * len(cfg.judges), desc="aut", disable=not progress)
    for g in cfg.generators:
        m = load_model(g)
        store.note_model(m)
        u, t = generate_uses(m, g, cfg.aut_things, cfg.aut_per_level, forceful_turns=cfg.aut_forceful_turns,
                             temperature=cfg.aut_gen_temperature, max_tokens=cfg.aut_gen_max_tokens,
                             retries=cfg.aut_retries, seed=cfg.seed)
        uses += u
        turns += t
        bar.update()
    store.write("uses", with_distance([x.to_dict() for x in uses]))
    store.write("turns", [x.to_dict() for x in turns])
    uses_df = pd.DataFrame([x.to_dict() for x in uses])
    judged: list[JudgmentRecord] = []
    for j in cfg.judges:
        m = load_model(j)
        store.note_model(m)
        if len(uses_df):
            judged += judge_uses(m, j, uses_df, cfg)
        bar.update()
    store.write("judgments", [x.to_dict() for x in judged])
    items = human_items(cfg)
    human: list[HumanRecord] = baselines(items)
    for j in cfg.judges:
        if len(items):
            human += judge_humans(load_model(j), j, items, cfg)
        bar.update()
    bar.close()
    store.write("human", [x.to_dict() for x in human])
    store.write("raters", rater_rows(cfg))
    store.write("baselines_full", full_baselines(cfg))
    store.params["human_sources"] = sorted(items["dataset"].unique()) if len(items) else []
    return contract.finish(store)


def records(cfg: AutConfig) -> contract.Records:
    """The run's tables (``uses``, ``turns``, ``judgments``, ``human``, ``raters``), running what is missing."""
    return contract.read(cfg, run)
