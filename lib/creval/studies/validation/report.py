"""Chapter 04, "Validating semantic entropy": every table and figure as one library call.

``ctx = setup(**params)`` holds the chapter parameters and memoises what several tables share (the
divergent runs, per-step diversity, novelty rankings). Each other function takes ``ctx`` and returns a
styled table (:func:`creval.book.plots.table`) or shows a figure (:func:`creval.book.plots.show`). Derived records
are also written under ``<run_root>/validating/`` (JSONL via :class:`creval.core.runs.RunStore`).

Correlations follow the paper (Spearman rho with p-values; tables 8-14), with percentile bootstrap CIs
added. With fewer than 5 points a correlation is shown as NaN with a note: it is not meaningful.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from creval.book import plots
from creval.measures import diversity as D
from creval.datasets import human as H
from creval.measures import stats as S
from creval.judges.novelty import NoveltyJudge, rank_by_novelty, rank_groups

DIVERSITY = ["cosine", "self_bleu", "distinct_1", "distinct_2"]
LABELS = {"cosine": "Average cosine similarity", "self_bleu": "Self-BLEU", "distinct_1": "Distinct-1",
          "distinct_2": "Distinct-2"}


@dataclass
class Context:
    run_root: str = "data/runs/default"
    model: str = "smollm2-135m"
    models: list = field(default_factory=lambda: ["smollm2-135m"])
    domains: list = field(default_factory=lambda: ["macgyver"])
    limit: int = 3
    n_samples: int = 10
    temperature: float = 1.0
    top_p: float = 0.9
    max_steps: int = 5
    max_step_tokens: int = 48
    nli: str = "minilm-sick"
    strict_entailment: bool = True
    seed: int = 0
    temperatures: list = field(default_factory=list)
    sweep_limit: int = 2
    novelty_model: str = "smollm2-135m"
    aut_items: int = 40
    aut_objects: int = 2
    cambridge_items: int = 40
    macgyver_items: int = 6
    human_ref_problems: int = 3
    human_ref_max_tokens: int = 96
    n_large: int = 20
    h2_limit: int = 2
    n_boot: int = 1000
    bin_size: int = 15
    progress: bool = False
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def out(self) -> Path:
        return Path(self.run_root) / "validating"

    def memo(self, key, fn):
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]


def setup(**params) -> Context:
    """The chapter's context from its parameters (unknown keys are ignored, so the whole shared
    parameter map can be passed)."""
    known = {k: v for k, v in params.items() if k in Context.__dataclass_fields__ and not k.startswith("_")}
    return Context(**known)


def _save(ctx: Context, table: str, df: pd.DataFrame) -> None:
    from creval.core.runs import RunStore
    store = RunStore(ctx.out, {k: getattr(ctx, k) for k in Context.__dataclass_fields__ if not k.startswith("_")})
    store.write(table, json.loads(df.to_json(orient="records")))


def _judge_model(ctx: Context):
    from creval.models.registry import load_model
    return ctx.memo(("model", ctx.novelty_model), lambda: load_model(ctx.novelty_model))


def _corr_row(x, y, ctx: Context, **keys) -> dict:
    r = S.spearman_ci(x, y, n_boot=ctx.n_boot, seed=ctx.seed)
    return {**keys, "rho": r["rho"], "p": r["p"], "ci_low": r["lo"], "ci_high": r["hi"], "n": r["n"], "note": r["note"]}


# -- divergent records ----------------------------------------------------------------------------------
def divergent_dir(ctx: Context, model: str, domain: str, n: int | None = None, temperature: float | None = None) -> Path:
    n = ctx.n_samples if n is None else n
    t = ctx.temperature if temperature is None else temperature
    return Path(ctx.run_root) / "divergent" / model / f"{domain}-n{n}-t{t:g}"


def _run(ctx: Context, model: str, domain: str, n: int, limit: int, temperature: float | None = None):
    from creval.studies.divergent.run import load_records, run_divergent
    t = ctx.temperature if temperature is None else temperature
    out = divergent_dir(ctx, model, domain, n, t)
    run_divergent(model, domain, limit, n, out, temperature=t, top_p=ctx.top_p, max_steps=ctx.max_steps,
                  max_step_tokens=ctx.max_step_tokens, nli=ctx.nli, strict=ctx.strict_entailment, seed=ctx.seed,
                  progress=ctx.progress)
    return load_records(out)


def records(ctx: Context) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Steps and problems of every model x domain (``run_divergent``; free when chapter 02 already ran)."""
    def build():
        steps, probs = [], []
        for m in ctx.models:
            for d in ctx.domains:
                s, p = _run(ctx, m, d, ctx.n_samples, ctx.limit)
                steps.append(s)
                probs.append(p)
        return pd.concat(steps, ignore_index=True), pd.concat(probs, ignore_index=True)
    return ctx.memo("records", build)


def run_summary(ctx: Context):
    """Table: problems and steps per model and domain, with the mean semantic entropy."""
    steps, probs = records(ctx)
    live = _live_steps(steps)
    rows = []
    for (m, d), g in probs.groupby(["model", "domain"]):
        st = live[(live["model"] == m) & (live["domain"] == d)]
        rows.append({"model": m, "domain": d, "problems": len(g), "steps": len(st),
                     "mean semantic entropy": g["mean_semantic_entropy"].mean(),
                     "duplicate-filtered solutions": int(g.get("duplicate_filtered", pd.Series(dtype=bool)).fillna(False).sum())})
    return plots.table(pd.DataFrame(rows), "Divergent runs used in this chapter")


def _live_steps(steps: pd.DataFrame) -> pd.DataFrame:
    if "is_stop" in steps:
        steps = steps[~steps["is_stop"].fillna(False).astype(bool)]
    return steps.reset_index(drop=True)


def _texts(samples) -> list[str]:
    return [str(s.get("clean") or s.get("text") or "") for s in samples]


def step_diversity(ctx: Context) -> pd.DataFrame:
    """One row per (non-STOP) step: its entropies and the four diversity metrics of its ``n`` samples."""
    def build():
        steps, _ = records(ctx)
        live = _live_steps(steps)
        div = D.diversity_many([_texts(s) for s in live["samples"]])
        cols = ["model", "domain", "problem_id", "step_index", "semantic_entropy", "naive_entropy",
                "discrete_entropy", "n_clusters"]
        df = pd.concat([live[[c for c in cols if c in live]].reset_index(drop=True), pd.DataFrame(div)], axis=1)
        _save(ctx, "step_diversity", df)
        return df
    return ctx.memo("step_diversity", build)


def table_entropy_vs_diversity(ctx: Context):
    """Tables 8-10: Spearman rho between semantic entropy and each diversity metric, per model and domain.

    ``step`` level: each step's semantic entropy vs the diversity of its n samples (the paper's unit).
    ``solution`` level: each solution's mean semantic entropy vs the mean of its steps' diversity."""
    df = step_diversity(ctx)
    sol = df.groupby(["model", "domain", "problem_id"])[["semantic_entropy", *DIVERSITY]].mean().reset_index()
    rows = []
    for level, data in (("step", df), ("solution", sol)):
        for (d, m), g in data.groupby(["domain", "model"]):
            for metric in DIVERSITY:
                rows.append(_corr_row(g["semantic_entropy"], g[metric], ctx, domain=d, level=level,
                                      metric=LABELS[metric], model=m))
    out = pd.DataFrame(rows)
    _save(ctx, "entropy_vs_diversity", out)
    return plots.table(out, "Tables 8-10: semantic entropy vs diversity (Spearman; expected sign: negative for "
                            "cosine and self-BLEU, positive for distinct-n)")


def show_entropy_vs_cosine(ctx: Context) -> None:
    """Figure (cf. Fig. 5c): per-step semantic entropy vs average cosine similarity, with fixed-count bin means."""
    import plotly.graph_objects as go
    df = step_diversity(ctx)
    fig = go.Figure()
    for (m, d), g in df.groupby(["model", "domain"]):
        fig.add_trace(go.Scatter(x=g["semantic_entropy"], y=g["cosine"], mode="markers", opacity=0.5,
                                 name=f"{m} · {d}"))
    b = S.bin_fixed_count(df["semantic_entropy"], df["cosine"], size=ctx.bin_size)
    fig.add_trace(go.Scatter(x=b["x_median"], y=b["y_mean"], error_y={"array": b["y_sem"]}, mode="lines+markers",
                             name=f"bin means ({ctx.bin_size} steps/bin)", line={"color": "black"}))
    fig.update_layout(xaxis_title="semantic entropy of the step (nats)", yaxis_title="average cosine similarity of its samples",
                      title="Semantic entropy vs cosine similarity")
    plots.show(fig)


# -- novelty of model solutions -------------------------------------------------------------------------
def solution_novelty(ctx: Context) -> pd.DataFrame:
    """Rank each model's solutions of each domain with the pairwise novelty judge (``novelty_model``)."""
    def build():
        _, probs = records(ctx)
        probs = probs.reset_index(drop=True)
        judge_model = _judge_model(ctx)
        out = []
        for (m, d), g in probs.groupby(["model", "domain"]):
            judge = NoveltyJudge(judge_model, domain=d)
            r = rank_by_novelty(list(zip(g["problem_text"], g["solution"])), judge, seed=ctx.seed)
            for k, (_, row) in enumerate(g.iterrows()):
                out.append({"model": m, "domain": d, "problem_id": row["problem_id"], "novelty_rank": r.rank[k],
                            "novelty_score": r.score[k], "comparisons": r.comparisons, "ties": r.ties,
                            **{c: row.get(c) for c in ("mean_semantic_entropy", "min_semantic_entropy",
                                                       "max_semantic_entropy", "mean_naive_entropy",
                                                       "mean_discrete_entropy", "duplicate_filtered")}})
        df = pd.DataFrame(out)
        _save(ctx, "solution_novelty", df)
        return df
    return ctx.memo("solution_novelty", build)


def _by_model_domain(df: pd.DataFrame):
    for (m, d), g in df.groupby(["model", "domain"]):
        yield m, d, g
    for m, g in df.groupby("model"):
        if g["domain"].nunique() > 1:
            yield m, "all (pooled)", g


def table_novelty_vs_entropy(ctx: Context):
    """Table 11: Spearman rho between judged novelty (score in [0,1], 1 = most novel) and mean semantic entropy."""
    df = solution_novelty(ctx)
    rows = [{**_corr_row(g["novelty_score"], g["mean_semantic_entropy"], ctx, model=m, domain=d),
             "comparisons": int(g.drop_duplicates("domain")["comparisons"].sum()),
             "ties": int(g.drop_duplicates("domain")["ties"].sum())} for m, d, g in _by_model_domain(df)]
    for r in rows:
        r["note"] = _tie_note(r["ties"], r["comparisons"], r["note"])
    return plots.table(pd.DataFrame(rows), "Table 11: novelty vs semantic entropy (positive = more entropy, more novel). "
                                           "Novelty scores are ranks within one domain, so pooled rows mix rankings.")


def _novelty_rhos(df: pd.DataFrame, columns: list[tuple[str, str]]) -> pd.DataFrame:
    """Per model and domain: Spearman rho (and p) of judged novelty with each ``(column, label)``."""
    rows = []
    for m, d, g in _by_model_domain(df):
        row = {"model": m, "domain": d, "n": len(g)}
        for col, name in columns:
            r = S.spearman(g["novelty_score"], g[col]) if col in g else {"rho": np.nan, "p": np.nan, "note": "missing"}
            row[f"{name} rho"], row[f"{name} p"], row["note"] = r["rho"], r["p"], r["note"]
        rows.append(row)
    return pd.DataFrame(rows)


def table_naive_vs_semantic(ctx: Context):
    """Table 13: Spearman rho of judged novelty with naive (sequence-level), semantic and discrete entropy."""
    df = _novelty_rhos(solution_novelty(ctx), [("mean_naive_entropy", "naive"), ("mean_semantic_entropy", "semantic"),
                                               ("mean_discrete_entropy", "discrete")])
    return plots.table(df, "Table 13: naive vs semantic entropy against judged novelty "
                           "(our score: 1 = most novel, so positive rho means aligned; the paper "
                           "correlates with rank position, where negative means aligned)")


def table_aggregation(ctx: Context):
    """Table 14: min / max / mean aggregation of per-step semantic entropy against judged novelty."""
    df = _novelty_rhos(solution_novelty(ctx), [(f"{how}_semantic_entropy", how) for how in ("min", "max", "mean")])
    return plots.table(df, "Table 14: aggregation of step entropies vs judged novelty")


# -- H.2 sample size, H.1 temperature -------------------------------------------------------------------
def sample_size(ctx: Context) -> pd.DataFrame:
    """Per-step clusters and entropy at n = ``n_samples`` and n = ``n_large`` (first domain, ``h2_limit``
    problems). The first n samples of each step prompt come from the cache; clustering is recomputed."""
    def build():
        d = ctx.domains[0]
        rows, ids = [], None
        for n in (ctx.n_large, ctx.n_samples):
            s, p = _run(ctx, ctx.model, d, n, min(ctx.h2_limit, ctx.limit))
            ids = set(p["problem_id"]) if ids is None else ids   # the same problems at both sizes
            s = _live_steps(s)
            s = s[s["problem_id"].isin(ids)]
            rows.append(s.assign(n=n)[["problem_id", "step_index", "n", "n_clusters", "semantic_entropy"]])
        return pd.concat(rows[::-1], ignore_index=True)
    return ctx.memo("sample_size", build)


def table_sample_size(ctx: Context):
    """H.2: steps per number of semantic classes, and mean entropy, at the two sample sizes; plus the
    first step (identical prompt at both sizes) compared directly."""
    df = sample_size(ctx)
    dist = df.pivot_table(index="n_clusters", columns="n", values="step_index", aggfunc="count", fill_value=0)
    dist.columns = [f"steps at n={c}" for c in dist.columns]
    dist = dist.reset_index()
    first = df[df["step_index"] == 0].pivot_table(index="problem_id", columns="n", values="semantic_entropy")
    summary = pd.DataFrame([{"n_clusters": "mean SE (all steps)",
                             **{f"steps at n={n}": g["semantic_entropy"].mean() for n, g in df.groupby("n")}}])
    if first.shape[1] == 2 and len(first):
        a, b = first.iloc[:, 0], first.iloc[:, 1]
        summary = pd.concat([summary, pd.DataFrame([{"n_clusters": "mean SE (step 1 only)",
                                                      f"steps at n={first.columns[0]}": a.mean(),
                                                      f"steps at n={first.columns[1]}": b.mean()}])])
    out = pd.concat([dist.astype({"n_clusters": str}), summary], ignore_index=True)
    return plots.table(out, f"H.2: distribution of steps over semantic classes, n={ctx.n_samples} vs n={ctx.n_large}")


def show_sample_size(ctx: Context) -> None:
    """Figure (cf. Fig. 20): steps per number of semantic classes at both sample sizes."""
    import plotly.graph_objects as go
    df = sample_size(ctx)
    fig = go.Figure()
    for n, g in df.groupby("n"):
        c = g["n_clusters"].value_counts().sort_index()
        fig.add_trace(go.Bar(x=c.index, y=c.values, name=f"n={n}"))
    fig.update_layout(barmode="group", xaxis_title="semantic classes in the step", yaxis_title="steps",
                      title="Steps by number of semantic classes")
    plots.show(fig)


def table_temperature_convergent(ctx: Context):
    """H.1: temperature vs convergent scores, from judge ``verdicts.jsonl`` found under ``run_root`` whose run
    (manifest params or row) records a temperature. Score = share of positive verdicts per solution."""
    root = Path(ctx.run_root)
    rows = []
    for f in sorted(root.rglob("verdicts.jsonl")) if root.exists() else []:
        man = f.parent / "manifest.json"
        params = json.loads(man.read_text()).get("params", {}) if man.exists() else {}
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            try:
                v = json.loads(line)
            except json.JSONDecodeError:
                continue
            t = v.get("temperature", params.get("temperature"))
            if t is None or v.get("verdict") is None:
                continue
            rows.append({"temperature": float(t), "pair": f"{f.parent}:{v.get('pair_id', v.get('problem_id'))}",
                         "criterion": v.get("criterion"), "verdict": float(bool(v["verdict"]))})
    if not rows:
        return plots.table(pd.DataFrame([{"note": "skipped: no judge verdicts with a recorded temperature under "
                                                  f"{root}; run the temperature sweep through a judge (chapter 03) "
                                                  "to fill this table"}]), "H.1: temperature vs convergent creativity")
    df = pd.DataFrame(rows)
    per = df.groupby(["pair", "temperature"])["verdict"].mean().reset_index()
    r = _corr_row(per["temperature"], per["verdict"], ctx, what="temperature vs share of positive verdicts")
    means = per.groupby("temperature")["verdict"].agg(["mean", "count"]).reset_index()
    out = pd.concat([means.rename(columns={"mean": "mean score", "count": "solutions"}), pd.DataFrame([r])])
    return plots.table(out, "H.1: temperature vs convergent creativity")


# -- human ground truth -----------------------------------------------------------------------------------
def aut_items(ctx: Context) -> pd.DataFrame:
    """Human-rated AUT responses (Ocsai-1 ``main2_test``) with every measure: judged novelty (ranked within
    each object), per-item distance from the other responses (cosine, BLEU), distinct-n and SemDis."""
    def build():
        df = H.load_ocsai(n=ctx.aut_items, objects=ctx.aut_objects, seed=ctx.seed)
        q = [f"Name an unusual use for a {o}." for o in df["prompt"]]
        nov = rank_groups(q, list(df["response"]), list(df["prompt"]), NoveltyJudge(_judge_model(ctx), "aut"),
                          seed=ctx.seed)
        out = pd.concat([df, nov, _item_measures(df)], axis=1)
        _save(ctx, "aut_items", out)
        return out
    return ctx.memo("aut_items", build)


def _item_measures(df: pd.DataFrame) -> pd.DataFrame:
    it = D.item_originality(list(df["response"]), list(df["prompt"]))
    it["semdis"] = D.semdis(list(df["prompt"]), list(df["response"]))
    return it


# measure -> (column, sign): sign -1 turns a similarity into "higher = more original"
MEASURES = {"novelty judge": ("novelty_score", 1), "SemDis (prompt-response distance)": ("semdis", 1),
            "cosine distance to others": ("cosine_to_others", -1), "BLEU distance to others": ("bleu_to_others", -1),
            "distinct-1 (within response)": ("distinct_1", 1), "distinct-2 (within response)": ("distinct_2", 1)}


def _rank_rows(df: pd.DataFrame, target: str, ctx: Context, dataset: str) -> list[dict]:
    rows = []
    for name, (col, sign) in MEASURES.items():
        if col not in df:
            continue
        x = sign * df[col].astype(float)
        r = _corr_row(x, df[target], ctx, dataset=dataset, measure=name)
        k = S.kendall(x, df[target])
        rows.append({**r, "kendall tau": k["tau"], "kendall p": k["p"]})
    return rows


def table_aut_validation(ctx: Context):
    """How well each measure ranks human originality ratings of AUT responses (Spearman, Kendall), pooled
    over objects; the novelty judge's scores are ranks within each object."""
    df = aut_items(ctx)
    rows = _rank_rows(df, "score", ctx, f"ocsai1 main2_test ({df['source'].iloc[0]})")
    groups = df.drop_duplicates("prompt")
    rows[0]["note"] = _tie_note(int(groups["group_ties"].sum()), int(groups["group_comparisons"].sum()), rows[0]["note"])
    camb = ctx.memo("cambridge", lambda: _cambridge(ctx))
    if camb is not None:
        rows += _rank_rows(camb, "score", ctx, "cambridge_aut (no judge)")
    judge_note = (f"judge: {int(df.drop_duplicates('prompt')['group_comparisons'].sum())} comparisons, "
                  f"{int(df.drop_duplicates('prompt')['group_ties'].sum())} ties (orders disagreed)")
    return plots.table(pd.DataFrame(rows), f"AUT: measures vs human originality (higher = more original). {judge_note}")


def _cambridge(ctx: Context):
    if ctx.cambridge_items <= 0:
        return None
    df = H.load_cambridge(n=ctx.cambridge_items, seed=ctx.seed)
    return pd.concat([df, _item_measures(df)], axis=1)


def show_aut_scatter(ctx: Context) -> None:
    """Figure: judged novelty score vs human originality rating for each AUT response."""
    import plotly.express as px
    df = aut_items(ctx)
    fig = px.scatter(df, x="score", y="novelty_score", color="prompt", hover_data=["response"],
                     labels={"score": "human originality (1-5)", "novelty_score": "judged novelty (rank in object, 0-1)"},
                     title="Novelty judge vs human AUT ratings")
    plots.show(fig)


def macgyver_items(ctx: Context) -> pd.DataFrame:
    """MacGyver verified solutions labelled unconventional / conventional, with judged novelty (one sort over
    all of them), SemDis (problem vs solution) and distinct-n. (A "distance from crowd solutions" measure is not
    offered: every problem with crowd solutions is labelled unconventional, so it could not separate the classes.)"""
    def build():
        df = H.load_macgyver_unconventional(n_per_class=ctx.macgyver_items, seed=ctx.seed)
        r = rank_by_novelty(list(zip(df["problem"], df["solution"])), NoveltyJudge(_judge_model(ctx), "macgyver"),
                            seed=ctx.seed)
        df["novelty_score"], df["comparisons"], df["ties"] = r.score, r.comparisons, r.ties
        df["semdis"] = D.semdis(list(df["problem"]), list(df["solution"]))
        df["distinct_1"] = [D.distinct_n([t], 1) for t in df["solution"]]
        df["distinct_2"] = [D.distinct_n([t], 2) for t in df["solution"]]
        _save(ctx, "macgyver_items", df)
        return df
    return ctx.memo("macgyver_items", build)


def table_macgyver_unconventional(ctx: Context):
    """AUC of each measure for separating unconventional from conventional MacGyver solutions (0.5 = chance)."""
    df = macgyver_items(ctx)
    rows = []
    for name, col in (("novelty judge", "novelty_score"), ("SemDis (problem-solution distance)", "semdis"),
                      ("distinct-1", "distinct_1"),
                      ("distinct-2", "distinct_2")):
        a = S.auc(df["unconventional"].astype(int), df[col])
        lo, hi = S.bootstrap_ci(_auc_only, df["unconventional"].astype(int).to_numpy(), df[col].to_numpy(dtype=float),
                                n_boot=ctx.n_boot, seed=ctx.seed)
        note = a["note"]
        if col == "novelty_score" and len(df):
            note = _tie_note(int(df["ties"].iloc[0]), int(df["comparisons"].iloc[0]), note)
        rows.append({"measure": name, "AUC": a["auc"], "ci_low": lo, "ci_high": hi, "p (Mann-Whitney)": a["p"],
                     "n": a["n"], "unconventional": a["n_pos"], "note": note})
    note = f"judge: {int(df['comparisons'].iloc[0])} comparisons, {int(df['ties'].iloc[0])} ties" if len(df) else ""
    return plots.table(pd.DataFrame(rows), f"MacGyver: unconventional vs conventional solutions (AUC). {note}")


def _tie_note(ties: int, comparisons: int, note: str = "") -> str:
    """Say how much of a judge ranking is the seeded shuffle: ties (orders disagreed) never move an item."""
    if comparisons and ties == comparisons:
        msg = f"all {comparisons} comparisons tied: the ranking is the seeded shuffle order, no signal"
    elif comparisons:
        msg = f"{ties}/{comparisons} comparisons tied"
    else:
        msg = ""
    return "; ".join(x for x in (note, msg) if x)


def _auc_only(y, s) -> float:
    return S.auc(y, s)["auc"]


def human_reference(ctx: Context) -> pd.DataFrame:
    """Diversity of crowd-written MacGyver solutions vs the same number of whole solutions sampled from
    ``model`` for the same problems (``human_ref_problems`` problems with >= 3 crowd solutions)."""
    def build():
        from creval.models.registry import load_model
        sets = H.human_solution_sets(min_solutions=3, problems=ctx.human_ref_problems, seed=ctx.seed)
        m = load_model(ctx.model)
        rows = []
        for _, row in sets.iterrows():
            human = list(row["solutions"])[:ctx.n_samples]
            msgs = [{"role": "user", "content": f"{row['problem']}\nGive a short step-by-step solution."}]
            samples = m.sample(msgs, len(human), temperature=ctx.temperature, top_p=ctx.top_p,
                               max_tokens=ctx.human_ref_max_tokens, seed=ctx.seed)
            model_texts = [s.text.strip() for s in samples]
            for who, texts in (("humans (crowd)", human), (ctx.model, model_texts)):
                rows.append({"problem_id": row["problem_id"], "solver": who, **D.diversity(texts)})
        df = pd.DataFrame(rows)
        _save(ctx, "human_reference", df)
        return df
    return ctx.memo("human_reference", build)


def table_human_reference(ctx: Context):
    """Mean diversity of whole solutions: crowd vs model, same problems and set sizes."""
    df = human_reference(ctx)
    if df.empty:
        return plots.table(pd.DataFrame([{"note": "no problem with >= 3 crowd solutions"}]), "Human reference")
    out = df.groupby("solver")[[*DIVERSITY, "n"]].mean().reset_index()
    out.insert(1, "problems", df.groupby("solver")["problem_id"].nunique().values)
    return plots.table(out, "Whole-solution diversity: crowd-written vs model-sampled solutions")
