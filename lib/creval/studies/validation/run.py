"""The validation study's run (chapter 04): every embedding, judge call, sample and dataset read behind the
chapter's tables, into ``cfg.run_dir``.

It reads chapter 02's ``steps`` and ``problems`` (:func:`creval.studies.divergent.run.records` of
``cfg.divergent()``; the divergent study runs first if its folder is not finished) and writes one table per
computed frame:

- ``data_sources``: one line per human ground truth (where it came from, or that it is the bundled sample);
- ``step_diversity``: one row per non-STOP divergent step: its entropies and the diversity of its samples
  (average cosine similarity, self-BLEU, distinct-1/2; paper Tables 8-10);
- ``solution_novelty``: one row per divergent solution: its rank by the pairwise novelty judge
  (``judge_model``) among the solutions of its model and domain, with its entropy aggregates (Tables 11, 13, 14);
- ``sample_size``: per step, classes and entropy at ``n_samples`` (the divergent records) and at ``n_large``
  (``model`` rerun on the first ``h2_limit`` problems of the first domain, in ``units/`` below the run
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

Resumable: a table already written is kept; ``solution_novelty`` grows by one (model, domain) group and
``human_reference`` by one problem at a time, so an interrupted run continues where it stopped (and the
call cache serves every call already made).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import pandas as pd

from creval.core.runs import RunStore
from creval.studies import contract
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
    from creval.datasets import aut, macgyver
    from creval.datasets.base import provenance
    return [{"dataset": ds.DATASET.name, "what": what, "source": str(ds.source()),
             "line": provenance(ds.DATASET, ds.source(), what)}
            for ds, what in ((aut, "AUT originality ratings (Ocsai-1, Cambridge)"),
                             (macgyver, "MacGyver unconventional labels and crowd solutions"))]


def step_diversity(steps: pd.DataFrame, embedder=None) -> pd.DataFrame:
    """One row per non-STOP step: its entropies and the four diversity metrics of its ``n`` samples
    (all steps embedded in one batch)."""
    from creval.measures import diversity as D
    live = live_steps(steps)
    div = D.diversity_many([_texts(s) for s in live["samples"]], embedder) if len(live) else []
    return pd.concat([live[[c for c in ENTROPY_COLUMNS if c in live]].reset_index(drop=True), pd.DataFrame(div)],
                     axis=1)


def solution_novelty(group: pd.DataFrame, judge, seed: int) -> pd.DataFrame:
    """The solutions of one model and domain (divergent ``problems`` rows) ranked by the novelty ``judge``."""
    from creval.judges.novelty import rank_by_novelty
    g = group.reset_index(drop=True)
    r = rank_by_novelty(list(zip(g["problem_text"], g["solution"])), judge, seed=seed)
    return pd.DataFrame([{"model": row["model"], "domain": row["domain"], "problem_id": row["problem_id"],
                          "novelty_rank": r.rank[k], "novelty_score": r.score[k], "comparisons": r.comparisons,
                          "ties": r.ties, **{c: row.get(c) for c in SOLUTION_COLUMNS}}
                         for k, row in g.iterrows()])


def item_measures(prompts: list[str], texts: list[str], embedder=None, bleu: bool = True) -> pd.DataFrame:
    """Per-item originality measures of responses grouped by prompt (distance from the other responses,
    distinct-n) and SemDis (prompt-response distance); ``bleu=False`` skips the quadratic BLEU to others."""
    from creval.measures import diversity as D
    it = D.item_originality(texts, prompts, embedder, bleu=bleu)
    it["semdis"] = D.semdis(prompts, texts, embedder)
    return it


def solution_measures(problems: list[str], solutions: list[str]) -> pd.DataFrame:
    """SemDis (problem vs solution) and distinct-1/2 of each solution alone (no grouping: one per problem)."""
    from creval.measures import diversity as D
    return pd.DataFrame({"semdis": D.semdis(problems, solutions),
                         "distinct_1": [D.distinct_n([t], 1) for t in solutions],
                         "distinct_2": [D.distinct_n([t], 2) for t in solutions]})


def aut_items(cfg: ValidationConfig, judge_for: Callable[[str], object]) -> pd.DataFrame:
    """Human-rated AUT responses (Ocsai-1 ``main2_test``) with judged novelty (ranked within each object),
    per-item distance from the other responses (cosine, BLEU), distinct-n and SemDis."""
    from creval.datasets import aut
    from creval.judges.novelty import rank_groups
    df = aut.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.seed)
    q = [f"Name an unusual use for a {o}." for o in df["prompt"]]
    nov = rank_groups(q, list(df["response"]), list(df["prompt"]), judge_for("aut"), seed=cfg.seed)
    return pd.concat([df, nov, item_measures(list(df["prompt"]), list(df["response"]))], axis=1)


def cambridge(cfg: ValidationConfig) -> pd.DataFrame:
    """Cambridge AUT responses (mean rater originality) with the per-item measures (no judge); empty when
    ``cambridge_items`` is 0."""
    from creval.datasets import aut
    if cfg.cambridge_items <= 0:
        return pd.DataFrame()
    df = aut.load_cambridge(n=cfg.cambridge_items, seed=cfg.seed)
    return pd.concat([df, item_measures(list(df["prompt"]), list(df["response"]))], axis=1)


def human_full(cfg: ValidationConfig) -> pd.DataFrame:
    """Every labelled item of Ocsai-1 ``main2_test``, Cambridge and the MacGyver ``Unconventional?`` set with
    the measures that need no LLM call (SemDis; for the AUT sets also cosine similarity to the other responses
    to the same object; distinct-1/2): ``dataset, item_id, stratum, target, in_draw`` and one column per
    measure. ``stratum`` is how the chapter's subsample was spread (object, or class), ``in_draw`` whether the
    item is in it. BLEU to the other responses is left out (quadratic in a group of thousands). Empty when
    ``human_full`` is off."""
    from creval.core.errors import CrevalError
    from creval.datasets import aut, macgyver
    if not cfg.human_full:
        return pd.DataFrame()
    frames = []

    def label(name: str, df: pd.DataFrame) -> str:
        return name if df["source"].iloc[0] != "sample" else f"sample-{name}"
    sets = (("ocsai1 main2_test", lambda: aut.load_ocsai(n=None, objects=None),
             lambda: aut.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.seed)),
            ("cambridge_aut", lambda: aut.load_cambridge(n=None),
             lambda: aut.load_cambridge(n=cfg.cambridge_items, seed=cfg.seed)))
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
        drawn = set(macgyver.load_unconventional(n_per_class=cfg.macgyver_items, seed=cfg.seed)["problem_id"])
        measures = solution_measures(list(mg["problem"]), list(mg["solution"]))
        frames.append(pd.DataFrame({
            "dataset": label("macgyver", mg), "item_id": mg["problem_id"].astype(str),
            "stratum": mg["unconventional"].map(str), "target": mg["unconventional"].astype(float),
            "in_draw": mg["problem_id"].isin(drawn), **{c: measures[c].to_numpy() for c in measures}}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def macgyver_items(cfg: ValidationConfig, judge_for: Callable[[str], object]) -> pd.DataFrame:
    """MacGyver verified solutions labelled unconventional / conventional, with judged novelty (one ranking
    over all of them), SemDis (problem vs solution) and distinct-n. (A "distance from crowd solutions"
    measure is not offered: every problem with crowd solutions is labelled unconventional.)"""
    from creval.datasets import macgyver
    from creval.judges.novelty import rank_by_novelty
    df = macgyver.load_unconventional(n_per_class=cfg.macgyver_items, seed=cfg.seed)
    r = rank_by_novelty(list(zip(df["problem"], df["solution"])), judge_for("macgyver"), seed=cfg.seed)
    df["novelty_score"], df["comparisons"], df["ties"] = r.score, r.comparisons, r.ties
    measures = solution_measures(list(df["problem"]), list(df["solution"]))
    for c in measures:
        df[c] = measures[c].to_numpy()
    return df


def human_reference_rows(cfg: ValidationConfig, problem: dict, models: dict) -> list[dict]:
    """Diversity of one problem's crowd solutions (at most ``n_samples``) and of as many whole solutions
    sampled from each model in ``models`` (name -> model)."""
    from creval.measures import diversity as D
    human = list(problem["solutions"])[:cfg.n_samples]
    msgs = [{"role": "user", "content": f"{problem['problem']}\nGive a short step-by-step solution."}]
    rows = [{"problem_id": problem["problem_id"], "solver": "humans (crowd)", **D.diversity(human)}]
    for name, m in models.items():
        samples = m.sample(msgs, len(human), temperature=cfg.temperature, top_p=cfg.top_p,
                           max_tokens=cfg.human_ref_max_tokens, seed=cfg.seed)
        rows.append({"problem_id": problem["problem_id"], "solver": name,
                     **D.diversity([s.text.strip() for s in samples])})
    return rows


# -- the run ---------------------------------------------------------------------------------------------------
def _once(store: RunStore, table: str, build: Callable[[], pd.DataFrame | list[dict]]) -> None:
    """Write ``table`` unless a previous run already wrote it (a table is written whole, atomically)."""
    if store.path(table).exists():
        return
    rows = build()
    store.write(table, _rows(rows) if isinstance(rows, pd.DataFrame) else rows)
    store.flush_calls()


def _keep_whole(store: RunStore, table: str, key: Callable[[dict], object], sizes: dict) -> set:
    """The keys of ``table`` whose rows are all there (``sizes[key]`` rows); rows of an unfinished key are
    dropped so they are computed again."""
    rows = store.read(table)
    count: dict = {}
    for r in rows:
        count[key(r)] = count.get(key(r), 0) + 1
    done = {k for k, c in count.items() if c == sizes.get(k)}
    kept = [r for r in rows if key(r) in done]
    if len(kept) != len(rows):
        store.write(table, kept)
    return done


def sample_size(cfg: ValidationConfig, root: Path, steps: pd.DataFrame) -> pd.DataFrame:
    """H.2: per-step classes and entropy at ``n_samples`` (the divergent records) and at ``n_large``
    (``model`` rerun on the first ``h2_limit`` problems of the first domain in a unit folder below ``root``;
    the first ``n_samples`` samples of a step prompt come from the call cache)."""
    from creval.studies.divergent.run import solve_domain, unit_dir, unit_rows
    d = cfg.domains[0]
    out = unit_dir(cfg, root, cfg.model, d, cfg.n_large, cfg.temperature)
    keep = solve_domain(cfg, cfg.model, d, out, n=cfg.n_large, limit=min(cfg.h2_limit, cfg.limit))
    ids = set(keep)
    big = live_steps(pd.DataFrame(unit_rows(out, keep)[0]))
    small = live_steps(steps)
    if len(small):
        small = small[(small["model"] == cfg.model) & (small["domain"] == d)]
    parts = []
    for n, s in ((cfg.n_samples, small), (cfg.n_large, big)):
        if len(s):
            s = s[s["problem_id"].isin(ids)]
            parts.append(s.assign(n=n)[["problem_id", "step_index", "n", "n_clusters", "semantic_entropy"]])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def run(cfg: ValidationConfig) -> Path:
    """Every validation table of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
    from tqdm.auto import tqdm

    from creval.datasets import macgyver
    from creval.judges.registry import make_judge
    from creval.models.registry import load_model
    from creval.studies.divergent.run import records as divergent_records

    div = divergent_records(cfg.divergent())
    steps, problems = div.steps, div.problems
    store = contract.start(cfg)
    judge_model: list = []            # loaded on the first judge call (a resumed run may need none)

    def judge_for(domain: str):
        """The pairwise novelty judge (``judge_model``) with the novelty definition of ``domain``."""
        if not judge_model:
            judge_model.append(load_model(cfg.judge_model))
            store.note_model(judge_model[0])
        return make_judge("novelty", judge_model[0], domain=domain)

    bar = tqdm(total=9, desc=f"validation · {cfg.run_id}", unit="table")
    _once(store, "data_sources", data_source_rows)
    bar.update()
    _once(store, "step_diversity", lambda: step_diversity(steps))
    bar.update()

    groups = list(problems.groupby(["model", "domain"])) if len(problems) else []
    done = _keep_whole(store, "solution_novelty", lambda r: (r["model"], r["domain"]),
                       {k: len(g) for k, g in groups})
    for (m, d), g in tqdm(groups, desc="validation · novelty of solutions", unit="group", leave=False):
        if (m, d) not in done:
            store.append("solution_novelty", _rows(solution_novelty(g, judge_for(d), cfg.seed)))
            store.flush_calls()
    if not store.path("solution_novelty").exists():
        store.write("solution_novelty", [])
    bar.update()

    _once(store, "sample_size", lambda: sample_size(cfg, store.root, steps))
    bar.update()
    _once(store, "aut_items", lambda: aut_items(cfg, judge_for))
    bar.update()
    _once(store, "cambridge", lambda: cambridge(cfg))
    bar.update()
    _once(store, "macgyver_items", lambda: macgyver_items(cfg, judge_for))
    bar.update()
    _once(store, "human_full", lambda: human_full(cfg))
    bar.update()

    sets = macgyver.human_solution_sets(min_solutions=3, problems=cfg.human_ref_problems, seed=cfg.seed)
    solvers = 1 + len(cfg.tested)
    done = _keep_whole(store, "human_reference", lambda r: r["problem_id"],
                       {p: solvers for p in sets["problem_id"]})
    models = {name: load_model(name) for name in cfg.tested}
    for _, row in tqdm(list(sets.iterrows()), desc="validation · human reference", unit="problem", leave=False):
        if row["problem_id"] not in done:
            store.append("human_reference", human_reference_rows(cfg, row, models))
            store.flush_calls()
    if not store.path("human_reference").exists():
        store.write("human_reference", [])
    bar.update()
    bar.close()
    for m in (*models.values(), *(judge_model or [load_model(cfg.judge_model)])):
        store.note_model(m)                  # the judge too when a resumed run needed no judge call
    log.info("validation run in %s", store.root)
    return contract.finish(store)


def records(cfg: ValidationConfig) -> contract.Records:
    """The validation tables of ``cfg`` (see the module doc), running only what is missing."""
    return contract.read(cfg, run)
