"""Chapter 04, "Validating semantic entropy": every table and figure, pure.

Each function takes the validation records (``STUDY.records(cfg)``: tables
``step_diversity``, ``solution_novelty``, ``sample_size``, ``aut_items``, ``cambridge``, ``macgyver_items``,
``human_full``, ``human_reference``, ``data_sources``; ``n_boot``, ``seed`` and ``draws`` from its config) and
returns a DataFrame (its caption in ``df.attrs["caption"]``), a plotly Figure or a (Markdown) string; the
chapter cell displays it. Nothing here calls a model, a judge or an embedder, or reads a dataset: the run did
all of that.

Correlations follow the paper (Spearman rho with p-values; tables 8-14), with percentile bootstrap CIs
(``n_boot`` resamples, seeded with ``seed``) added. With fewer than 5 points a correlation is left blank (–)
with a note: it is not meaningful.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from creval.measures.stats import correlation as corr
from creval.measures.stats import resample as R
from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.tracking import MIN_UNITS, column_stats
from creval.studies.config import boot_settings
from creval.studies.contract import Records
from creval.studies.tables import captioned, guard_module, public_text

DIVERSITY = ["cosine", "self_bleu", "distinct_1", "distinct_2"]
LABELS = {"cosine": "Average cosine similarity", "self_bleu": "Self-BLEU", "distinct_1": "Distinct-1",
          "distinct_2": "Distinct-2"}


BIN_SIZE = 15                  # solutions per fixed-count bin in the figures


def boot(recs, n_boot: int | None = None, seed: int | None = None) -> dict:
    """The bootstrap settings: those given, else the run config's ``n_boot`` and ``seed`` (1000 and 0 without
    one)."""
    n, s = boot_settings(recs)
    return {"n_boot": n_boot if n_boot is not None else n, "seed": seed if seed is not None else s}


def _corr_row(x, y, n_boot: int, seed: int, cluster=None, group=None, **keys) -> dict:
    """Spearman rho of ``x`` and ``y`` with a percentile bootstrap interval that resamples whole ``cluster``s
    (the steps of one problem are one independent unit; rows when None) within each ``group`` (a stratum: the
    AUT object) and the number of ``units``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    r = corr.spearman(x, y)
    unit = None if cluster is None else np.asarray(cluster, dtype=object)[keep]
    strata = None if group is None else np.asarray(group, dtype=object)[keep]
    b = cluster_bootstrap(lambda a, c: column_stats(a[:, None], c, "spearman")[0], x[keep], y[keep], cluster=unit,
                          group=strata, n_boot=n_boot, seed=seed)
    few = b["n_units"] < MIN_UNITS             # 1-4 independent units: no interval is drawn (nor counted)
    ok = not r["note"] and not few
    note = "; ".join(t for t in (r["note"], b["note"] if ok else "",
                                 f"{b['n_units']} independent unit(s): no interval" if few else "") if t)
    return {**keys, "rho": r["rho"], "p": r["p"], "ci_low": b["lo"] if ok else np.nan,
            "ci_high": b["hi"] if ok else np.nan, "n": r["n"], "units": b["n_units"], "note": note,
            "mc_lo": b["mc_lo"] if ok else np.nan, "mc_hi": b["mc_hi"] if ok else np.nan}


MARGINS = ["mc_lo", "mc_hi"]   # the bounds' Monte-Carlo margins: for the verdicts (margins=True), not shown


def _shown(df: pd.DataFrame, margins: bool) -> pd.DataFrame:
    return df if margins else df.drop(columns=[c for c in MARGINS if c in df])


def data_sources(recs: Records) -> str:
    """One line per human ground truth this chapter uses: its source, or what is missing and how to add it."""
    sources = recs.data_sources
    return "\n".join(public_text(x) for x in sources["line"]) if len(sources) else ""


def run_summary(recs: Records):
    """Table: problems and steps per model and domain, with the mean semantic entropy (one
    ``solution_novelty`` row per divergent solution, one ``step_diversity`` row per non-STOP step)."""
    step_diversity, solution_novelty = recs.step_diversity, recs.solution_novelty
    rows = []
    for (m, d), g in (solution_novelty.groupby(["model", "domain"]) if len(solution_novelty) else []):
        st = step_diversity[(step_diversity["model"] == m) & (step_diversity["domain"] == d)] \
            if len(step_diversity) else step_diversity
        rows.append({"model": m, "domain": d, "problems": len(g), "steps": len(st),
                     "mean semantic entropy": g["mean_semantic_entropy"].mean(),
                     "duplicate-filtered solutions": int(g.get("duplicate_filtered", pd.Series(dtype=bool))
                                                         .fillna(False).sum())})
    return captioned(pd.DataFrame(rows), "Divergent runs used in this chapter")


def table_entropy_vs_diversity(recs: Records, n_boot: int | None = None, seed: int | None = None,
                               margins: bool = False):
    """Tables 8-10: Spearman rho between semantic entropy and each diversity metric, per model and domain.

    ``step`` level: each step's semantic entropy vs the diversity of its n samples (the paper's unit).
    ``solution`` level: each solution's mean semantic entropy vs the mean of its steps' diversity.
    ``margins``: with the bounds' Monte-Carlo margins (``mc_lo``, ``mc_hi``) for the verdicts."""
    df, b = recs.step_diversity, boot(recs, n_boot, seed)
    if df.empty:
        return captioned(pd.DataFrame(columns=["domain", "level", "metric", "model", "rho", "p", "ci_low", "ci_high",
                                               "n", "note"]), "Tables 8-10: no step was measured in this build")
    sol = df.groupby(["model", "domain", "problem_id"])[["semantic_entropy", *DIVERSITY]].mean().reset_index()
    rows = []
    for level, data in (("step", df), ("solution", sol)):
        for (d, m), g in data.groupby(["domain", "model"]):
            for metric in DIVERSITY:
                rows.append(_corr_row(g["semantic_entropy"], g[metric], b["n_boot"], b["seed"], cluster=g["problem_id"],
                                      domain=d, level=level, metric=LABELS[metric], model=m))
    out = _shown(pd.DataFrame(rows), margins)
    return captioned(out, "Tables 8-10: semantic entropy vs diversity (Spearman; expected sign: negative for "
                            "cosine and self-BLEU, positive for distinct-n)")


def fig_entropy_vs_cosine(recs: Records) -> go.Figure:
    """Figure (cf. Fig. 5c): per-step semantic entropy vs average cosine similarity, with fixed-count bin means."""
    df = recs.written("step_diversity")
    fig = go.Figure()
    for (m, d), g in df.groupby(["model", "domain"]):
        fig.add_trace(go.Scatter(x=g["semantic_entropy"], y=g["cosine"], mode="markers", opacity=0.5,
                                 name=f"{m} · {d}"))
    b = corr.bin_fixed_count(df["semantic_entropy"], df["cosine"], size=BIN_SIZE)
    fig.add_trace(go.Scatter(x=b["x_median"], y=b["y_mean"], error_y={"array": b["y_sem"]}, mode="lines+markers",
                             name=f"bin means ({BIN_SIZE} steps/bin)", line={"color": "black"}))
    fig.update_layout(xaxis_title="semantic entropy of the step (nats)",
                      yaxis_title="average cosine similarity of its samples",
                      title="Semantic entropy vs cosine similarity")
    return fig


# -- novelty of model solutions -------------------------------------------------------------------------
def _by_model_domain(df: pd.DataFrame):
    for (m, d), g in df.groupby(["model", "domain"]):
        yield m, d, g
    for m, g in df.groupby("model"):
        if g["domain"].nunique() > 1:
            yield m, "all (pooled)", g


def table_novelty_vs_entropy(recs: Records, n_boot: int | None = None, seed: int | None = None,
                             margins: bool = False):
    """Table 11: Spearman rho between judged novelty (score in [0,1], 1 = most novel) and mean semantic entropy
    (``margins``: as in :func:`table_entropy_vs_diversity`)."""
    df, b = recs.written("solution_novelty"), boot(recs, n_boot, seed)
    rows = [{**_corr_row(g["novelty_score"], g["mean_semantic_entropy"], b["n_boot"], b["seed"], model=m, domain=d),
             "comparisons": int(g.drop_duplicates("domain")["comparisons"].sum()),
             "ties": int(g.drop_duplicates("domain")["ties"].sum())} for m, d, g in _by_model_domain(df)]
    for r in rows:
        r["note"] = _tie_note(r["ties"], r["comparisons"], r["note"])
    return captioned(_shown(pd.DataFrame(rows), margins), "Table 11: novelty vs semantic entropy (positive = more "
                     "entropy, more novel). Novelty scores are ranks within one domain, so pooled rows mix rankings.")


def _novelty_rhos(df: pd.DataFrame, columns: list[tuple[str, str]]) -> pd.DataFrame:
    """Per model and domain: Spearman rho (and p) of judged novelty with each ``(column, label)``."""
    rows = []
    for m, d, g in _by_model_domain(df):
        row = {"model": m, "domain": d, "n": len(g)}
        for col, name in columns:
            r = (corr.spearman(g["novelty_score"], g[col]) if col in g
                 else {"rho": np.nan, "p": np.nan, "note": "missing"})
            row[f"{name} rho"], row[f"{name} p"], row["note"] = r["rho"], r["p"], r["note"]
        rows.append(row)
    return pd.DataFrame(rows)


def _semantic_minus_naive(g: pd.DataFrame, n_boot: int, seed: int) -> dict:
    """Table 13's comparison on one model and domain: rho(novelty, semantic) - rho(novelty, naive) on the
    same solutions, both correlations on each resample of the problems (a paired bootstrap)."""
    cols = ["novelty_score", "mean_semantic_entropy", "mean_naive_entropy"]
    g = g.dropna(subset=cols) if all(c in g for c in cols) else g.iloc[:0]
    if len(g) < corr.MIN_N or g.get("problem_id", pd.Series(dtype=object)).nunique() < MIN_UNITS:   # as beside it
        return {"semantic - naive": np.nan, "diff lo": np.nan, "diff hi": np.nan, "units": len(g),
                "mc_lo": np.nan, "mc_hi": np.nan}
    both = g[cols[1:]].to_numpy(float)
    b = cluster_bootstrap(lambda x, y: float(np.subtract(*column_stats(x, y, "spearman"))), both,
                          g["novelty_score"].to_numpy(float), cluster=g["problem_id"].to_numpy(object),
                          n_boot=n_boot, seed=seed)
    return {"semantic - naive": b["value"], "diff lo": b["lo"], "diff hi": b["hi"], "units": b["n_units"],
            "mc_lo": b["mc_lo"], "mc_hi": b["mc_hi"]}


def table_naive_vs_semantic(recs: Records, margins: bool = False):
    """Table 13: Spearman rho of judged novelty with naive (sequence-level), semantic and discrete entropy, and
    the paired difference of the first two (semantic minus naive, bootstrap over problems: both correlations
    on each resample); ``margins`` as in :func:`table_entropy_vs_diversity`."""
    sn, b = recs.written("solution_novelty"), boot(recs)
    df = _novelty_rhos(sn, [("mean_naive_entropy", "naive"), ("mean_semantic_entropy", "semantic"),
                            ("mean_discrete_entropy", "discrete")])
    diffs = [_semantic_minus_naive(g, b["n_boot"], b["seed"]) for _, _, g in _by_model_domain(sn)]
    df = pd.concat([df, pd.DataFrame(diffs, index=df.index)], axis=1) if diffs else df
    return captioned(_shown(df, margins), "Table 13: naive vs semantic entropy against judged novelty "
                     "(our score: 1 = most novel, so positive rho means aligned; the paper correlates with rank "
                     "position, where negative means aligned). semantic - naive: the difference of the two rhos "
                     "on the same solutions, with a 95% paired bootstrap interval over problems")


def table_aggregation(recs: Records):
    """Table 14: min / max / mean aggregation of per-step semantic entropy against judged novelty."""
    df = _novelty_rhos(recs.written("solution_novelty"),
                       [(f"{how}_semantic_entropy", how) for how in ("min", "max", "mean")])
    return captioned(df, "Table 14: aggregation of step entropies vs judged novelty")


# -- H.2 sample size -------------------------------------------------------------------
def _sizes(df: pd.DataFrame) -> tuple:
    """The two sample sizes of the ``sample_size`` records: ``divergent_n_samples`` rows come first,
    then ``validation_n_large``."""
    ns = list(dict.fromkeys(df["n"])) if len(df) else ["?"]
    return tuple((ns * 2)[:2])


def table_sample_size(recs: Records):
    """H.2: steps per number of semantic classes, and mean entropy, at the two sample sizes; plus the
    first step (identical prompt at both sizes) compared directly."""
    df = recs.written("sample_size")
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
    small, large = _sizes(df)
    return captioned(out, f"H.2: distribution of steps over semantic classes, n={small} vs n={large}")


def fig_sample_size(recs: Records) -> go.Figure:
    """Figure (cf. Fig. 20): steps per number of semantic classes at both sample sizes."""
    df = recs.written("sample_size")
    fig = go.Figure()
    for n, g in df.groupby("n"):
        c = g["n_clusters"].value_counts().sort_index()
        fig.add_trace(go.Bar(x=c.index, y=c.values, name=f"n={n}"))
    fig.update_layout(barmode="group", xaxis_title="semantic classes in the step", yaxis_title="steps",
                      title="Steps by number of semantic classes")
    return fig


# -- human ground truth -----------------------------------------------------------------------------------
# measure -> (column, sign): sign -1 turns a similarity into "higher = more original"
MEASURES = {"novelty judge": ("novelty_score", 1), "SemDis (prompt-response distance)": ("semdis", 1),
            "cosine distance to others": ("cosine_to_others", -1), "BLEU distance to others": ("bleu_to_others", -1),
            "distinct-1 (within response)": ("distinct_1", 1), "distinct-2 (within response)": ("distinct_2", 1)}


def _rank_rows(df: pd.DataFrame, target: str, n_boot: int, seed: int, dataset: str) -> list[dict]:
    rows = []
    for name, (col, sign) in MEASURES.items():
        if col not in df:
            continue
        x = sign * df[col].astype(float)       # each response a unit, drawn within its object (aut.DATASET)
        strata = df["prompt"] if "prompt" in df else None
        r = _corr_row(x, df[target], n_boot, seed, group=strata, dataset=dataset, measure=name)
        k = corr.kendall(x, df[target])
        rows.append({**r, "kendall tau": k["tau"], "kendall p": k["p"]})
    return rows


def table_aut_validation(recs: Records):
    """How well each measure ranks human originality ratings of AUT responses (Spearman, Kendall), pooled
    over objects; the novelty judge's scores are ranks within each object. The ``cambridge`` table (no judge)
    adds the cheap measures on Cambridge AUT ratings when it has rows."""
    df, cambridge = recs.written("aut_items", "source"), recs.cambridge
    n_boot, seed = boot(recs).values()
    rows = _rank_rows(df, "score", n_boot, seed, f"ocsai1 main2_test ({df['source'].iloc[0]})")
    groups = df.drop_duplicates("prompt")
    rows[0]["note"] = _tie_note(int(groups["group_ties"].sum()), int(groups["group_comparisons"].sum()),
                                rows[0]["note"])
    if cambridge is not None and len(cambridge):
        rows += _rank_rows(cambridge, "score", n_boot, seed, "cambridge_aut (no judge)")
    judge_note = (f"judge: {int(df.drop_duplicates('prompt')['group_comparisons'].sum())} comparisons, "
                  f"{int(df.drop_duplicates('prompt')['group_ties'].sum())} ties (orders disagreed)")
    return captioned(_shown(pd.DataFrame(rows), False),
                     f"AUT: measures vs human originality (higher = more original). {judge_note}")


def fig_aut_scatter(recs: Records) -> go.Figure:
    """Figure: judged novelty score vs human originality rating for each AUT response."""
    fig = px.scatter(recs.written("aut_items", "score"), x="score", y="novelty_score", color="prompt",
                     hover_data=["response"],
                     labels={"score": "human originality (1-5)",
                             "novelty_score": "judged novelty (rank in object, 0-1)"},
                     title="Novelty judge vs human AUT ratings")
    return fig


def table_macgyver_unconventional(recs: Records):
    """AUC of each measure for separating unconventional from conventional MacGyver solutions (0.5 = chance)."""
    df = recs.written("macgyver_items", "unconventional")
    n_boot, seed = boot(recs).values()
    rows = []
    for name, col in (("novelty judge", "novelty_score"), ("SemDis (problem-solution distance)", "semdis"),
                      ("distinct-1", "distinct_1"),
                      ("distinct-2", "distinct_2")):
        a = corr.auc_ci(df["unconventional"].astype(int), df[col], n_boot=n_boot, seed=seed)
        lo, hi = a["lo"], a["hi"]
        note = a["note"]
        if col == "novelty_score" and len(df):
            note = _tie_note(int(df["ties"].iloc[0]), int(df["comparisons"].iloc[0]), note)
        rows.append({"measure": name, "AUC": a["auc"], "ci_low": lo, "ci_high": hi, "p (Mann-Whitney)": a["p"],
                     "n": a["n"], "unconventional": a["n_pos"], "note": note})
    note = f"judge: {int(df['comparisons'].iloc[0])} comparisons, {int(df['ties'].iloc[0])} ties" if len(df) else ""
    return captioned(pd.DataFrame(rows), f"MacGyver: unconventional vs conventional solutions (AUC). {note}")


FULL_MEASURES = {"SemDis (prompt-response distance)": ("semdis", 1),
                 "cosine distance to others": ("cosine_to_others", -1),
                 "distinct-1 (within response)": ("distinct_1", 1), "distinct-2 (within response)": ("distinct_2", 1)}


def table_full_data(recs: Records):
    """The measures without an LLM call on every labelled item (Spearman with the human rating for the AUT sets,
    AUC of the ``Unconventional?`` label for MacGyver), beside the same statistic on the chapter's subsample
    and where that draw sits among ``draws`` random draws of the same shape (same count per object or
    class): the spread says how far one subsample of that size can land from the full-data value."""
    human_full, (n_boot, seed) = recs.human_full, boot(recs).values()
    draws = getattr(recs.cfg, "validation_draws", 200)
    if human_full is None or not len(human_full):
        return captioned(pd.DataFrame(), "Full-data measures not computed (validation_human_full is off, or no "
                                         "labelled data).")
    rows = []
    for ds, d in human_full.groupby("dataset", sort=False):
        d = d.reset_index(drop=True)
        is_auc = ds.endswith("macgyver")
        y = d["target"].to_numpy(float)
        counts = d[d["in_draw"].astype(bool)]["stratum"].value_counts().to_dict()
        picks = R.stratified_draws(d["stratum"], counts, draws, seed=seed)
        mine = np.flatnonzero(d["in_draw"].astype(bool))
        for name, (col, sign) in FULL_MEASURES.items():
            if col not in d or not d[col].notna().any():
                continue
            x = sign * d[col].to_numpy(float)

            def stat(idx, x=x):
                return corr.auc(y[idx], x[idx])["auc"] if is_auc else corr.spearman(x[idx], y[idx])["rho"]
            full = (corr.auc_ci(y, x, n_boot=n_boot, seed=seed) if is_auc
                    else corr.spearman_ci(x, y, n_boot=n_boot, seed=seed))
            value = full["auc"] if is_auc else full["rho"]
            drawn = stat(mine) if len(mine) else float("nan")
            sp = R.draw_spread(stat, picks, drawn) if len(mine) else {"lo": np.nan, "hi": np.nan, "percentile": np.nan}
            rows.append({"dataset": ds, "measure": name, "statistic": "AUC" if is_auc else "Spearman rho",
                         "all items": value, "ci_low": full["lo"], "ci_high": full["hi"], "n": full["n"],
                         "chapter's draw": drawn, "n drawn": len(mine), "draws 5%": sp["lo"], "draws 95%": sp["hi"],
                         "draw's percentile": sp["percentile"], "note": full["note"]})
    return captioned(pd.DataFrame(rows), (
        "The measures that need no LLM call, on every labelled item (95% bootstrap interval), beside the same "
        f"statistic on the subsample the judge tables above use and the 5-95% range of {draws} random draws of that "
        "shape (same count per object or class). A draw near either end of its range is luck, not the measure; "
        "read the judge's subsampled figure with the same range in mind. Cosine distance to others is taken here "
        "against all responses to the same object, so its draw differs from the subsample tables above, which "
        "compare only the drawn responses; a blank draw means the statistic is undefined there (the measure is "
        "constant over the drawn items). BLEU to others is left out: it compares every pair of an object's "
        "thousands of responses."))


def _tie_note(ties: int, comparisons: int, note: str = "") -> str:
    """Say how much of a judge ranking is the seeded shuffle: ties (orders disagreed) never move an item."""
    if comparisons and ties == comparisons:
        msg = f"all {comparisons} comparisons tied: the ranking is the seeded shuffle order, no signal"
    elif comparisons:
        msg = f"{ties}/{comparisons} comparisons tied"
    else:
        msg = ""
    return "; ".join(x for x in (note, msg) if x)


def table_human_reference(recs: Records):
    """Mean diversity of whole solutions: crowd vs model, same problems and set sizes."""
    df = recs.human_reference
    if df.empty:
        return captioned(pd.DataFrame([{"note": "no problem with >= 3 crowd solutions"}]), "Human reference")
    out = df.groupby("solver")[[*DIVERSITY, "n"]].mean().reset_index()
    out.insert(1, "problems", df.groupby("solver")["problem_id"].nunique().values)
    return captioned(out, "Whole-solution diversity: crowd-written vs model-sampled solutions")


guard_module(globals())
