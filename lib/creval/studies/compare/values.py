"""The per-item values of every study's headline measure, read from its records (no call) by the function its
Study declares (``values=``, :mod:`creval.studies.values`): one row per model x measure x item (``model, study,
measure, item, value, judge``). The items are what the models share (a
problem, a NeoCoder problem at a round, a text scored, an AUT object at a level), so two models' values can be
paired item by item. Also the texts whose homogeneity is measured (:func:`idea_rows`)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.judges.base import PROMPTS
from creval.judges.pairwise import judge_version
from creval.models.registry import get_spec
from creval.studies.registry import STUDIES, get_study

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
    params = {cfg.old_name(k): v for k, v in cfg.flat_params().items()}   # old names: the hash stays
    settings = {k: v for k, v in params.items() if "judge" in k or k in (
        "aut_settings", "aut_methods", "aut_verdict_via", "aut_retries", "temperature")}
    return {"judge_model": spec.name, "judge_version": judge_version(spec),
            "prompt_sha": _sha({f.name: f.read_text() for f in sorted(PROMPTS.glob("*.txt"))}),
            "sampling": _sha(settings), "order_seed": int(cfg.seed)}


def study_values(study: str, recs, models, judge: str) -> list[dict]:
    """The value rows of one study's records for ``models``: what its Study declares as ``values`` (none when it
    declares nothing)."""
    fn = get_study(study).values
    return fn(recs, models, judge) if fn is not None else []


# -- the ideas whose homogeneity is measured --------------------------------------------------------------
def idea_rows(study: str, recs, models) -> list[dict]:
    """``task, prompt, source, text`` of the prompts every model answered, as the study's ``ideas`` declares
    them (the n samples of each divergent problem's first step, each model's AUT uses of an object)."""
    fn = get_study(study).ideas
    return [r for r in (fn(recs, models) if fn is not None else []) if r["text"]]


def human_ideas(ideas: pd.DataFrame, per_prompt: int, seed: int) -> tuple[list[dict], list[str]]:
    """People's answers to the same prompts, at most ``per_prompt`` each (drawn with ``seed``), from the study
    whose ``people`` offers them for the task (MacGyver crowd solutions of the divergent MacGyver problems,
    Ocsai-1 human AUT responses of the AUT objects). Also a note per dataset that has none."""
    rows, notes = [], []
    if not len(ideas):
        return rows, notes
    for task, prompts in ideas.groupby("task")["prompt"]:
        want = set(prompts)
        try:
            h = next((h for s in STUDIES.values() if s.people is not None for h in [s.people(task)]
                      if h is not None), None)
        except CrevalError as e:
            notes.append(f"{task}: no human responses ({e.problem})")
            continue
        if h is None:                       # no study offers people's answers to this task
            continue
        h = h[h["problem_id"].isin(want)]
        for pid, g in h.groupby("problem_id"):
            g = g.sample(n=min(per_prompt, len(g)), random_state=np.random.RandomState(seed)) if len(g) else g
            rows += [{"task": task, "prompt": pid, "source": PEOPLE, "text": str(t).strip()} for t in g["text"]]
        if not h["problem_id"].nunique():
            notes.append(f"{task}: the human data has no response to these prompts")
    return [r for r in rows if r["text"]], notes
