"""The per-item values of every study's headline measure, read from its records (no call): one row per model x
measure x item (``model, study, measure, item, value, judge``). The items are what the models share (a
problem, a NeoCoder problem at a round, a text scored, an AUT object at a level), so two models' values can be
paired item by item. Also the texts whose homogeneity is measured (:func:`idea_rows`)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets import aut, macgyver
from creval.judges.base import PROMPTS
from creval.judges.pairwise import judge_version
from creval.measures.entropy import distinct_at_k
from creval.models.registry import get_spec

# what a higher value means, per measure family (the page and docs/compare.md say the same)
HIGHER = {"semantic entropy": "more diverse meanings per step", "distinct": "more distinct meanings among n samples",
          "convergent judge score": "the judge says yes to more criteria",
          "NeoGauge term": "more creative correct code", "pass": "more correct programs (pass@1)",
          "bits per byte": "the model is more surprised by the texts",
          "AUT originality": "the judge rates the uses more original"}
PEOPLE = "people"


def family(measure: str) -> str:
    """The measure's family (its name before the parenthesis or the ``@``)."""
    return measure.split(" (")[0].split("@")[0]


def _sha(x) -> str:
    return hashlib.sha256(json.dumps(x, sort_keys=True, default=str).encode()).hexdigest()[:16]


def judge_provenance(cfg) -> dict:
    """How a study's judged values were judged (the fields of :mod:`creval.studies.compare.provenance`): the
    judge's spec name and a hash of its identity (weights, backend, context), a hash of every judge prompt
    template, the study's judge settings (its Config keys that name a judge, and AUT's judging keys) and the seed
    that shuffles what the judge is shown."""
    spec = get_spec(cfg.judge_model)
    settings = {k: v for k, v in cfg.flat_params().items() if "judge" in k or k in (
        "aut_settings", "aut_methods", "aut_verdict_via", "aut_retries", "temperature")}
    return {"judge_model": spec.name, "judge_version": judge_version(spec),
            "prompt_sha": _sha({f.name: f.read_text() for f in sorted(PROMPTS.glob("*.txt"))}),
            "sampling": _sha(settings), "order_seed": int(cfg.seed)}


def _row(model, study, measure, item, value, judge="") -> dict:
    return {"model": str(model), "study": study, "measure": measure, "item": str(item),
            "value": float(value) if value is not None else float("nan"), "judge": judge}


def divergent_values(recs, models) -> list[dict]:
    """Semantic entropy (mean over a solution's steps) per problem, and distinct@n (meaning classes among
    a step's n samples, STOP rows left out, mean over the problem's steps) per problem, per domain."""
    rows = []
    p = recs["problems"]
    for r in p[p["model"].isin(models)].to_dict("records") if len(p) else []:
        rows.append(_row(r["model"], "divergent", f"semantic entropy ({r['domain']})", r["problem_id"],
                         r["mean_semantic_entropy"]))
    s = recs["steps"]
    if len(s):
        s = s[s["model"].isin(models) & ~s["is_stop"].astype(bool)]
        for (m, d, pid), g in s.groupby(["model", "domain", "problem_id"], sort=False):
            n = int(g["n"].iloc[0])
            rows.append(_row(m, "divergent", f"distinct@{n} ({d})", pid,
                             g["cluster_ids"].map(distinct_at_k).mean()))
    return rows


def convergent_values(recs, models, judge: str) -> list[dict]:
    """The bench judge's share of yes over a solution's criteria (unparsed left out), per problem."""
    v = recs["bench_verdicts"]
    if not len(v):
        return []
    v = v[v["model"].isin(models) & ~v["unparsed"].astype(bool)]
    rows = []
    for (m, d, pid), g in v.groupby(["model", "domain", "pair_id"], sort=False):
        rows.append(_row(m, "convergent", f"convergent judge score ({d})", str(pid).split("::")[0],
                         g["verdict"].astype(float).mean(), judge))
    return rows


def neocoder_values(recs, models) -> list[dict]:
    """Per live round: the NeoGauge term (follows x correct x novelty) and pass@1 (strict judge) per problem."""
    r = recs["rounds"]
    rows = []
    for x in r[r["model"].isin(models)].to_dict("records") if len(r) else []:
        rows.append(_row(x["model"], "neocoder", f"NeoGauge term (round {x['round']})", x["problem_id"],
                         x["neogauge_term"]))
        rows.append(_row(x["model"], "neocoder", f"pass@1 strict (round {x['round']})", x["problem_id"],
                         float(bool(x["verdict_strict"].get("correct")))))
    return rows


def rethinking_values(recs, models) -> list[dict]:
    """How surprised each model is by the shared texts of each set, in bits per byte (the texts' log-likelihood
    over their UTF-8 bytes): unlike perplexity per token it compares models with different tokenizers, and a
    one-word text cannot dominate the mean (its per-text perplexity can run to 10^5)."""
    p = recs["perplexity"]
    return [_row(x["model"], "rethinking", f"bits per byte ({x['set']} texts)", x["id"], x["bpb"])
            for x in (p[p["model"].isin(models)].to_dict("records") if len(p) else [])]


def aut_values(recs, models, judge: str) -> list[dict]:
    """The fixed judge's originality score (1-5) of a model's uses, mean per object x level."""
    j = recs["judgments"]
    if not len(j):
        return []
    j = j[(j["judge"] == judge) & (j["method"] == "score") & j["generator"].isin(models) & j["value"].notna()]
    return [_row(m, "aut", "AUT originality (judge score 1-5)", f"{o}/{lv}", g["value"].astype(float).mean(), judge)
            for (m, o, lv), g in j.groupby(["generator", "object", "level"], sort=False)]


def study_values(study: str, recs, models, judge: str) -> list[dict]:
    """The value rows of one study's records for ``models``."""
    if study in ("convergent", "aut"):
        return {"convergent": convergent_values, "aut": aut_values}[study](recs, models, judge)
    return {"divergent": divergent_values, "neocoder": neocoder_values, "rethinking": rethinking_values}[study](
        recs, models)


# -- the ideas whose homogeneity is measured --------------------------------------------------------------
def idea_rows(study: str, recs, models) -> list[dict]:
    """``task, prompt, source, text`` of the prompts every model answered: the n samples of each divergent
    problem's first step, and each model's AUT uses of an object."""
    rows = []
    if study == "divergent":
        s = recs["steps"]
        if len(s):
            s = s[s["model"].isin(models) & (s["step_index"] == 0) & ~s["is_stop"].astype(bool)]
            for r in s.to_dict("records"):
                rows += [{"task": f"divergent first step ({r['domain']})", "prompt": r["problem_id"],
                          "source": r["model"], "text": str(x.get("clean") or x.get("text") or "").strip()}
                         for x in r["samples"]]
    if study == "aut":
        u = recs["uses"]
        if len(u):
            u = u[u["generator"].isin(models) & ~u["refused"].astype(bool)]
            rows += [{"task": "AUT uses", "prompt": r["object"], "source": r["generator"],
                      "text": str(r["text"]).strip()} for r in u.to_dict("records")]
    return [r for r in rows if r["text"]]


def human_ideas(ideas: pd.DataFrame, per_prompt: int, seed: int) -> tuple[list[dict], list[str]]:
    """People's answers to the same prompts, at most ``per_prompt`` each (drawn with ``seed``): MacGyver crowd
    solutions of the divergent MacGyver problems, Ocsai-1 human AUT responses of the AUT objects. Also a note
    per dataset that has none."""
    rows, notes = [], []
    if not len(ideas):
        return rows, notes
    for task, prompts in ideas.groupby("task")["prompt"]:
        want = set(prompts)
        try:
            if task == "divergent first step (macgyver)":
                h = macgyver.load_human_solutions().rename(columns={"solution": "text"})
            elif task == "AUT uses":
                h = aut.load_ocsai(n=None, objects=None).rename(columns={"prompt": "problem_id", "response": "text"})
            else:
                continue
        except CrevalError as e:
            notes.append(f"{task}: no human responses ({e.problem})")
            continue
        h = h[h["problem_id"].isin(want)]
        for pid, g in h.groupby("problem_id"):
            g = g.sample(n=min(per_prompt, len(g)), random_state=np.random.RandomState(seed)) if len(g) else g
            rows += [{"task": task, "prompt": pid, "source": PEOPLE, "text": str(t).strip()} for t in g["text"]]
        if not h["problem_id"].nunique():
            notes.append(f"{task}: the human data has no response to these prompts")
    return [r for r in rows if r["text"]], notes
