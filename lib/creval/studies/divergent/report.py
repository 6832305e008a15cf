"""Tables and figures of chapter 02 (divergent creativity), pure: the study's records in (tables of
:func:`creval.studies.divergent.run.records`), a DataFrame or Figure out. Each function is one notebook cell.
"""
from __future__ import annotations

import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from creval.measures import stats as S
from creval.measures.entropy import distinct_at_k

# Divergent column (semantic entropy, nats, n = 10 samples per step) of the paper's Tables 3-5.
PAPER_SE = {
    "macgyver": {"Vicuna 7B": 2.19, "Vicuna 13B": 1.96, "Vicuna 33B": 2.17, "Llama 3 70B Instruct": 2.10,
                 "Llama 3.1 8B Instruct": 2.13, "Llama 3.1 70B Nemotron Instruct": 2.19,
                 "Llama 3.1 405B Instruct": 2.08, "Llama 3.3 70B Instruct": 2.10, "Deepseek R1 70B Distilled": 2.10,
                 "GPT 3.5 Turbo": 2.02, "GPT 4o mini": 2.05, "GPT 4o": 2.08, "Qwen3 32B (Thinking)": 2.02,
                 "Qwen3 32B (Non-think)": 2.08},
    "hypogen": {"GPT 4o": 2.07, "Llama 3.1 8B Instruct": 2.04, "Qwen3 32B (Thinking)": 1.72,
                "Qwen3 32B (Non-think)": 1.66},
    "bookmia": {"GPT 4o": 2.17, "Llama 3.1 8B Instruct": 1.89, "Qwen3 32B (Thinking)": 2.19,
                "Qwen3 32B (Non-think)": 2.19},
}
# BookMIA without the consecutive-duplicate filter (paper Table 18).
PAPER_SE_BOOKMIA_UNFILTERED = {"GPT 4o": 2.01, "Llama 3.1 8B Instruct": 1.81, "Qwen3 32B (Thinking)": 2.18,
                               "Qwen3 32B (Non-think)": 2.11}


def records_summary(steps: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """How much was measured: problems, steps, samples, STOP endings, flagged duplicates per model x domain."""
    g = problems.groupby(["model", "domain"])
    out = g.agg(problems=("problem_id", "size"), mean_steps=("n_steps", "mean"),
                stopped_by_vote=("stopped_by", lambda s: int((s == "vote").sum())),
                duplicates_flagged=("duplicate_filtered", "sum")).reset_index()
    st = steps.groupby(["model", "domain"]).agg(step_rows=("step_index", "size"), n=("n", "first"),
                                                stop_rows=("is_stop", "sum")).reset_index()
    out = out.merge(st, on=["model", "domain"])
    if "data_source" in problems:      # which step of the dataset's fallback chain the problems came from
        out["data"] = out["domain"].map(problems.groupby("domain")["data_source"].first())
    return out


def _mean_sd(x: pd.Series) -> str:
    x = x.dropna()
    if not len(x):
        return "–"
    return f"{x.mean():.3f} ± {x.std(ddof=1):.3f}" if len(x) > 1 else f"{x.mean():.3f}"


def entropy_table(problems: pd.DataFrame) -> pd.DataFrame:
    """Mean per-solution semantic entropy (mean over its steps; nats) per model x domain, filtered
    (solutions with consecutive identical steps removed) and unfiltered; ± is the SD over problems."""
    rows = []
    for (m, d), g in problems.groupby(["model", "domain"]):
        kept = g[~g["duplicate_filtered"].astype(bool)]
        rows.append({"model": m, "domain": d, "problems": len(g), "kept after filter": len(kept),
                     "SE filtered": _mean_sd(kept["mean_semantic_entropy"]),
                     "SE unfiltered": _mean_sd(g["mean_semantic_entropy"]),
                     "naive entropy": _mean_sd(g["mean_naive_entropy"]),
                     "discrete SE": _mean_sd(g["mean_discrete_entropy"]),
                     "mean classes / step": round(float(g["mean_n_clusters"].mean()), 2),
                     "max possible (ln n)": round(math.log(int(g["n"].iloc[0])), 3)})
    return pd.DataFrame(rows)


def distinct_table(steps: pd.DataFrame, ks: tuple[int, ...] = (2, 5, 10)) -> pd.DataFrame:
    """NoveltyBench's distinct@k on our entailment classes: the mean over steps (STOP rows left out) of the
    number of meaning classes among a step's first k samples, beside the mean semantic entropy."""
    s = steps[~steps["is_stop"].astype(bool)] if len(steps) else steps
    rows = []
    for (m, d), g in s.groupby(["model", "domain"]):
        n = int(g["n"].iloc[0])
        row = {"model": m, "domain": d, "steps": len(g), "n": n}
        for k in sorted({*(k for k in ks if k < n), n}):
            row[f"distinct@{k}"] = round(float(g["cluster_ids"].map(lambda c: distinct_at_k(c, k)).mean()), 2)
        row["semantic entropy"] = round(float(g["semantic_entropy"].mean()), 3)
        rows.append(row)
    return pd.DataFrame(rows)


def paper_reference() -> pd.DataFrame:
    """The paper's divergent column (Tables 3-5, BookMIA also unfiltered from Table 18), n = 10."""
    rows = []
    for d, vals in PAPER_SE.items():
        for m, v in vals.items():
            rows.append({"domain": d, "model": m, "SE (paper)": v,
                         "SE unfiltered (paper)": PAPER_SE_BOOKMIA_UNFILTERED.get(m) if d == "bookmia" else None})
    return pd.DataFrame(rows)


def fig_temperature(sweep: pd.DataFrame) -> go.Figure:
    """Fig. 5b: mean semantic entropy (± SD over problems) against sampling temperature."""
    g = sweep.groupby(["model", "temperature"])["mean_semantic_entropy"].agg(["mean", "std", "size"]).reset_index()
    fig = px.line(g, x="temperature", y="mean", error_y="std", color="model", markers=True,
                  hover_data={"size": True}, labels={"mean": "semantic entropy (nats)"},
                  title="Semantic entropy vs temperature (cf. paper Fig. 5b)")
    return fig


def fig_entropy_vs_classes(steps: pd.DataFrame) -> go.Figure:
    """Fig. 5a: each solution step's semantic entropy against its number of semantic classes."""
    s = steps[~steps["is_stop"].astype(bool)]
    rho = S.spearman(s["n_clusters"], s["semantic_entropy"], min_n=3)["rho"]
    fig = px.strip(s, x="n_clusters", y="semantic_entropy", color="domain", facet_col="model",
                   labels={"n_clusters": "semantic classes among the n samples", "semantic_entropy": "SE (nats)"},
                   title=f"Semantic entropy vs number of semantic classes (Spearman ρ = {rho:.2f}, {len(s)} steps)")
    means = s.groupby("n_clusters")["semantic_entropy"].mean().reset_index()
    fig.add_trace(go.Scatter(x=means["n_clusters"], y=means["semantic_entropy"], mode="lines+markers",
                             name="mean", line={"color": "black"}), row=1, col=1)
    return fig


def fig_entropy_by_step(steps: pd.DataFrame) -> go.Figure:
    """App. H.3 / Fig. 21: mean semantic entropy at each step number (STOP rows excluded)."""
    s = steps[~steps["is_stop"].astype(bool)].copy()
    s["step"] = s["step_index"] + 1
    g = s.groupby(["model", "domain", "step"])["semantic_entropy"].agg(["mean", "std", "size"]).reset_index()
    return px.line(g, x="step", y="mean", error_y="std", color="domain", facet_col="model", markers=True,
                   hover_data={"size": True}, labels={"mean": "semantic entropy (nats)", "step": "step number"},
                   title="Semantic entropy by step number (cf. paper app. H.3)")


def fig_steps_by_classes(steps: pd.DataFrame) -> go.Figure:
    """Fig. 20: how many steps produced 1, 2, ..., n semantic classes."""
    s = steps[~steps["is_stop"].astype(bool)]
    g = s.groupby(["model", "n", "n_clusters"]).size().reset_index(name="steps")
    g["samples per step"] = "n = " + g["n"].astype(str)
    return px.bar(g, x="n_clusters", y="steps", color="samples per step", facet_col="model", barmode="group",
                  labels={"n_clusters": "semantic classes in the step"},
                  title="Distribution of steps by number of semantic classes (cf. paper Fig. 20)")


def entailment_backend(entailment: pd.DataFrame) -> pd.DataFrame:
    """Which entailment backend clustered the samples: the one asked for, the one that ran, and why."""
    df = entailment.copy()
    df.attrs["caption"] = "Entailment backend used for semantic clustering"
    return df


def nli_comparison(nli_eval: pd.DataFrame) -> pd.DataFrame:
    """Held-out accuracy of the chapter's entailment backend and of ``llm:<model>`` (Table 1 in spirit,
    on SICK test and MSRP test), ``nli_eval_pairs`` pairs each (computed by the run)."""
    return nli_eval


def example_step(steps: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """The samples of the first recorded step with their cluster, mean log-prob and whether chosen."""
    r = steps.iloc[0]
    return pd.DataFrame([{"sample": i, "text": s["clean"] or s["text"], "mean log-prob": s["mean_logprob"],
                          "tokens": s["n_tokens"], "class": c, "STOP vote": s["stop_vote"],
                          "chosen": i == r["chosen_index"]}
                         for i, (s, c) in enumerate(zip(r["samples"], r["cluster_ids"]))])


def solutions(problems: pd.DataFrame, width: int = 160) -> pd.DataFrame:
    """One row per solved problem: short problem text, the chosen steps, entropy and flags."""
    p = problems.copy()
    p["problem"] = p["problem_text"].str.slice(0, width)
    return p[["model", "domain", "problem", "solution", "n_steps", "stopped_by", "mean_semantic_entropy",
              "duplicate_filtered"]]
