"""The comparison's run (chapter 09): read every compared study's records (:mod:`.sources`), write their
per-item values and what each run cost, and measure the homogeneity of the models' ideas (the only work done
here: embeddings and entailment, both through the call cache). Tables:

- ``sources``: one row per root x study: read or missing (and why), its run folder and ``judge_model``;
- ``values``: one row per model x measure x item (:mod:`.values`);
- ``costs``: calls, tokens, cost and seconds per root x study x model (:func:`.sources.cost_rows`);
- ``ideas``: the texts whose homogeneity is measured (models' and people's), ``task, prompt, source, text``;
- ``homogeneity``: per prompt and ordered pair of sources, the mean embedding cosine and the entailment
  overlap (:mod:`.spread`);
- ``released``: the released outputs (MacGyver solvers, TTCW writers) on every measure that needs no sample,
  and their human labels, one row per dataset x model x measure x item (:mod:`.released`);
- ``overused``: per released model, the words it over-uses relative to people on the same items (log-odds z);
- ``released_sources``: what each dataset's released outputs were read from, per model;
- ``pairwise``: the pairwise judge's two-order verdicts on the released outputs, with provenance (:mod:`.pairwise`);
- ``equivalence``: the equivalence judge's partition of divergent samples beside their entailment classes
  (:mod:`.equivalence`);
- ``notes``: what could not be compared and why (e.g. no human data for a task).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from creval.models.embeddings import Embedder
from creval.models.registry import model_name
from creval.studies import contract
from creval.studies.compare.config import CompareConfig
from creval.studies.compare.equivalence import equivalence_rows
from creval.studies.compare.pairwise import pairwise_rows
from creval.studies.compare.records import Homogeneity, Value
from creval.studies.compare.released import released_rows
from creval.studies.compare.sources import cost_rows, sources
from creval.studies.compare.spread import homogeneity_rows
from creval.studies.compare.values import human_ideas, idea_rows, judge_provenance, study_values


def gather(srcs) -> tuple[list[dict], list[dict]]:
    """The ``values`` and ``ideas`` rows of every read source."""
    values, ideas = [], []
    for s in srcs:
        if s.records is None:
            continue
        judge = model_name(s.cfg.judge_model) if getattr(s.cfg, "judge_model", "") else ""
        rows = study_values(s.study, s.records, list(s.models), judge)
        if any(r["judge"] for r in rows):             # judged values carry how they were judged
            prov = judge_provenance(s.cfg)
            rows = [{**r, "provenance": prov} if r["judge"] else r for r in rows]
        values += rows
        ideas += idea_rows(s.study, s.records, list(s.models))
    return values, ideas


def run(cfg: CompareConfig) -> Path:
    srcs = sources(cfg)                 # upstream first: a study run here keeps its calls in its own folder
    store = contract.start(cfg)
    for s in srcs:                      # the models compared are those their sources measured
        for model, spec in (s.records.manifest.get("models", {}) if s.records is not None else {}).items():
            store.models.setdefault(model, {**spec, "measured_in": []})["measured_in"].append(f"{s.root}:{s.study}")
    store.write("sources", [s.row() for s in srcs])
    values, ideas = gather(srcs)
    store.write("values", [Value.from_dict(v).to_dict() for v in values])
    store.write("costs", [r for s in srcs for r in cost_rows(s)])
    people, notes = human_ideas(pd.DataFrame(ideas), cfg.compare_human_max, cfg.data_seed)
    ideas += people
    store.write("ideas", ideas)
    rows, embedder = [], Embedder(cfg.compare_embedder)
    if ideas:
        rows = homogeneity_rows(pd.DataFrame(ideas), embedder,
                                cfg.upstream()["divergent"].nli_backend())
    store.write("homogeneity", [Homogeneity.from_dict(r).to_dict() for r in rows])
    released, answers, infos, more = released_rows(cfg, embedder)
    store.write("released", released)
    store.write("overused", [w for i in infos for w in i.pop("overused", [])])
    store.write("released_sources", infos)
    store.write("pairwise", pairwise_rows(cfg, answers, store.root))
    store.write("equivalence", equivalence_rows(cfg, srcs, store.root))
    store.write("notes", [{"note": n} for n in notes + more])
    store.flush_calls()
    return contract.finish(store)
