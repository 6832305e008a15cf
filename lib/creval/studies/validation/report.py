"""Chapter 04, "Validating semantic entropy": every table and figure as one library call.

Each function takes the chapter's :class:`ValidationConfig` and returns a DataFrame (its caption in
``df.attrs["caption"]``) or a plotly Figure; the chapter cell displays it. What several tables share (the
divergent records, per-step diversity, novelty rankings) is memoised per config. The divergent records are
chapter 02's (:func:`creval.studies.divergent.run.records` with the same config). Derived records are also
written under ``<run_root>/validation/<run id>/`` (JSONL via :class:`creval.core.runs.RunStore`).

Correlations follow the paper (Spearman rho with p-values; tables 8-14), with percentile bootstrap CIs
added. With fewer than 5 points a correlation is shown as NaN with a note: it is not meaningful.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures import diversity as D
from creval.datasets import aut, macgyver
from creval.measures import stats as S
from creval.judges.novelty import NoveltyJudge, rank_by_novelty, rank_groups
from creval.studies.divergent.run import records as divergent_records
from creval.studies.validation.config import ValidationConfig
from creval.studies.tables import captioned, memo, save_table, study_dir

DIVERSITY = ["cosine", "self_bleu", "distinct_1", "distinct_2"]
LABELS = {"cosine": "Average cosine similarity", "self_bleu": "Self-BLEU", "distinct_1": "Distinct-1",
          "distinct_2": "Distinct-2"}


BIN_SIZE = 15                  # solutions per fixed-count bin in the figures


def _judge_model(cfg: ValidationConfig):
    from creval.models.registry import load_model
    return memo(cfg, "judge model", lambda: load_model(cfg.novelty_model))


def _corr_row(x, y, cfg: ValidationConfig, **keys) -> dict:
    r = S.spearman_ci(x, y, n_boot=cfg.n_boot, seed=cfg.seed)
    return {**keys, "rho": r["rho"], "p": r["p"], "ci_low": r["lo"], "ci_high": r["hi"], "n": r["n"], "note": r["note"]}


# -- divergent records ----------------------------------------------------------------------------------
def records(cfg: ValidationConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Steps and problems of every model x domain: chapter 02's records (run only if missing)."""
    return memo(cfg, "records", lambda: divergent_records(cfg, progress=False))


def data_sources(cfg: ValidationConfig) -> str:
    """One line per human ground truth this chapter uses: its source, or what is missing and how to add it."""
    from creval.datasets.base import provenance
    lines = [provenance(aut.DATASET, aut.source(), "AUT originality ratings (Ocsai-1, Cambridge)"),
             provenance(macgyver.DATASET, macgyver.source(), "MacGyver unconventional labels and crowd solutions")]
    return "\n".join(lines)


def run_summary(cfg: ValidationConfig):
    """Table: problems and steps per model and domain, with the mean semantic entropy."""
    steps, probs = records(cfg)
    live = _live_steps(steps)
    rows = []
    for (m, d), g in probs.groupby(["model", "domain"]):
        st = live[(live["model"] == m) & (live["domain"] == d)]
        rows.append({"model": m, "domain": d, "problems": len(g), "steps": len(st),
                     "mean semantic entropy": g["mean_semantic_entropy"].mean(),
                     "duplicate-filtered solutions": int(g.get("duplicate_filtered", pd.Series(dtype=bool)).fillna(False).sum())})
    return captioned(pd.DataFrame(rows), "Divergent runs used in this chapter")


def _live_steps(steps: pd.DataFrame) -> pd.DataFrame:
    if "is_stop" in steps:
        steps = steps[~steps["is_stop"].fillna(False).astype(bool)]
    return steps.reset_index(drop=True)


def _texts(samples) -> list[str]:
    return [str(s.get("clean") or s.get("text") or "") for s in samples]


def step_diversity(cfg: ValidationConfig) -> pd.DataFrame:
    """One row per (non-STOP) step: its entropies and the four diversity metrics of its ``n`` samples."""
    def build():
        steps, _ = records(cfg)
        live = _live_steps(steps)
        div = D.diversity_many([_texts(s) for s in live["samples"]])
        cols = ["model", "domain", "problem_id", "step_index", "semantic_entropy", "naive_entropy",
                "discrete_entropy", "n_clusters"]
        df = pd.concat([live[[c for c in cols if c in live]].reset_index(drop=True), pd.DataFrame(div)], axis=1)
        save_table(cfg, "validation", "step_diversity", df)
        return df
    return memo(cfg, "step_diversity", build)


def table_entropy_vs_diversity(cfg: ValidationConfig):
    """Tables 8-10: Spearman rho between semantic entropy and each diversity metric, per model and domain.

    ``step`` level: each step's semantic entropy vs the diversity of its n samples (the paper's unit).
    ``solution`` level: each solution's mean semantic entropy vs the mean of its steps' diversity."""
    df = step_diversity(cfg)
    sol = df.groupby(["model", "domain", "problem_id"])[["semantic_entropy", *DIVERSITY]].mean().reset_index()
    rows = []
    for level, data in (("step", df), ("solution", sol)):
        for (d, m), g in data.groupby(["domain", "model"]):
            for metric in DIVERSITY:
                rows.append(_corr_row(g["semantic_entropy"], g[metric], cfg, domain=d, level=level,
                                      metric=LABELS[metric], model=m))
    out = pd.DataFrame(rows)
    save_table(cfg, "validation", "entropy_vs_diversity", out)
    return captioned(out, "Tables 8-10: semantic entropy vs diversity (Spearman; expected sign: negative for "
                            "cosine and self-BLEU, positive for distinct-n)")


def fig_entropy_vs_cosine(cfg: ValidationConfig) -> go.Figure:
    """Figure (cf. Fig. 5c): per-step semantic entropy vs average cosine similarity, with fixed-count bin means."""
    df = step_diversity(cfg)
    fig = go.Figure()
    for (m, d), g in df.groupby(["model", "domain"]):
        fig.add_trace(go.Scatter(x=g["semantic_entropy"], y=g["cosine"], mode="markers", opacity=0.5,
                                 name=f"{m} · {d}"))
    b = S.bin_fixed_count(df["semantic_entropy"], df["cosine"], size=BIN_SIZE)
    fig.add_trace(go.Scatter(x=b["x_median"], y=b["y_mean"], error_y={"array": b["y_sem"]}, mode="lines+markers",
                             name=f"bin means ({BIN_SIZE} steps/bin)", line={"color": "black"}))
    fig.update_layout(xaxis_title="semantic entropy of the step (nats)", yaxis_title="average cosine similarity of its samples",
                      title="Semantic entropy vs cosine similarity")
    return fig


# -- novelty of model solutions -------------------------------------------------------------------------
def solution_novelty(cfg: ValidationConfig) -> pd.DataFrame:
    """Rank each model's solutions of each domain with the pairwise novelty judge (``novelty_model``)."""
    def build():
        _, probs = records(cfg)
        probs = probs.reset_index(drop=True)
        judge_model = _judge_model(cfg)
        out = []
        for (m, d), g in probs.groupby(["model", "domain"]):
            judge = NoveltyJudge(judge_model, domain=d)
            r = rank_by_novelty(list(zip(g["problem_text"], g["solution"])), judge, seed=cfg.seed)
            for k, (_, row) in enumerate(g.iterrows()):
                out.append({"model": m, "domain": d, "problem_id": row["problem_id"], "novelty_rank": r.rank[k],
                            "novelty_score": r.score[k], "comparisons": r.comparisons, "ties": r.ties,
                            **{c: row.get(c) for c in ("mean_semantic_entropy", "min_semantic_entropy",
                                                       "max_semantic_entropy", "mean_naive_entropy",
                                                       "mean_discrete_entropy", "duplicate_filtered")}})
        df = pd.DataFrame(out)
        save_table(cfg, "validation", "solution_novelty", df)
        return df
    return memo(cfg, "solution_novelty", build)


def _by_model_domain(df: pd.DataFrame):
    for (m, d), g in df.groupby(["model", "domain"]):
        yield m, d, g
    for m, g in df.groupby("model"):
        if g["domain"].nunique() > 1:
            yield m, "all (pooled)", g


def table_novelty_vs_entropy(cfg: ValidationConfig):
    """Table 11: Spearman rho between judged novelty (score in [0,1], 1 = most novel) and mean semantic entropy."""
    df = solution_novelty(cfg)
    rows = [{**_corr_row(g["novelty_score"], g["mean_semantic_entropy"], cfg, model=m, domain=d),
             "comparisons": int(g.drop_duplicates("domain")["comparisons"].sum()),
             "ties": int(g.drop_duplicates("domain")["ties"].sum())} for m, d, g in _by_model_domain(df)]
    for r in rows:
        r["note"] = _tie_note(r["ties"], r["comparisons"], r["note"])
    return captioned(pd.DataFrame(rows), "Table 11: novelty vs semantic entropy (positive = more entropy, more novel). "
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


def table_naive_vs_semantic(cfg: ValidationConfig):
    """Table 13: Spearman rho of judged novelty with naive (sequence-level), semantic and discrete entropy."""
    df = _novelty_rhos(solution_novelty(cfg), [("mean_naive_entropy", "naive"), ("mean_semantic_entropy", "semantic"),
                                               ("mean_discrete_entropy", "discrete")])
    return captioned(df, "Table 13: naive vs semantic entropy against judged novelty "
                           "(our score: 1 = most novel, so positive rho means aligned; the paper "
                           "correlates with rank position, where negative means aligned)")


def table_aggregation(cfg: ValidationConfig):
    """Table 14: min / max / mean aggregation of per-step semantic entropy against judged novelty."""
    df = _novelty_rhos(solution_novelty(cfg), [(f"{how}_semantic_entropy", how) for how in ("min", "max", "mean")])
    return captioned(df, "Table 14: aggregation of step entropies vs judged novelty")


# -- H.2 sample size -------------------------------------------------------------------
def sample_size(cfg: ValidationConfig) -> pd.DataFrame:
    """Per-step clusters and entropy at n = ``n_samples`` and n = ``n_large`` (first domain, ``h2_limit``
    problems). The first n samples of each step prompt come from the cache; clustering is recomputed."""
    def build():
        d = cfg.domains[0]
        rows, ids = [], None
        for n in (cfg.n_large, cfg.n_samples):
            s, p = divergent_records(cfg, models=[cfg.model], domains=[d], n=n, limit=min(cfg.h2_limit, cfg.limit),
                                     progress=False)
            ids = set(p["problem_id"]) if ids is None else ids   # the same problems at both sizes
            s = _live_steps(s)
            s = s[s["problem_id"].isin(ids)]
            rows.append(s.assign(n=n)[["problem_id", "step_index", "n", "n_clusters", "semantic_entropy"]])
        return pd.concat(rows[::-1], ignore_index=True)
    return memo(cfg, "sample_size", build)


def table_sample_size(cfg: ValidationConfig):
    """H.2: steps per number of semantic classes, and mean entropy, at the two sample sizes; plus the
    first step (identical prompt at both sizes) compared directly."""
    df = sample_size(cfg)
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
    return captioned(out, f"H.2: distribution of steps over semantic classes, n={cfg.n_samples} vs n={cfg.n_large}")


def fig_sample_size(cfg: ValidationConfig) -> go.Figure:
    """Figure (cf. Fig. 20): steps per number of semantic classes at both sample sizes."""
    df = sample_size(cfg)
    fig = go.Figure()
    for n, g in df.groupby("n"):
        c = g["n_clusters"].value_counts().sort_index()
        fig.add_trace(go.Bar(x=c.index, y=c.values, name=f"n={n}"))
    fig.update_layout(barmode="group", xaxis_title="semantic classes in the step", yaxis_title="steps",
                      title="Steps by number of semantic classes")
    return fig


# -- human ground truth -----------------------------------------------------------------------------------
def aut_items(cfg: ValidationConfig) -> pd.DataFrame:
    """Human-rated AUT responses (Ocsai-1 ``main2_test``) with every measure: judged novelty (ranked within
    each object), per-item distance from the other responses (cosine, BLEU), distinct-n and SemDis."""
    def build():
        df = aut.load_ocsai(n=cfg.aut_items, objects=cfg.aut_objects, seed=cfg.seed)
        q = [f"Name an unusual use for a {o}." for o in df["prompt"]]
        nov = rank_groups(q, list(df["response"]), list(df["prompt"]), NoveltyJudge(_judge_model(cfg), "aut"),
                          seed=cfg.seed)
        out = pd.concat([df, nov, _item_measures(df)], axis=1)
        save_table(cfg, "validation", "aut_items", out)
        return out
    return memo(cfg, "aut_items", build)


def _item_measures(df: pd.DataFrame) -> pd.DataFrame:
    it = D.item_originality(list(df["response"]), list(df["prompt"]))
    it["semdis"] = D.semdis(list(df["prompt"]), list(df["response"]))
    return it


# measure -> (column, sign): sign -1 turns a similarity into "higher = more original"
MEASURES = {"novelty judge": ("novelty_score", 1), "SemDis (prompt-response distance)": ("semdis", 1),
            "cosine distance to others": ("cosine_to_others", -1), "BLEU distance to others": ("bleu_to_others", -1),
            "distinct-1 (within response)": ("distinct_1", 1), "distinct-2 (within response)": ("distinct_2", 1)}


def _rank_rows(df: pd.DataFrame, target: str, cfg: ValidationConfig, dataset: str) -> list[dict]:
    rows = []
    for name, (col, sign) in MEASURES.items():
        if col not in df:
            continue
        x = sign * df[col].astype(float)
        r = _corr_row(x, df[target], cfg, dataset=dataset, measure=name)
        k = S.kendall(x, df[target])
        rows.append({**r, "kendall tau": k["tau"], "kendall p": k["p"]})
    return rows


def table_aut_validation(cfg: ValidationConfig):
    """How well each measure ranks human originality ratings of AUT responses (Spearman, Kendall), pooled
    over objects; the novelty judge's scores are ranks within each object."""
    df = aut_items(cfg)
    rows = _rank_rows(df, "score", cfg, f"ocsai1 main2_test ({df['source'].iloc[0]})")
    groups = df.drop_duplicates("prompt")
    rows[0]["note"] = _tie_note(int(groups["group_ties"].sum()), int(groups["group_comparisons"].sum()), rows[0]["note"])
    camb = memo(cfg, "cambridge", lambda: _cambridge(cfg))
    if camb is not None:
        rows += _rank_rows(camb, "score", cfg, "cambridge_aut (no judge)")
    judge_note = (f"judge: {int(df.drop_duplicates('prompt')['group_comparisons'].sum())} comparisons, "
                  f"{int(df.drop_duplicates('prompt')['group_ties'].sum())} ties (orders disagreed)")
    return captioned(pd.DataFrame(rows), f"AUT: measures vs human originality (higher = more original). {judge_note}")


def _cambridge(cfg: ValidationConfig):
    if cfg.cambridge_items <= 0:
        return None
    df = aut.load_cambridge(n=cfg.cambridge_items, seed=cfg.seed)
    return pd.concat([df, _item_measures(df)], axis=1)


def fig_aut_scatter(cfg: ValidationConfig) -> go.Figure:
    """Figure: judged novelty score vs human originality rating for each AUT response."""
    import plotly.express as px
    df = aut_items(cfg)
    fig = px.scatter(df, x="score", y="novelty_score", color="prompt", hover_data=["response"],
                     labels={"score": "human originality (1-5)", "novelty_score": "judged novelty (rank in object, 0-1)"},
                     title="Novelty judge vs human AUT ratings")
    return fig


def macgyver_items(cfg: ValidationConfig) -> pd.DataFrame:
    """MacGyver verified solutions labelled unconventional / conventional, with judged novelty (one sort over
    all of them), SemDis (problem vs solution) and distinct-n. (A "distance from crowd solutions" measure is not
    offered: every problem with crowd solutions is labelled unconventional, so it could not separate the classes.)"""
    def build():
        df = macgyver.load_unconventional(n_per_class=cfg.macgyver_items, seed=cfg.seed)
        r = rank_by_novelty(list(zip(df["problem"], df["solution"])), NoveltyJudge(_judge_model(cfg), "macgyver"),
                            seed=cfg.seed)
        df["novelty_score"], df["comparisons"], df["ties"] = r.score, r.comparisons, r.ties
        df["semdis"] = D.semdis(list(df["problem"]), list(df["solution"]))
        df["distinct_1"] = [D.distinct_n([t], 1) for t in df["solution"]]
        df["distinct_2"] = [D.distinct_n([t], 2) for t in df["solution"]]
        save_table(cfg, "validation", "macgyver_items", df)
        return df
    return memo(cfg, "macgyver_items", build)


def table_macgyver_unconventional(cfg: ValidationConfig):
    """AUC of each measure for separating unconventional from conventional MacGyver solutions (0.5 = chance)."""
    df = macgyver_items(cfg)
    rows = []
    for name, col in (("novelty judge", "novelty_score"), ("SemDis (problem-solution distance)", "semdis"),
                      ("distinct-1", "distinct_1"),
                      ("distinct-2", "distinct_2")):
        a = S.auc_ci(df["unconventional"].astype(int), df[col], n_boot=cfg.n_boot, seed=cfg.seed)
        lo, hi = a["lo"], a["hi"]
        note = a["note"]
        if col == "novelty_score" and len(df):
            note = _tie_note(int(df["ties"].iloc[0]), int(df["comparisons"].iloc[0]), note)
        rows.append({"measure": name, "AUC": a["auc"], "ci_low": lo, "ci_high": hi, "p (Mann-Whitney)": a["p"],
                     "n": a["n"], "unconventional": a["n_pos"], "note": note})
    note = f"judge: {int(df['comparisons'].iloc[0])} comparisons, {int(df['ties'].iloc[0])} ties" if len(df) else ""
    return captioned(pd.DataFrame(rows), f"MacGyver: unconventional vs conventional solutions (AUC). {note}")


def _tie_note(ties: int, comparisons: int, note: str = "") -> str:
    """Say how much of a judge ranking is the seeded shuffle: ties (orders disagreed) never move an item."""
    if comparisons and ties == comparisons:
        msg = f"all {comparisons} comparisons tied: the ranking is the seeded shuffle order, no signal"
    elif comparisons:
        msg = f"{ties}/{comparisons} comparisons tied"
    else:
        msg = ""
    return "; ".join(x for x in (note, msg) if x)


def human_reference(cfg: ValidationConfig) -> pd.DataFrame:
    """Diversity of crowd-written MacGyver solutions vs the same number of whole solutions sampled from
    ``model`` for the same problems (``human_ref_problems`` problems with >= 3 crowd solutions)."""
    def build():
        from creval.models.registry import load_model
        sets = macgyver.human_solution_sets(min_solutions=3, problems=cfg.human_ref_problems, seed=cfg.seed)
        m = load_model(cfg.model)
        rows = []
        for _, row in sets.iterrows():
            human = list(row["solutions"])[:cfg.n_samples]
            msgs = [{"role": "user", "content": f"{row['problem']}\nGive a short step-by-step solution."}]
            samples = m.sample(msgs, len(human), temperature=cfg.temperature, top_p=cfg.top_p,
                               max_tokens=cfg.human_ref_max_tokens, seed=cfg.seed)
            model_texts = [s.text.strip() for s in samples]
            for who, texts in (("humans (crowd)", human), (cfg.model, model_texts)):
                rows.append({"problem_id": row["problem_id"], "solver": who, **D.diversity(texts)})
        df = pd.DataFrame(rows)
        save_table(cfg, "validation", "human_reference", df)
        return df
    return memo(cfg, "human_reference", build)


def table_human_reference(cfg: ValidationConfig):
    """Mean diversity of whole solutions: crowd vs model, same problems and set sizes."""
    df = human_reference(cfg)
    if df.empty:
        return captioned(pd.DataFrame([{"note": "no problem with >= 3 crowd solutions"}]), "Human reference")
    out = df.groupby("solver")[[*DIVERSITY, "n"]].mean().reset_index()
    out.insert(1, "problems", df.groupby("solver")["problem_id"].nunique().values)
    return captioned(out, "Whole-solution diversity: crowd-written vs model-sampled solutions")
