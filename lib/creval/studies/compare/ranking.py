"""Chapter 09's rankings of the released outputs, pure: the ``released`` and ``pairwise`` tables in, DataFrames
(caption in ``df.attrs["caption"]``) and Figures out. No call.

- **Per measure**: each model's mean over its items with a 95% percentile bootstrap interval over the items
  (``stats.bootstrap_ci``), and its rank among the models with a rank interval: each replicate resamples the
  items once (the same items for every model), recomputes every model's mean over its drawn items and ranks
  them; the 2.5 and 97.5 percentiles of a model's ranks are its interval.
- **Against people**: Kendall's tau between the models' means on a measure and their human label rates
  (MacGyver correct and efficient; TTCW expert passes) over the models that have both.
- **Pairwise**: Bradley-Terry over all models at once from the pairwise judge's verdicts (a flip is a tie),
  bootstrap over items, the noise floor, the position-bias rate; refused when the judged rows' provenance
  differs (:mod:`.provenance`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.core.errors import CrevalError
from creval.judges.pairwise import PairJudgement, position_bias
from creval.measures import bradley_terry as BT
from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import resample as R
from creval.measures.stats.ranks import rank_bounds, standing
from creval.studies.compare import provenance as P
from creval.studies.compare.released import HIGHER, LABELS, TTCW_PASSES
from creval.studies.config import boot_settings
from creval.studies.tables import captioned

RANK_COLS = ["measure", "model", "n", "mean", "lo", "hi", "rank", "rank_lo", "rank_hi"]


def ranks_of(means: np.ndarray, higher_first: bool = True) -> np.ndarray:
    """Ranks 1..k (1 = highest mean when ``higher_first``; ties share the better rank), NaN stays NaN."""
    return standing(means, higher_first)


def measure_ranking(values: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One measure's values (``model, item, value``): per model ``n, mean, lo, hi, rank, rank_lo, rank_hi``."""
    cols = ["model", "n", "mean", "lo", "hi", "rank", "rank_lo", "rank_hi"]
    if not len(values) or not values["value"].notna().any():
        return pd.DataFrame(columns=cols)
    wide = values.pivot_table(index="item", columns="model", values="value", aggfunc="mean")
    models, X = list(wide.columns), wide.to_numpy(float)
    means = np.nanmean(np.where(np.isnan(X), np.nan, X), axis=0) if len(X) else np.full(len(models), np.nan)
    rng = R.boot_rng(seed)    # CREVAL_BOOT_SEED shifts it
    reps = []
    for _ in range(n_boot if len(X) >= corr.MIN_N else 0):
        d = X[rng.integers(0, len(X), len(X))]
        with np.errstate(all="ignore"):
            reps.append(ranks_of(np.nanmean(d, axis=0) if np.isfinite(d).any() else np.full(len(models), np.nan)))
    reps = np.array(reps).reshape(-1, len(models))
    rows, (rank_lo, rank_hi) = [], rank_bounds(reps)
    for k, m in enumerate(models):
        x = X[:, k][np.isfinite(X[:, k])]
        lo, hi = corr.bootstrap_ci(np.mean, x, n_boot=n_boot, seed=seed) if len(x) else (np.nan, np.nan)
        rows.append({"model": m, "n": len(x), "mean": float(means[k]), "lo": lo, "hi": hi,
                     "rank": ranks_of(means)[k], "rank_lo": float(rank_lo[k]), "rank_hi": float(rank_hi[k])})
    return pd.DataFrame(rows, columns=cols)


def rankings(released: pd.DataFrame, dataset: str, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`measure_ranking` of every measure of ``dataset``."""
    if not len(released):
        return pd.DataFrame(columns=RANK_COLS)
    v = released[released["dataset"] == dataset]
    out = [measure_ranking(g, n_boot, seed).assign(measure=m) for m, g in v.groupby("measure", sort=False)]
    return pd.concat(out, ignore_index=True)[RANK_COLS] if out else pd.DataFrame(columns=RANK_COLS)


def _fmt_rank(r, lo, hi) -> str:
    if not np.isfinite(r):
        return ""
    return f"#{int(r)}" + (f" ({int(round(lo))}-{int(round(hi))})" if np.isfinite(lo) and np.isfinite(hi) else "")


def table_released(recs, dataset: str) -> pd.DataFrame:
    """Models x measures: mean [95% CI] and rank (rank interval), human labels first."""
    r = rankings(recs["released"], dataset, *boot_settings(recs))
    if r.empty:
        return captioned(pd.DataFrame(), f"No released outputs of {dataset} were read (see the notes).")
    r["cell"] = [f"{num.fmt_estimate(m, lo, hi, 2)} {_fmt_rank(k, kl, kh)}" for m, lo, hi, k, kl, kh in
                 zip(r["mean"], r["lo"], r["hi"], r["rank"], r["rank_lo"], r["rank_hi"])]
    t = r.pivot(index="model", columns="measure", values="cell")
    order = [m for m in (*LABELS, TTCW_PASSES) if m in t] + [m for m in dict.fromkeys(r["measure"]) if m not in
                                                            (*LABELS, TTCW_PASSES)]
    first = order[0]
    key = r[r["measure"] == first].set_index("model")["mean"]
    t = t[order].reindex(key.sort_values(ascending=False).index.tolist() +
                         [m for m in t.index if m not in key.index]).reset_index()
    t.columns.name = None
    return captioned(t, f"{dataset}: every released model on every measure that needs no sample: the mean over "
                        "its items [95% bootstrap interval over items] and its rank #k (95% rank interval: items "
                        "resampled, every model re-ranked). Higher means: " +
                        "; ".join(f"{m}: {HIGHER[m]}" for m in order if m in HIGHER) + ".")


def agreement(recs, dataset: str) -> pd.DataFrame:
    """Per measure and human label: Kendall tau between the models' means and their label rates."""
    r = rankings(recs["released"], dataset, n_boot=0)
    labels = [m for m in (*LABELS, TTCW_PASSES) if m in set(r["measure"])]
    rows = []
    for lab in labels:
        gold = r[r["measure"] == lab].set_index("model")["mean"]
        for m, g in r[~r["measure"].isin(labels)].groupby("measure", sort=False):
            x = g.set_index("model")["mean"].reindex(gold.index)
            ok = x.notna() & gold.notna()
            rows.append({"measure": m, "human label": lab, "models": int(ok.sum()),
                         "kendall tau": BT.kendall_tau(x[ok], gold[ok]) if ok.sum() > 1 else np.nan})
    return pd.DataFrame(rows, columns=["measure", "human label", "models", "kendall tau"])


def table_agreement(recs, dataset: str) -> pd.DataFrame:
    a = agreement(recs, dataset)
    a["kendall tau"] = [num.fmt_number(x, 2) for x in a["kendall tau"]]
    return captioned(a, f"{dataset}: does a measure order the models as the human labels do? Kendall's tau "
                        "between the models' means on the measure and their human label rates (1: the same order, "
                        "-1: reversed; with few models tau moves in large steps, and it is no significance test).")


# -- pairwise --------------------------------------------------------------------------------------------
def judgements(rows: pd.DataFrame) -> list[PairJudgement]:
    keys = ["item", "a", "b", "votes", "score", "flip", "first_picks", "parsed_orders", "state"]
    return [PairJudgement(**{k: (r[k] if not (k == "score" and pd.isna(r[k])) else None) for k in keys})
            for r in rows.to_dict("records")]


def _pairwise_fit(recs, dataset: str) -> dict:
    """Bradley-Terry of ``dataset``'s pairwise rows (provenance checked first), with the position bias."""
    p = recs["pairwise"]
    p = p[p["dataset"] == dataset] if len(p) else p
    if not len(p):
        raise CrevalError(f"no pairwise judgement of {dataset}", "set compare_pairwise_items > 0")
    P.check(list(p["provenance"]), f"the pairwise judgements of {dataset}")
    ok = p[p["state"] == "ok"]
    models = sorted(set(p["a"]) | set(p["b"]))
    n_boot, seed = boot_settings(recs)
    fit = BT.bootstrap(models, list(zip(ok["item"], ok["a"], ok["b"], ok["score"].astype(float))),
                       n_boot=max(2, n_boot // 5), seed=seed) if len(ok) else None
    return {"fit": fit, "bias": position_bias(judgements(p)), "provenance": p["provenance"].iloc[0],
            "models": models}


def _no_order(fit: dict | None) -> bool:
    """True when the fit puts no model above another (every comparison a tie, e.g. every pair flipped)."""
    return fit is None or not len(fit["theta"]) or float(np.ptp(np.asarray(fit["theta"], float))) < 1e-9


def table_pairwise(recs, dataset: str) -> pd.DataFrame:
    """Each model's Bradley-Terry strength [95% CI] and rank interval; or why the comparison is refused."""
    p = recs["pairwise"]
    if not len(p) or not (p["dataset"] == dataset).any():
        return captioned(pd.DataFrame(), f"{dataset}: no pairwise judgement (compare_pairwise_items = 0, or no "
                                         "item that every model answered).")
    try:
        f = _pairwise_fit(recs, dataset)
    except CrevalError as e:
        return captioned(pd.DataFrame({"refused": [e.problem]}), f"{dataset}: no pairwise ranking: {e.fix}")
    fit, b, prov = f["fit"], f["bias"], f["provenance"]
    if fit is None:
        return captioned(pd.DataFrame(), f"{dataset}: every pairwise judgement was unparsed.")
    t = pd.DataFrame({"model": fit["models"],
                      "strength [95% CI]": [num.fmt_estimate(x, lo, hi, 2) for x, lo, hi in
                                            zip(fit["theta"], fit["lo"], fit["hi"])],
                      "rank": [_fmt_rank(k, lo, hi) for k, lo, hi in zip(fit["rank"], fit["rank_lo"],
                                                                         fit["rank_hi"])],
                      "theta": fit["theta"]}).sort_values("theta", ascending=False).drop(columns="theta")
    floor = ("No order: the judge put no model above another (every comparison a tie), so every strength is 0, "
             "every rank is shared and there is no noise floor to read." if _no_order(fit) else
             f"Noise floor: two bootstrap replicates agree on the whole order {num.fmt_number(fit['same_order'], 2)} "
             f"of the time (mean Kendall tau between them {num.fmt_number(fit['tau_between'], 2)}).")
    return captioned(t.reset_index(drop=True),
                     f"{dataset}: Bradley-Terry strengths (log-odds, mean 0) from {b['comparisons']} two-order "
                     f"comparisons on {fit['items']} items, fitted over all models at once; interval and rank "
                     f"interval: bootstrap over items. {floor} Position bias: {num.fmt_number(b['flip_rate'], 2)} of "
                     f"comparisons flip with the order (counted as ties); the first-shown answer was picked in "
                     f"{num.fmt_number(b['first_rate'], 2)} of single judgements; {b['unparsed']} unparsed. Judge "
                     f"`{prov.get('judge_model')}` (version {prov.get('judge_version')}), prompt "
                     f"{prov.get('prompt_sha')}, {prov.get('sampling')}, order seed {prov.get('order_seed')}.")


def pairwise_vs_people(recs, dataset: str) -> pd.DataFrame:
    """Kendall tau between the pairwise strengths and the human label rates (over the judged models)."""
    try:
        f = _pairwise_fit(recs, dataset)
    except CrevalError:
        return pd.DataFrame(columns=["human label", "models", "kendall tau"])
    if _no_order(f["fit"]):                   # no order to compare with the people's (tau would read 0)
        return pd.DataFrame(columns=["human label", "models", "kendall tau"])
    th = pd.Series(f["fit"]["theta"], index=f["fit"]["models"])
    r = rankings(recs["released"], dataset, n_boot=0)
    rows = []
    for lab in [m for m in (*LABELS, TTCW_PASSES) if m in set(r["measure"])]:
        gold = r[r["measure"] == lab].set_index("model")["mean"].reindex(th.index)
        ok = gold.notna() & th.notna()
        rows.append({"human label": lab, "models": int(ok.sum()),
                     "kendall tau": BT.kendall_tau(th[ok], gold[ok]) if ok.sum() > 1 else np.nan})
    return pd.DataFrame(rows, columns=["human label", "models", "kendall tau"])


def fig_pairwise(recs, dataset: str) -> go.Figure:
    """Bradley-Terry strengths with their bootstrap intervals, strongest first."""
    fig = go.Figure()
    try:
        fit = _pairwise_fit(recs, dataset)["fit"]
    except CrevalError as e:
        return fig.update_layout(title=f"{dataset}: no pairwise ranking ({e.problem})")
    if fit is None:
        return fig.update_layout(title=f"{dataset}: every pairwise judgement was unparsed")
    d = pd.DataFrame({"m": fit["models"], "t": fit["theta"], "lo": fit["lo"], "hi": fit["hi"]}).sort_values("t")
    fig.add_trace(go.Scatter(x=d["t"], y=d["m"], mode="markers", marker=dict(size=10),
                             error_x=dict(type="data", symmetric=False, array=(d["hi"] - d["t"]).fillna(0),
                                          arrayminus=(d["t"] - d["lo"]).fillna(0))))
    return fig.update_layout(title=f"{dataset}: pairwise judge, Bradley-Terry strength (95% bootstrap interval)",
                             xaxis_title="strength (log-odds of winning against the average model)",
                             yaxis_title="model", height=160 + 30 * len(d), margin=dict(l=20))


def table_pairwise_vs_people(recs, dataset: str) -> pd.DataFrame:
    t = pairwise_vs_people(recs, dataset)
    t["kendall tau"] = [num.fmt_number(x, 2) for x in t["kendall tau"]]
    why = "" if len(t) else (" Nothing to compare: the pairwise judge gave no order here (no judgement, or every "
                             "comparison a tie).")
    return captioned(t, f"{dataset}: do the human label rates order the models as the pairwise judge does? "
                        f"Kendall's tau between the Bradley-Terry strengths and the label rates (1: same order).{why}")


def table_overused(recs, dataset: str, top: int = 10) -> pd.DataFrame:
    """Per released model, the words it over-uses most relative to people on the same items (log-odds z)."""
    w = recs["overused"]
    w = w[w["dataset"] == dataset] if len(w) else w
    if not len(w):
        return captioned(pd.DataFrame(), f"{dataset}: no over-used words (the data has no people's texts on "
                                         "the same items).")
    t = pd.DataFrame([{"model": m, "over-used words (z)": ", ".join(f"{x} ({z:.1f})" for x, z in
                                                                   zip(g["word"][:top], g["z"][:top]))}
                      for m, g in w.groupby("model", sort=True)])
    return captioned(t, f"{dataset}: the words each model uses more than people do on the same items: weighted "
                        "log-odds with an informative Dirichlet prior (Monroe et al. 2008; prior: every released "
                        "text of the dataset), z-scores; derived from these data, not from another list.")


def table_equivalence(recs) -> pd.DataFrame:
    """Per step: distinct answers among n by the entailment classes and by the equivalence judge, their Rand
    index; a summary row (Spearman of the two counts over steps, mean Rand index). Refused on mixed provenance."""
    e = recs["equivalence"]
    if not len(e):
        return captioned(pd.DataFrame(), "No equivalence partition (compare_equivalence_steps = 0, or no divergent "
                                         "samples were read).")
    ok, why = P.comparable(list(e["provenance"]))
    if not ok:
        return captioned(pd.DataFrame({"refused": [why]}), "The equivalence partitions were judged differently.")
    t = e[["model", "domain", "problem_id", "n", "distinct_entailment", "distinct_judge", "rand_index", "calls",
           "unparsed"]].copy()
    rho = corr.spearman(t["distinct_entailment"], t["distinct_judge"])
    t["rand_index"] = [num.fmt_number(x, 2) for x in t["rand_index"]]
    p = e["provenance"].iloc[0]
    return captioned(t.rename(columns={"distinct_entailment": "distinct (entailment)",
                                       "distinct_judge": "distinct (equivalence judge)"}),
                     "The same n samples partitioned twice: by bidirectional entailment (the divergent study's "
                     "classes) and by the equivalence judge with NoveltyBench's protocol (input order shuffled "
                     f"with seed {p.get('order_seed')}; judge `{p.get('judge_model')}`, prompt {p.get('prompt_sha')}). "
                     "Rand index: the share of sample pairs both partitions treat alike (1: the same partition). "
                     f"Spearman of the two counts over the {len(t)} steps: {num.fmt_number(rho.get('rho'), 2)} "
                     f"({rho.get('note') or 'n=' + str(rho.get('n'))}).")
