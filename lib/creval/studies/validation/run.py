"""The validation study's run (chapter 04): every embedding, judge call, sample and dataset read behind the
chapter's tables, into ``cfg.run_dir``.

It reads chapter 02's ``steps`` and ``problems`` (the divergent study's records for
``cfg.divergent()``; the divergent study runs first if its folder is not finished) and writes one table per
computed frame:

- ``data_sources``: one line per human ground truth (where it came from, or that it is the bundled sample);
- ``step_diversity``: one row per non-STOP divergent step: its entropies and the diversity of its samples
  (average cosine similarity, self-BLEU, distinct-1/2; paper Tables 8-10);
- ``solution_novelty``: one row per divergent solution: its rank by the pairwise novelty judge
  (``judge_model``) among the solutions of its model and domain, with its entropy aggregates (Tables 11, 13, 14);
- ``sample_size``: per step,
classes and entropy at ``divergent_n_samples`` (the divergent records) and at ``validation_n_large``
  (``model`` rerun on the first ``validation_h2_limit`` problems of the first domain, in ``units/`` below the run
  folder; appendix H.2);
- ``aut_items``: Ocsai-1 responses with human originality ratings, judged novelty (ranked within an
  object) and the per-item measures; ``cambridge``: Cambridge AUT responses with the same measures, no judge;
- ``macgyver_items``: MacGyver solutions labelled unconventional or conventional, with judged novelty
  (one ranking over all of them), SemDis and distinct-n;
- ``human_full``: the measures that need no LLM call (SemDis, cosine distance to the other responses,
  distinct-n) on every labelled item of the three human data sets, flagged ``in_draw`` where the item is in
  the subsample the judge tables use (``human_full`` off: empty);
- ``human_reference``: diversity of crowd-written MacGyver solutions and of as many whole solutions sampled
  from each model under test.

Every computation that calls a model is a unit (:mod:`creval.core.units`), all of them in one runner
(``units/calls.jsonl``) so that their calls overlap on a server: the novelty ranking of one (model, domain)
group of solutions, of one AUT object's responses and of the MacGyver items (each merge-sort level's
comparisons in batches), one H.2 problem rerun at ``validation_n_large`` (its steps a chain), and one human-reference
problem. A finished unit is kept; a table already written is kept; the others are built from the units'
rows and the local measures (embeddings, n-grams), so an interrupted run continues where it stopped.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import pandas as pd

from creval.core import units
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER
from creval.core.runs import RunStore
from creval.datasets import aut, macgyver
from creval.datasets.base import provenance
from creval.judges.novelty import rank_by_novelty, rank_groups
from creval.judges.registry import make_judge
from creval.measures import diversity as D
from creval.models import registry
from creval.models import width as widths
from creval.studies import contract
from creval.studies.divergent import run as divergent
from creval.studies.registry import upstream_records
from creval.studies.validation.config import ValidationConfig

log = logging.getLogger("creval.studies.validation.run")

ENTROPY_COLUMNS = ["model", "domain", "problem_id", "step_index", "semantic_entropy", "naive_entropy",
                   "discrete_entropy", "n_clusters"]
SOLUTION_COLUMNS = ("mean_semantic_entropy", "min_semantic_entropy", "max_semantic_entropy", "mean_naive_entropy",
                    "mean_discrete_entropy", "duplicate_filtered")


def live_steps(steps: pd.DataFrame) -> pd.DataFrame:
    """The steps that proposed a next step (STOP rows dropped), renumbered."""
    if "is_stop" in steps:
        steps = steps[~steps["is_stop"].fillna(False).astype(bool)]
    return steps.reset_index(drop=True)


def _texts(samples) -> list[str]:
    return [str(s.get("clean") or s.get("text") or "") for s in samples]


def _rows(df: pd.DataFrame) -> list[dict]:
    return df.to_dict("records")


# -- the computations (each returns a frame; run() writes them) ---------------------------------------------
def data_source_rows() -> list[dict]:
    """One row per human ground truth used: the dataset, what it gives, and the line the chapter prints."""
    return [{"dataset": ds.DATASET.name, "what": what, "source": str(ds.source()),
             "line": provenance(ds.DATASET, ds.source(), what)}
            for ds, what in ((aut, "AUT originality ratings (Ocsai-1, Cambridge)"),
                             (macgyver, "MacGyver unconventional labels and crowd solutions"))]


def step_diversity(steps: pd.DataFrame, embedder=None) -> pd.DataFrame:
    """One row per non-STOP step: its entropies and the four diversity metrics of its ``n`` samples
    (all steps embedded in one batch)."""
    live = live_steps(steps)
    div = D.diversity_many([_texts(s) for s in live["samples"]], embedder) if len(live) else []
    return pd.concat([live[[c for c in ENTROPY_COLUMNS if c in live]].reset_index(drop=True), pd.DataFrame(div)],
                     axis=1)


def solution_novelty(group: pd.DataFrame, judge, seed: int) -> pd.DataFrame:
    """The solutions of one model and domain (divergent ``problems`` rows) ranked by the novelty ``judge``."""
    g = group.reset_index(drop=True)
    r = rank_by_novelty(list(zip(g["problem_text"], g["solution"])), judge, seed=seed)
    return pd.DataFrame([{"model": row["model"], "domain": row["domain"], "problem_id": row["problem_id"],
                          "novelty_rank": r.rank[k], "novelty_score": r.score[k], "comparisons": r.comparisons,
                          "ties": r.ties, **{c: row.get(c) for c in SOLUTION_COLUMNS}}
                         for k, row in g.iterrows()])


def item_measures(prompts: list[str], texts: list[str], embedder=None, bleu: bool = True) -> pd.DataFrame:
    """Per-item originality measures of responses grouped by prompt (distance from the other responses,
    distinct-n) and SemDis (prompt-response distance); ``bleu=False`` skips the quadratic BLEU to others."""
    it = D.item_originality(texts, prompts, embedder, bleu=bleu)
    it["semdis"] = D.semdis(prompts, texts, embedder)
    return it


def solution_measures(problems: list[str], solutions: list[str]) -> pd.DataFrame:
    """SemDis (problem vs solution) and distinct-1/2 of each solution alone (no grouping: one per problem)."""
    return pd.DataFrame({"semdis": D.semdis(problems, solutions),
                         "distinct_1": [D.distinct_n([t], 1) for t in solutions],
                         "distinct_2": [D.distinct_n([t], 2) for t in solutions]})


def aut_draw(cfg: ValidationConfig) -> pd.DataFrame:
    """The judged AUT subsample: ``aut_items`` Ocsai-1 ``main2_test`` responses over ``aut_objects`` objects."""
    return aut.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.seed).reset_index(drop=True)


def aut_novelty(df: pd.DataFrame, judge, seed: int) -> pd.DataFrame:
    """Judged novelty of AUT responses of one object, ranked among themselves (aligned with ``df``)."""
    q = [f"Name an unusual use for a {o}." for o in df["prompt"]]
    return rank_groups(q, list(df["response"]), list(df["prompt"]), judge, seed=seed)


def aut_items(df: pd.DataFrame, novelty: pd.DataFrame) -> pd.DataFrame:
    """Human-rated AUT responses (:func:`aut_draw`) with their judged ``novelty`` (ranked within each object;
    rows aligned with ``df``), per-item distance from the other responses (cosine, BLEU), distinct-n and SemDis."""
    return pd.concat([df, novelty, item_measures(list(df["prompt"]), list(df["response"]))], axis=1)


def cambridge(cfg: ValidationConfig) -> pd.DataFrame:
    """Cambridge AUT responses (mean rater originality) with the per-item measures (no judge); empty when
    ``cambridge_items`` is 0."""
    if cfg.aut_cambridge_items <= 0:
        return pd.DataFrame()
    df = aut.load_cambridge(n=cfg.aut_cambridge_items, seed=cfg.seed)
    return pd.concat([df, item_measures(list(df["prompt"]), list(df["response"]))], axis=1)


def human_full(cfg: ValidationConfig) -> pd.DataFrame:
    """Every labelled item of Ocsai-1 ``main2_test``, Cambridge and the MacGyver ``Unconventional?`` set with
    the measures that need no LLM call (SemDis; for the AUT sets also cosine similarity to the other responses
    to the same object; distinct-1/2): ``dataset, item_id, stratum, target, in_draw`` and one column per
    measure. ``stratum`` is how the chapter's subsample was spread (object, or class), ``in_draw`` whether the
    item is in it. BLEU to the other responses is left out (quadratic in a group of thousands). Empty when
    ``human_full`` is off."""
    if not cfg.validation_human_full:
        return pd.DataFrame()
    frames = []

    def label(name: str, df: pd.DataFrame) -> str:
        return name if df["source"].iloc[0] != "sample" else f"sample-{name}"
    sets = (("ocsai1 main2_test", lambda: aut.load_ocsai(n=None, objects=None),
             lambda: aut.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.seed)),
            ("cambridge_aut", lambda: aut.load_cambridge(n=None),
             lambda: aut.load_cambridge(n=cfg.aut_cambridge_items, seed=cfg.seed)))
    for name, load_all, load_draw in sets:
        try:
            df = load_all()
        except CrevalError:
            continue
        drawn = set(load_draw()["item_id"]) if len(df) else set()
        measures = item_measures(list(df["prompt"]), list(df["response"]), bleu=False)
        frames.append(pd.DataFrame({
            "dataset": label(name, df), "item_id": df["item_id"], "stratum": df["prompt"],
            "target": df["score"].astype(float), "in_draw": df["item_id"].isin(drawn),
            **{c: measures[c].to_numpy() for c in ("semdis", "cosine_to_others", "distinct_1", "distinct_2")}}))
    mg = macgyver.load_unconventional(n_per_class=None)
    if len(mg):
        drawn = set(macgyver.load_unconventional(n_per_class=cfg.validation_macgyver_items,
                                                 seed=cfg.seed)["problem_id"])
        measures = solution_measures(list(mg["problem"]), list(mg["solution"]))
        frames.append(pd.DataFrame({
            "dataset": label("macgyver", mg), "item_id": mg["problem_id"].astype(str),
            "stratum": mg["unconventional"].map(str), "target": mg["unconventional"].astype(float),
            "in_draw": mg["problem_id"].isin(drawn), **{c: measures[c].to_numpy() for c in measures}}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def macgyver_draw(cfg: ValidationConfig) -> pd.DataFrame:
    """The judged MacGyver subsample: ``macgyver_items`` verified solutions per class."""
    return macgyver.load_unconventional(n_per_class=cfg.validation_macgyver_items, seed=cfg.seed)


def macgyver_novelty(df: pd.DataFrame, judge, seed: int) -> pd.DataFrame:
    """One novelty ranking over all the MacGyver solutions of ``df``: score, comparisons and ties per row."""
    r = rank_by_novelty(list(zip(df["problem"], df["solution"])), judge, seed=seed)
    return pd.DataFrame({"novelty_score": r.score, "comparisons": r.comparisons, "ties": r.ties})


def macgyver_items(df: pd.DataFrame, novelty: pd.DataFrame) -> pd.DataFrame:
    """MacGyver verified solutions labelled unconventional / conventional (:func:`macgyver_draw`), with judged
    ``novelty`` (one ranking over all of them), SemDis (problem vs solution) and distinct-n. (A "distance
    from crowd solutions" measure is not offered: every problem with crowd solutions is labelled
    unconventional.)"""
    df, novelty = df.reset_index(drop=True).copy(), novelty.reindex(columns=["novelty_score", "comparisons", "ties"])
    for c in novelty:
        df[c] = novelty[c].to_numpy()
    measures = solution_measures(list(df["problem"]), list(df["solution"]))
    for c in measures:
        df[c] = measures[c].to_numpy()
    return df


def human_reference_rows(cfg: ValidationConfig, problem: dict, models: dict) -> list[dict]:
    """Diversity of one problem's crowd solutions (at most ``divergent_n_samples``) and of as many whole solutions
    sampled from each model in ``models`` (name -> model)."""
    div = cfg.divergent()
    human = list(problem["solutions"])[:div.divergent_n_samples]
    msgs = [{"role": "user", "content": f"{problem['problem']}\nGive a short step-by-step solution."}]
    rows = [{"problem_id": problem["problem_id"], "solver": "humans (crowd)", **D.diversity(human)}]
    for name, m in models.items():
        samples = m.sample(msgs, len(human), temperature=div.divergent_temperature, top_p=div.divergent_top_p,
                           max_tokens=cfg.validation_human_ref_max_tokens, seed=cfg.seed)
        rows.append({"problem_id": problem["problem_id"], "solver": name,
                     **D.diversity([s.text.strip() for s in samples])})
    return rows


# -- the units ---------------------------------------------------------------------------------------------
def call_units(cfg: ValidationConfig, problems: pd.DataFrame) -> list[units.Unit]:
    """Every computation of the chapter that calls a model, one unit each (see the module doc); ``item`` is
    ``(kind, what)``."""
    groups = list(problems.groupby(["model", "domain"])) if len(problems) else []
    aut = aut_draw(cfg)
    sets = macgyver.human_solution_sets(min_solutions=3, problems=cfg.validation_human_ref_problems, seed=cfg.seed)
    div = cfg.divergent()
    h2 = divergent.problem_units(div, cfg.model, div.divergent_domains[0], n=cfg.validation_n_large,
                                 limit=min(cfg.validation_h2_limit, div.divergent_limit))
    return ([units.Unit(f"novelty/{m}/{d}", ("novelty", g)) for (m, d), g in groups]
            + [units.Unit(f"aut/{o}", ("aut", g)) for o, g in aut.groupby("prompt", sort=False)]
            + [units.Unit("macgyver", ("macgyver", macgyver_draw(cfg)))]
            + [units.Unit(f"h2/{u.key}", ("h2", u)) for u in h2]
            + [units.Unit(f"reference/{row['problem_id']}", ("reference", row)) for _, row in sets.iterrows()])


def call_work(cfg: ValidationConfig):
    """``work(unit) -> {table: rows}`` for :func:`call_units`: the judge's rankings (``solution_novelty``,
    ``aut_novelty`` with each response's ``row`` in :func:`aut_draw`, ``macgyver_novelty``), the H.2 rerun's
    ``h2_steps`` and the ``human_reference`` rows."""
    judge, solve = registry.load_model(cfg.judge_model), divergent.solver(cfg.divergent())

    def novelty(domain: str):
        return make_judge("novelty", judge, domain=domain)

    def work(unit: units.Unit) -> dict[str, list]:
        kind, what = unit.item
        with LEDGER.tagged(unit=unit.key):
            if kind == "novelty":
                return {"solution_novelty": _rows(solution_novelty(what, novelty(what["domain"].iloc[0]), cfg.seed))}
            if kind == "aut":
                nov = aut_novelty(what.reset_index(drop=True), novelty("aut"), cfg.seed)
                return {"aut_novelty": _rows(nov.assign(row=what.index.to_numpy()))}
            if kind == "macgyver":
                return {"macgyver_novelty": _rows(macgyver_novelty(what, novelty("macgyver"), cfg.seed))}
            if kind == "h2":
                return {"h2_steps": solve(what)["steps"]}
            return {"human_reference": human_reference_rows(cfg, what, {m: registry.load_model(m) for m in cfg.tested})}
    return work


# -- the run ---------------------------------------------------------------------------------------------------
def _once(store: RunStore, table: str, build: Callable[[], pd.DataFrame | list[dict]]) -> None:
    """Write ``table`` unless a previous run already wrote it (a table is written whole, atomically)."""
    if store.path(table).exists():
        return
    rows = build()
    store.write(table, _rows(rows) if isinstance(rows, pd.DataFrame) else rows)
    store.flush_calls()


def _in_order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of per-group units back in the order of the items (their ``row``), without that column."""
    return df.sort_values("row").drop(columns="row").reset_index(drop=True) if len(df) else df


def sample_size(cfg: ValidationConfig, steps: pd.DataFrame, big: pd.DataFrame) -> pd.DataFrame:
    """H.2: per-step classes and entropy at ``divergent_n_samples`` (the divergent ``steps``) and at
    ``validation_n_large``
    (``big``: the steps of ``model`` rerun on the first ``validation_h2_limit`` problems of the first domain; the
    first ``divergent_n_samples`` samples of a step prompt come from the call cache)."""
    div = cfg.divergent()
    d = div.divergent_domains[0]
    ids = set(big["problem_id"]) if len(big) else set()
    big = live_steps(big)
    small = live_steps(steps)
    if len(small):
        small = small[(small["model"] == cfg.model) & (small["domain"] == d)]
    parts = []
    for n, s in ((div.divergent_n_samples, small), (cfg.validation_n_large, big)):
        if len(s):
            s = s[s["problem_id"].isin(ids)]
            parts.append(s.assign(n=n)[["problem_id", "step_index", "n", "n_clusters", "semantic_entropy"]])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def run(cfg: ValidationConfig) -> Path:
    """Every validation table of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""

    recs = upstream_records(cfg)["divergent"]
    steps, problems = recs.steps, recs.problems
    store = contract.start(cfg)
    got = units.run_units(store.root, "calls", call_units(cfg, problems), call_work(cfg),
                          width=widths.width(cfg.model, *cfg.models, cfg.judge_model, cfg.divergent().nli_judge()),
                          desc=f"validation · {cfg.run_id}")
    store.flush_calls()

    def frame(table: str) -> pd.DataFrame:
        return pd.DataFrame(got.get(table, []))

    _once(store, "data_sources", data_source_rows)
    _once(store, "step_diversity", lambda: step_diversity(steps))
    _once(store, "solution_novelty", lambda: got.get("solution_novelty", []))
    _once(store, "sample_size", lambda: sample_size(cfg, steps, frame("h2_steps")))
    _once(store, "aut_items", lambda: aut_items(aut_draw(cfg), _in_order(frame("aut_novelty"))))
    _once(store, "cambridge", lambda: cambridge(cfg))
    _once(store, "macgyver_items", lambda: macgyver_items(macgyver_draw(cfg), frame("macgyver_novelty")))
    _once(store, "human_full", lambda: human_full(cfg))
    _once(store, "human_reference", lambda: got.get("human_reference", []))
    for m in (*cfg.tested, cfg.judge_model):
        store.note_model(registry.load_model(m))
    log.info("validation run in %s", store.root)
    return contract.finish(store)
