"""The AUT agreement study's run: generate uses, judge them in the paper's four settings, judge human-rated
responses, into the study's run folder (``<run_root>/aut/<run id>``, the contract of
:mod:`creval.studies.contract`). Tables: ``uses`` (with the semantic distance object-use and the length),
``turns``, ``judgments``, ``human``, ``raters`` (the Cambridge raters' scores, for the ceiling) and
``baselines_full`` (semantic distance and length on every human-rated response).

The run is units (:mod:`creval.core.units`), all of a runner's in flight together on a server: first
every generator x object x level (the forceful turns and re-asks its chain) beside every judge x human-rated
response (pointwise) and judge x list of human responses, which need no generated use; then every judge x
list of the generated uses (its re-asks a chain). Each finished unit is kept in the run folder's ``units/``,
so an interrupted run resumes per unit; every call goes through the call cache.

Orders (§3.2): the comprehensive list of an object is shuffled once (seeded by ``seed`` and the object);
segmented groups take one use of each (generator, level) cell, the cell's uses being dealt to the groups in a
seeded random order, and each group is shuffled. Every ranking is asked in that order and in its exact
reverse (position bias); scoring is asked in the shuffled order only (the paper's single order).
"""
from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.core.units import Unit, run_units
from creval.datasets import aut as aut_data
from creval.judges.aut import ListJob, judge_lists, list_budget, pointwise_scores
from creval.measures.aut_agreement import rank_value
from creval.measures.diversity import semdis
from creval.models import registry
from creval.models.width import width
from creval.studies import contract
from creval.studies.aut.config import AutConfig
from creval.studies.aut.generate import LEVELS, generate_level
from creval.studies.aut.records import HumanRecord, JudgmentRecord


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


def _use_job(p: dict) -> ListJob:
    return ListJob(p["method"], p["object"], [u["text"] for u in p["items"]],
                   {"object": p["object"], "setting": p["setting"], "method": p["method"], "order": p["order"]})


def _judge_one(judge: str, job: ListJob, cfg: AutConfig, budget: int):
    """One judge's verdict on one list (its re-asks are a chain) and each use's value: higher = more creative."""
    r = judge_lists(registry.load_model(judge), [job], retries=cfg.aut_retries, via=cfg.aut_verdict_via, seed=cfg.seed,
                    max_tokens=budget)[0]
    n = len(job.texts)
    return r, [None if raw is None else (float(raw) if job.method == "score" else rank_value(raw, n)) for raw in r.raw]


def judge_list(judge: str, p: dict, cfg: AutConfig, budget: int) -> dict[str, list]:
    """One unit: one judge's scores or ranking of one list of ``list_plan``."""
    r, vals = _judge_one(judge, _use_job(p), cfg, budget)
    n, out = len(p["items"]), []
    for pos, (u, raw, val, path) in enumerate(zip(p["items"], r.raw, vals, r.paths)):
        out.append(JudgmentRecord(p["object"], u["au_id"], u["generator"], u["level"], int(u["level_code"]), judge,
                                  judge == u["generator"], p["method"], p["setting"], p["group"], n, p["order"], pos,
                                  raw, val, path, r.attempts, r.identity_order))
    return {"judgments": [x.to_dict() for x in out]}


def judge_units(cfg: AutConfig, uses: list[dict]) -> list[Unit]:
    """Every judge x list of the generated uses. Every request's reply budget is the one the plan's longest list
    needs (the same for every list, whichever finishes first)."""
    if not uses:
        return []
    plan = list_plan(pd.DataFrame(uses), cfg)
    budget = list_budget([_use_job(p) for p in plan])
    return [Unit(f"judge|{j}|{p['object']}|{p['setting']}|{p['group']}|{p['method']}|{p['order']}",
                 partial(judge_list, j, p, cfg, budget)) for j in cfg.judges for p in plan]


def human_items(cfg: AutConfig) -> pd.DataFrame:
    """The human-rated responses: ``dataset, object, item_id, response, human`` (Ocsai-1 main2_test and
    Cambridge, or the bundled illustrative sample; empty when no data can be found)."""
    frames = []
    try:
        oc = aut_data.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.data_seed)
        frames.append(oc.assign(dataset=["sample-ocsai1" if s == "sample" else "ocsai1" for s in oc["source"]]))
        cb = aut_data.load_cambridge(n=cfg.aut_cambridge_items, seed=cfg.data_seed)
        frames.append(cb.assign(dataset=["sample-cambridge" if s == "sample" else "cambridge" for s in cb["source"]]))
    except CrevalError:
        pass
    if not frames:
        return pd.DataFrame(columns=["dataset", "object", "item_id", "response", "human"])
    df = pd.concat(frames, ignore_index=True).rename(columns={"prompt": "object", "score": "human"})
    return df[["dataset", "object", "item_id", "response", "human"]]


def human_plan(items: pd.DataFrame, cfg: AutConfig) -> list[dict]:
    """The segmented lists of ``aut_human_list`` same-object human responses (seeded order): score forward,
    rank forward and reverse; ``{dataset, object, group, method, order, items}`` (items as shown)."""
    plan = []
    for (dset, obj), grp in items.groupby(["dataset", "object"], sort=True):
        recs = grp.to_dict("records")
        _rng(cfg.seed, dset, obj, "human").shuffle(recs)
        size = max(2, cfg.aut_human_list)
        for g in range(0, len(recs), size):
            chunk = recs[g:g + size]
            if len(chunk) < 2:
                continue
            for method, order, shown in (("score", "forward", chunk), ("rank", "forward", chunk),
                                         ("rank", "reverse", chunk[::-1])):
                plan.append({"dataset": dset, "object": obj, "group": g // size, "method": method, "order": order,
                             "items": shown})
    return plan


def _human_job(p: dict) -> ListJob:
    return ListJob(p["method"], p["object"], [x["response"] for x in p["items"]],
                   {"human": p["dataset"], "method": p["method"]})


def _human(x: dict, judge: str, mode: str, group: int, position: int, value, path: str) -> HumanRecord:
    return HumanRecord(x["dataset"], x["object"], x["item_id"], float(x["human"]), judge, mode, group, position,
                       value, path)


def judge_human_item(judge: str, x: dict) -> dict[str, list]:
    """One unit: one human response scored pointwise (one call; expected score from the log-probs of 1..5)."""
    (v, path), = pointwise_scores(registry.load_model(judge), [(x["object"], x["response"])], via="logprobs")
    return {"human": [_human(x, judge, "pointwise", 0, 0, v, path).to_dict()]}


def judge_human_list(judge: str, p: dict, cfg: AutConfig, budget: int) -> dict[str, list]:
    """One unit: one judge's scores or ranking of one list of ``human_plan``."""
    r, vals = _judge_one(judge, _human_job(p), cfg, budget)
    return {"human": [_human(x, judge, f"segmented-{p['method']}", p["group"], pos, val, path).to_dict()
                      for pos, (x, val, path) in enumerate(zip(p["items"], vals, r.paths))]}


def human_units(cfg: AutConfig, items: pd.DataFrame) -> list[Unit]:
    """Per judge: every human-rated response scored pointwise, then every list of ``human_plan``."""
    rows, plan = items.to_dict("records"), human_plan(items, cfg)
    budget = list_budget([_human_job(p) for p in plan])
    out = []
    for j in cfg.judges:
        out += [Unit(f"pointwise|{j}|{x['dataset']}|{x['item_id']}", partial(judge_human_item, j, x)) for x in rows]
        out += [Unit(f"human|{j}|{p['dataset']}|{p['object']}|{p['group']}|{p['method']}|{p['order']}",
                     partial(judge_human_list, j, p, cfg, budget)) for p in plan]
    return out


def baselines(items: pd.DataFrame) -> list[HumanRecord]:
    """Semantic distance (1 - cos(MiniLM(object), MiniLM(response))) and response length in words."""
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
    try:
        cb = aut_data.load_cambridge(n=None, seed=cfg.data_seed, raters=True)
    except CrevalError:
        return []
    cols = [c for c in cb.columns if c.startswith("rater")]
    return [{"item_id": r["item_id"], "source": r["source"], **{c: number_or_none(r[c]) for c in cols}}
            for r in cb.to_dict("records")]


def number_or_none(x):
    """A value as a float for a JSON record; None (null) for a missing or NaN value."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if x != x else x


def with_distance(uses: list[dict]) -> list[dict]:
    """Each use with ``semdis`` (1 - cos of MiniLM embeddings of object and use) and ``words``."""
    if not uses:
        return uses
    sd = semdis([u["object"] for u in uses], [u["text"] for u in uses])
    return [{**u, "semdis": float(d), "words": len(u["text"].split())} for u, d in zip(uses, sd)]


def full_baselines(cfg: AutConfig) -> list[dict]:
    """Semantic distance and length on every human-rated response (all of Ocsai-1 main2_test and Cambridge, or
    the bundled samples): cheap, so never subsampled. Empty when ``aut_baselines_full`` is off or no data."""
    if not cfg.aut_baselines_full:
        return []
    frames = []
    for name, load in (("ocsai1", lambda: aut_data.load_ocsai(n=None, objects=None)),
                       ("cambridge", lambda: aut_data.load_cambridge(n=None))):
        try:
            df = load()
        except CrevalError:
            continue
        frames.append(df.assign(dataset=[name if s != "sample" else f"sample-{name}" for s in df["source"]]))
    if not frames:
        return []
    items = pd.concat(frames, ignore_index=True).rename(columns={"prompt": "object", "score": "human"})
    return [x.to_dict() for x in baselines(items)]


def generate_unit(generator: str, obj: str, level: str, cfg: AutConfig) -> dict[str, list]:
    """One unit: the uses of one object at one level by one generator (the forceful turns are its chain)."""
    u, t = generate_level(registry.load_model(generator), generator, obj, level, cfg.aut_per_level,
                          forceful_turns=cfg.aut_forceful_turns, temperature=cfg.aut_gen_temperature,
                          max_tokens=cfg.aut_gen_max_tokens, retries=cfg.aut_retries, seed=cfg.seed)
    return {"uses": [x.to_dict() for x in u], "turns": [x.to_dict() for x in t]}


def generation_units(cfg: AutConfig) -> list[Unit]:
    """Every generator x object x level."""
    return [Unit(f"generate|{g}|{o}|{lvl}", partial(generate_unit, g, o, lvl, cfg))
            for g in cfg.generators for o in cfg.aut_things for lvl in LEVELS]


def _work(unit: Unit) -> dict[str, list]:
    """A unit's item is its work: one of the unit functions above with its arguments bound."""
    return unit.item()


def run(cfg: AutConfig, progress: bool = True) -> Path:
    """Every table of ``cfg`` into its run folder: first the units that need no generated use (generation,
    human-rated responses), then the judging of the generated uses; a rerun skips finished units."""

    store = contract.start(cfg)
    for name in dict.fromkeys((*cfg.generators, *cfg.judges)):
        store.note_model(registry.load_model(name))
    items = human_items(cfg)
    go = partial(run_units, cfg.run_dir, work=_work, width=width(cfg.model, *cfg.models, cfg.judge_model),
                 progress=progress)
    first = go("generate", generation_units(cfg) + human_units(cfg, items), desc="aut: generation, human responses")
    uses = first.get("uses", [])
    judged = go("judge", judge_units(cfg, uses), desc="aut: judging the uses")
    store.write("uses", with_distance(uses))
    store.write("turns", first.get("turns", []))
    store.write("judgments", judged.get("judgments", []))
    store.write("human", [x.to_dict() for x in baselines(items)] + first.get("human", []))
    store.write("raters", rater_rows(cfg))
    store.write("baselines_full", full_baselines(cfg))
    store.params["human_sources"] = sorted(items["dataset"].unique()) if len(items) else []
    return contract.finish(store)
