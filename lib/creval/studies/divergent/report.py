"""Tables, figures and sentences of chapter 02 (divergent creativity), pure: the study's records in
(``STUDY.records(cfg)``), a captioned DataFrame (``df.attrs["caption"]``), a Figure or a
Markdown string out (its counts linked to their items in the study's browser). Each function is one notebook
cell; the records' columns are data names, the tables here give them their display names. The closing "What
this shows" is :mod:`creval.studies.divergent.reading`.
"""
from __future__ import annotations

import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from creval.measures.entropy import distinct_at_k
from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.studies.contract import Records
from creval.studies.divergent.paper import PAPER_SE, PAPER_SE_BOOKMIA_UNFILTERED
from creval.studies.links import items
from creval.studies.tables import captioned, echoes, guard_module, public_text

# the nli_eval table's data names -> the comparison table's display names
NLI_COLUMNS = {"pairs": "pairs", "accuracy": "accuracy", "macro_f1": "macro F1", "baseline": "baseline",
               "baseline_accuracy": "baseline accuracy"}


def live(steps: pd.DataFrame) -> pd.DataFrame:
    """The steps that are part of a solution (the STOP rows left out)."""
    return steps[~steps["is_stop"].astype(bool)] if len(steps) else steps


def records_summary(recs: Records) -> pd.DataFrame:
    """How much was measured: problems, steps, samples, STOP endings, flagged duplicates per model x domain."""
    steps, problems = recs.steps, recs.written("problems")
    g = problems.groupby(["model", "domain"])
    out = g.agg(problems=("problem_id", "size"), mean_steps=("n_steps", "mean"),
                stopped_by_vote=("stopped_by", lambda s: int((s == "vote").sum())),
                duplicates_flagged=("duplicate_filtered", "sum")).reset_index()
    st = steps.groupby(["model", "domain"]).agg(step_rows=("step_index", "size"), n=("n", "first"),
                                                stop_rows=("is_stop", "sum")).reset_index()
    out = out.merge(st, on=["model", "domain"])
    out["steps echoing the problem"] = out.apply(lambda r: echoing_steps(recs, r["model"], r["domain"]), axis=1)
    out["samples without a log-prob"] = out.apply(lambda r: unweighted_samples(recs, r["model"], r["domain"]), axis=1)
    if "data_source" in problems:      # which step of the dataset's fallback chain the problems came from
        out["data"] = out["domain"].map(problems.groupby("domain")["data_source"].first()).map(public_text)
    return captioned(out, "What was measured. 'steps echoing the problem': chosen steps that repeat "
                          f"{ECHO_WORDS} or more consecutive words of the problem statement (the prompt handed "
                          "back, not a step); their entropy measures the copying, not the ideas. 'samples without a "
                          "log-prob': samples the server gave no token log-prob for (an empty reply), read from "
                          "the stored samples; each is left out of its step's semantic-entropy weights")


ECHO_WORDS = 6      # a chosen step repeating this many consecutive words of its problem echoes the prompt


def unweighted_samples(recs: Records, model: str, domain: str) -> int:
    """Samples of ``model`` on ``domain`` whose stored ``mean_logprob`` is unknown (NaN, or null once written
    out): they carry no weight in their step's semantic entropy (measures/entropy.py). Read from the samples
    the step records already hold, so the records and the run id stay as they are."""
    s = recs.steps
    if s.empty or "samples" not in s:
        return 0
    s = s[(s["model"] == model) & (s["domain"] == domain)]
    lps = [x["mean_logprob"] for samples in s["samples"] for x in samples if "mean_logprob" in x]
    return sum(1 for v in lps if v is None or (isinstance(v, float) and math.isnan(v)))


def echoing_steps(recs: Records, model: str, domain: str) -> int:
    """Chosen steps of ``model`` on ``domain`` that repeat :data:`ECHO_WORDS` consecutive words of their
    problem statement (:func:`creval.studies.tables.echoes`)."""
    s, p = live(recs.steps), recs.problems
    if s.empty or p.empty or "samples" not in s or "problem_text" not in p:
        return 0
    s = s[(s["model"] == model) & (s["domain"] == domain)]
    text = p.drop_duplicates("problem_id").set_index("problem_id")["problem_text"]
    n = 0
    for pid, samples, k in zip(s["problem_id"], s["samples"], s["chosen_index"]):
        if pid in text and isinstance(samples, list) and k == k and k is not None and int(k) < len(samples):
            chosen = samples[int(k)]
            n += echoes(chosen.get("clean") or chosen.get("text", ""), text[pid], ECHO_WORDS)
    return n


def mean_sd(x: pd.Series) -> str:
    """``mean ± sd`` (sd over the values, ddof 1) to three decimals; the mean alone for one value."""
    x = x.dropna()
    if not len(x):
        return "–"
    return (f"{num.fmt_number(x.mean(), 3)} ± {num.fmt_number(x.std(ddof=1), 3)}" if len(x) > 1
            else num.fmt_number(x.mean(), 3))


def entropy_table(recs: Records) -> pd.DataFrame:
    """Mean per-solution semantic entropy (mean over its steps; nats) per model x domain, filtered
    (solutions with consecutive identical steps removed) and unfiltered; ± is the SD over problems."""
    rows = []
    for (m, d), g in recs.written("problems").groupby(["model", "domain"]):
        kept = g[~g["duplicate_filtered"].astype(bool)]
        rows.append({"model": m, "domain": d, "problems": len(g), "kept after filter": len(kept),
                     "SE filtered": mean_sd(kept["mean_semantic_entropy"]),
                     "SE unfiltered": mean_sd(g["mean_semantic_entropy"]),
                     "naive entropy": mean_sd(g["mean_naive_entropy"]),
                     "discrete SE": mean_sd(g["mean_discrete_entropy"]),
                     "mean classes / step": round(float(g["mean_n_clusters"].mean()), 2),
                     "max possible (ln n)": round(math.log(int(g["n"].iloc[0])), 3)})
    return captioned(pd.DataFrame(rows), "Divergent creativity: semantic entropy (nats)")


def distinct_table(recs: Records, ks: tuple[int, ...] = (2, 5, 10)) -> pd.DataFrame:
    """NoveltyBench's distinct@k on our entailment classes: the mean over steps (STOP rows left out) of the
    number of meaning classes among a step's first k samples, beside the mean semantic entropy."""
    rows = []
    for (m, d), g in live(recs.written("steps")).groupby(["model", "domain"]):
        n = int(g["n"].iloc[0])
        row = {"model": m, "domain": d, "steps": len(g), "n": n}
        for k in sorted({*(k for k in ks if k < n), n}):
            row[f"distinct@{k}"] = round(float(g["cluster_ids"].map(lambda c: distinct_at_k(c, k)).mean()), 2)
        row["semantic entropy"] = round(float(g["semantic_entropy"].mean()), 3)
        rows.append(row)
    return captioned(pd.DataFrame(rows), "distinct@k (NoveltyBench) on the entailment classes")


def paper_reference(recs: Records) -> pd.DataFrame:
    """The paper's divergent column (Tables 3-5, BookMIA also unfiltered from Table 18, n = 10) for the domains
    this build measured."""
    domains = set(recs.problems["domain"]) if len(recs.problems) else set(PAPER_SE)
    rows = [{"domain": d, "model": m, "SE (paper)": v,
             "SE unfiltered (paper)": PAPER_SE_BOOKMIA_UNFILTERED.get(m) if d == "bookmia" else None}
            for d, vals in PAPER_SE.items() if d in domains for m, v in vals.items()]
    return captioned(pd.DataFrame(rows), "Paper, Tables 3-5 (and 18): semantic entropy")


def kept_sweep(recs: Records) -> pd.DataFrame:
    """The temperature sweep's solutions the tables keep: those flagged ``duplicate_filtered`` left out."""
    s = recs.sweep
    if s.empty or "duplicate_filtered" not in s:
        return s
    return s[~s["duplicate_filtered"].fillna(False).astype(bool)]


def fig_temperature(recs: Records) -> go.Figure:
    """Fig. 5b: mean semantic entropy (± SD over problems) against sampling temperature, on the solutions the
    tables keep (duplicate-filtered ones left out, as in the entropy table)."""
    s = kept_sweep(recs)
    dropped = len(recs.written("sweep")) - len(s)          # no sweep rows: ThinRecords, the figure says so
    g = s.groupby(["model", "temperature"])["mean_semantic_entropy"].agg(["mean", "std", "size"])
    return px.line(g.reset_index(), x="temperature", y="mean", error_y="std", color="model", markers=True,
                   hover_data={"size": True}, labels={"mean": "semantic entropy (nats)"},
                   title="Semantic entropy vs temperature (cf. paper Fig. 5b)"
                         + (f"; {dropped} duplicate-filtered solution(s) left out" if dropped else ""))


def classes_rho(recs: Records) -> dict:
    """Spearman rho of each solution step's semantic entropy with its number of semantic classes (Fig. 5a)."""
    s = live(recs.steps)
    if s.empty or "n_clusters" not in s:
        return {"rho": math.nan, "p": math.nan, "n": 0, "note": "no step recorded"}
    return corr.spearman(s["n_clusters"], s["semantic_entropy"], min_n=3)


def fig_entropy_vs_classes(recs: Records) -> go.Figure:
    """Fig. 5a: each solution step's semantic entropy against its number of semantic classes."""
    s, rho = live(recs.written("steps")), classes_rho(recs)["rho"]
    fig = px.strip(s, x="n_clusters", y="semantic_entropy", color="domain", facet_col="model",
                   labels={"n_clusters": "semantic classes among the n samples", "semantic_entropy": "SE (nats)"},
                   title=f"Semantic entropy vs number of semantic classes (Spearman ρ = {num.fmt_number(rho)}, "
                         f"{len(s)} steps)")
    means = s.groupby("n_clusters")["semantic_entropy"].mean().reset_index()
    fig.add_trace(go.Scatter(x=means["n_clusters"], y=means["semantic_entropy"], mode="lines+markers",
                             name="mean", line={"color": "black"}), row=1, col=1)
    return fig


def fig_entropy_by_step(recs: Records) -> go.Figure:
    """App. H.3 / Fig. 21: mean semantic entropy at each step number (STOP rows excluded)."""
    s = live(recs.written("steps")).assign(step=lambda d: d["step_index"] + 1)
    g = s.groupby(["model", "domain", "step"])["semantic_entropy"].agg(["mean", "std", "size"]).reset_index()
    return px.line(g, x="step", y="mean", error_y="std", color="domain", facet_col="model", markers=True,
                   hover_data={"size": True}, labels={"mean": "semantic entropy (nats)", "step": "step number"},
                   title="Semantic entropy by step number (cf. paper app. H.3)")


def fig_steps_by_classes(recs: Records) -> go.Figure:
    """Fig. 20: how many steps produced 1, 2, ..., n semantic classes."""
    g = live(recs.written("steps")).groupby(["model", "n", "n_clusters"]).size().reset_index(name="steps")
    g["samples per step"] = "n = " + g["n"].astype(str)
    return px.bar(g, x="n_clusters", y="steps", color="samples per step", facet_col="model", barmode="group",
                  labels={"n_clusters": "semantic classes in the step"},
                  title="Distribution of steps by number of semantic classes (cf. paper Fig. 20)")


def entailment_backend(recs: Records) -> pd.DataFrame:
    """Which entailment backend clustered the samples: the one asked for, the one that ran, and why."""
    return captioned(recs.entailment.copy(), "Entailment backend used for semantic clustering")


def nli_comparison(recs: Records) -> pd.DataFrame:
    """Held-out accuracy of the chapter's entailment backend and of ``llm:<model>`` on SICK test and MSRP test
    (Table 1 in spirit; ``nli_eval_pairs`` pairs each, measured by the run): each backend's accuracy beside
    the majority-label baseline, its gain over that baseline, and which backend clustered the samples."""
    df = recs.nli_eval.rename(columns=NLI_COLUMNS)
    if df.empty:
        return captioned(df, "Entailment backends on held-out pairs: none evaluated")
    ran = set(recs.entailment["ran"]) if len(recs.entailment) else set()
    df["gain over baseline"] = df["accuracy"] - df["baseline accuracy"]
    df["clustered the samples"] = df["ran"].isin(ran)
    cols = ["backend", "ran", "dataset", "pairs", "accuracy", "baseline", "baseline accuracy", "gain over baseline",
            "macro F1", "clustered the samples"]
    return captioned(df[[c for c in cols if c in df]], "Entailment backends on held-out pairs (gain = accuracy "
                     "minus always guessing the majority label)")


def example_step(recs: Records) -> pd.DataFrame:
    """The samples of the first recorded step with their class, mean log-prob and whether chosen."""
    r = recs.written("steps").iloc[0]
    return captioned(pd.DataFrame([{"sample": i, "text": s["clean"] or s["text"], "mean log-prob": s["mean_logprob"],
                                    "tokens": s["n_tokens"], "class": c, "STOP vote": s["stop_vote"],
                                    "chosen": i == r["chosen_index"]}
                                   for i, (s, c) in enumerate(zip(r["samples"], r["cluster_ids"]))]),
                     "The samples of one step")


def solutions(recs: Records, width: int = 160) -> pd.DataFrame:
    """One row per solved problem: short problem text, the chosen steps, entropy and flags."""
    p = recs.written("problems").copy()
    p["problem"] = p["problem_text"].str.slice(0, width)
    return captioned(p[["model", "domain", "problem", "solution", "n_steps", "stopped_by", "mean_semantic_entropy",
                        "duplicate_filtered"]], "Solutions built step by step")


# -- the chapter's sentences, from the records ------------------------------------------------------------


def paper_range(domain: str) -> tuple[float, float]:
    """Lowest and highest semantic entropy the paper's Tables 3-5 print for ``domain`` (NaN when absent)."""
    vals = list(PAPER_SE.get(domain, {}).values())
    return (min(vals), max(vals)) if vals else (math.nan, math.nan)


def entropy_levels(recs: Records) -> list[dict]:
    """Per model x domain: problems, the mean filtered semantic entropy, the ceiling ln n, its share of the
    ceiling and the paper's range for the domain (Tables 3-5)."""
    out = []
    for (m, d), g in (recs.problems.groupby(["model", "domain"]) if len(recs.problems) else []):
        kept = g[~g["duplicate_filtered"].astype(bool)]["mean_semantic_entropy"].dropna()
        ceiling = math.log(int(g["n"].iloc[0]))
        se = float(kept.mean()) if len(kept) else math.nan
        lo, hi = paper_range(d)
        out.append({"model": m, "domain": d, "problems": len(g), "kept": len(kept), "se": se, "ceiling": ceiling,
                    "share": se / ceiling if ceiling > 0 else math.nan, "paper_lo": lo, "paper_hi": hi,
                    "classes": float(g["mean_n_clusters"].mean()), "n": int(g["n"].iloc[0]),
                    "data": public_text(", ".join(sorted(set(g["data_source"])))) if "data_source" in g else "?"})
    return out


def no_merge(recs: Records) -> str | None:
    """Why the semantic-entropy claims are empty here, or None: when the entailment model merged no two samples
    on any step (every sample its own class), semantic entropy is naive entropy and says nothing about
    meaning."""
    s = live(recs.steps)
    if s.empty or "n_clusters" not in s or "n" not in s:
        return None
    if (s["n_clusters"] < s["n"]).any():
        return None
    return (f"no merge: the entailment model put every sample in its own class on all {len(s)} steps, so semantic "
            "entropy equals naive entropy")


def sweep_means(recs: Records) -> dict[str, list[tuple[float, float]]]:
    """Per model, ``(temperature, mean solution semantic entropy)`` of the sweep, by temperature (Fig. 5b), over
    the solutions the tables keep (:func:`kept_sweep`)."""
    s = kept_sweep(recs)
    if s.empty:
        return {}
    g = s.groupby(["model", "temperature"])["mean_semantic_entropy"].mean()
    return {m: [(float(t), float(v)) for (_, t), v in x.items()] for m, x in g.groupby(level=0)}


def nli_gains(recs: Records) -> list[dict]:
    """The clustering backend's held-out accuracy and the majority baseline's, per dataset."""
    t = nli_comparison(recs)
    if t.empty:
        return []
    t = t[t["clustered the samples"]]
    return [{"dataset": r["dataset"], "pairs": int(r["pairs"]), "accuracy": float(r["accuracy"]),
             "baseline": float(r["baseline accuracy"])} for r in t.to_dict("records")]


def fmt_temperature_row(pts: list[tuple[float, float]]) -> str:
    return ", ".join(f"{num.fmt_number(v)} at T = {t:g}" for t, v in pts)


def build_caveats(recs: Records) -> str:
    """What this build rests on: the models, the problems per domain and where they came from, the samples per
    step, the entailment backend that ran and how it did on held-out pairs."""
    cfg, lv = recs.cfg, entropy_levels(recs)
    models = sorted({r["model"] for r in lv})
    first = [r for r in lv if r["model"] == models[0]] if lv else []
    per = ", ".join(items(f"{r['problems']} {r['domain']}", "divergent", "problems",
                          {"model": r["model"], "domain": r["domain"]}) + f" ({r['data']})" for r in first) or "no"
    ran = recs.entailment["ran"].iloc[0] if len(recs.entailment) else "?"
    gains = "; ".join(f"{g['dataset']}: accuracy {num.fmt_number(g['accuracy'])} "
                      f"against {num.fmt_number(g['baseline'])} "
                      "for the majority label on "
                      + items(f"{g['pairs']} pairs", "divergent", "nli_eval", {"dataset": g["dataset"]})
                      for g in nli_gains(recs))
    n = lv[0]["n"] if lv else cfg.divergent_n_samples
    return (f"**Read these numbers with care.** This build measured {', '.join(models) or 'no model'} on {per} "
            f"problems (data source in brackets), with n = {n} samples per step. The entailment backend that ran "
            f"is `{ran}`" + (f" ({gains})" if gains else "") + ". With this few problems the ± columns are wide, so "
            "differences between domains or models here are not evidence of anything; a sample-data row only "
            "exercises the code.")


guard_module(globals())
