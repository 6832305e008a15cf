"""Chapter 08, the report card, pure: the graded studies' records in, one row per (measure or judge, human
data) out. Each row: the statistic against people with its 95% bootstrap interval, the strongest trivial
baseline on the same items, their paired difference with its interval, and a verdict read off that interval.

Statistics are oriented so that higher = agrees with people (a measure expected to fall with creativity,
such as templates per token, is negated). Baselines: response length in words (rethinking, AUT), semantic
distance between prompt and response (AUT, validation), the majority label (the convergent judges).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures import stats as S
from creval.studies.tables import captioned

COLUMNS = ["paper", "measure", "human data", "statistic", "n", "value", "lo", "hi", "baseline", "baseline value",
           "difference", "diff lo", "diff hi", "verdict", "paper figure", "note"]
VERDICTS = {"better": "beats baseline", "indistinguishable": "indistinguishable", "worse": "worse than baseline",
            "n/a": "not enough data"}
TAN, LU_R, RAB = "Tan et al. 2026", "Lu et al. 2025 (rethinking)", "Rabeyah et al. 2024"


def graded(paper: str, measure: str, data: str, x, base, y, baseline: str, stat: str, n_boot: int, seed: int,
           paper_figure: str = "", note: str = "") -> dict:
    """One card row: ``stat`` (``spearman`` or ``auc``) of ``x`` against ``y`` with its CI, the same for the
    baseline ``base`` on the same items, and the paired difference."""
    x, base, y = (np.asarray(v, float) for v in (x, base, y))
    keep = np.isfinite(x) & np.isfinite(y)
    if stat == "auc":
        r = S.auc_ci(y[keep], x[keep], n_boot=n_boot, seed=seed)
        val, name = r["auc"], "AUROC"
        b = S.auc(y[keep & np.isfinite(base)], base[keep & np.isfinite(base)])["auc"]
    else:
        r = S.spearman_ci(x[keep], y[keep], n_boot=n_boot, seed=seed)
        val, name = r["rho"], "Spearman rho"
        b = S.spearman(base[keep & np.isfinite(base)], y[keep & np.isfinite(base)])["rho"]
    d = S.paired_diff_ci(x, base, y, n_boot=n_boot, seed=seed, stat=stat)
    return {"paper": paper, "measure": measure, "human data": data, "statistic": name, "n": int(keep.sum()),
            "value": val, "lo": r["lo"], "hi": r["hi"], "baseline": baseline, "baseline value": b,
            "difference": d["diff"], "diff lo": d["lo"], "diff hi": d["hi"], "verdict": VERDICTS[d["verdict"]],
            "paper figure": paper_figure, "note": "; ".join(t for t in (note, r.get("note", ""), d["note"]) if t)}


# -- the studies graded -----------------------------------------------------------------------------------
RETHINK_SETS = (("ps", "MacGyver: unconventional vs conventional solutions", "label", "auc"),
                ("solver", "MacGyver: crowd vs GPT-4 solutions (length-matched)", "label", "auc"),
                ("ttcw", "TTCW: expert test passes (0-42)", "passes", "spearman"),
                ("aut", "Ocsai-1: AUT originality ratings", "label", "spearman"))
RETHINK_MEASURES = {"ci": ("creativity index", 1), "tpt": ("templates per token (negated)", -1),
                    "ppl": ("perplexity", 1)}
PAPER_FIGURES = {("ps", "ci"): "CI 0.76 vs 0.75 (means; Table 2)", ("ps", "tpt"): "template rate 38.7% vs 31.9%",
                 ("ps", "ppl"): "PPL 13.98 vs 14.11"}


def rethinking_rows(recs, n_boot: int, seed: int) -> list[dict]:
    from creval.studies.rethinking import report as R
    rows = []
    for ts, data, label, stat in RETHINK_SETS:
        m = R.measures(recs, ts)
        if m.empty or label not in m:
            continue
        sample = "" if R.labelled(recs, ts) else f"not real labels: {R.unlabelled_reason(recs, ts)}"
        y = m[label].astype(float)
        for col, (name, sign) in RETHINK_MEASURES.items():
            if col in m and m[col].notna().sum() >= 2:
                rows.append(graded(LU_R, name, data, sign * m[col].astype(float), m["n_words"].astype(float), y,
                                   "length (words)", stat, n_boot, seed, PAPER_FIGURES.get((ts, col), ""), sample))
    return rows


def aut_rows(recs, n_boot: int, seed: int) -> list[dict]:
    from creval.studies.aut import report as A
    h = A.human_values(recs)
    if h.empty:
        return []
    rows = []
    base = h[h["mode"] == "baseline"]
    for (d, s, mode), x in h[h["mode"] != "baseline"].groupby(["dataset", "scorer", "mode"]):
        best = None
        for b, bx in base[base["dataset"] == d].groupby("scorer"):
            j = x.merge(bx[["item_id", "value"]], on="item_id", suffixes=("", "_b"))
            row = graded(RAB, f"LLM judge {s} ({mode})", f"{d}: AUT originality", j["value"], j["value_b"], j["human"],
                         b, "spearman", n_boot, seed, "no human data in the paper",
                         "bundled sample: our guesses, not ratings" if d.startswith("sample") else "")
            if best is None or (np.nan_to_num(row["baseline value"], nan=-9) > np.nan_to_num(best["baseline value"], nan=-9)):
                best = row
        if best is not None:
            rows.append(best)
    return rows


def convergent_rows(recs, n_boot: int, seed: int) -> list[dict]:
    from creval.studies.convergent.report import labels_source
    v = recs["human_verdicts"]
    if v.empty:
        return []
    line = labels_source(recs["labels_source"])
    rows = []
    for j, g in v.groupby("judge", sort=False):
        label = g["label"].astype(bool).to_numpy()
        parsed = ~(g["unparsed"].astype(bool).to_numpy() | g["verdict"].isna().to_numpy())
        pred = np.where(parsed, g["verdict"].fillna(False).astype(bool).to_numpy(), ~label)   # unparsed counts as wrong
        correct = (pred == label).astype(float)
        majority = (label == (label.mean() >= 0.5)).astype(float)
        acc = S.bootstrap_ci(np.mean, correct, n_boot=n_boot, seed=seed)
        d = S.paired_mean_diff_ci(correct, majority, n_boot=n_boot, seed=seed)
        rows.append({"paper": TAN, "measure": f"convergent judge {j}", "human data": "human yes/no labels per criterion",
                     "statistic": "accuracy (unparsed = wrong)", "n": len(correct), "value": float(correct.mean()),
                     "lo": acc[0], "hi": acc[1], "baseline": "majority label", "baseline value": float(majority.mean()),
                     "difference": d["diff"], "diff lo": d["lo"], "diff hi": d["hi"], "verdict": VERDICTS[d["verdict"]],
                     "paper figure": "0.847 (GPT-4o, Table 2)" if j == "retrieval" else "",
                     "note": line if "sample" in line.lower() else ""})
    return rows


def validation_rows(recs, n_boot: int, seed: int) -> list[dict]:
    rows = []
    a = recs["aut_items"]
    if len(a) and "novelty_score" in a:
        sample = "bundled sample" if (a.get("source", pd.Series([""])) == "sample").all() else ""
        rows.append(graded(TAN, "pairwise novelty judge", "Ocsai-1: AUT originality ratings", a["novelty_score"],
                           a["semdis"], a["score"], "semantic distance", "spearman", n_boot, seed, "", sample))
    m = recs["macgyver_items"]
    if len(m) and "novelty_score" in m:
        rows.append(graded(TAN, "pairwise novelty judge", "MacGyver: unconventional vs conventional solutions",
                           m["novelty_score"], m["semdis"], m["unconventional"].astype(float), "semantic distance",
                           "auc", n_boot, seed))
    return rows


def card_rows(up: dict, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Every card row from the graded studies' records (``up``: study name -> Records)."""
    rows = []
    for name, fn in (("convergent", convergent_rows), ("validation", validation_rows),
                     ("rethinking", rethinking_rows), ("aut", aut_rows)):
        if name in up:
            rows += fn(up[name], n_boot, seed)
    return [{k: r.get(k) for k in COLUMNS} for r in rows]


# -- what the chapter shows -------------------------------------------------------------------------------
def table_card(recs) -> pd.DataFrame:
    c = recs["card"]
    if c.empty:
        return captioned(pd.DataFrame(columns=COLUMNS), "Nothing to grade: no study found human data.")
    return captioned(c, "The report card. value: the statistic against people (higher = agrees), 95% bootstrap "
                        "interval [lo, hi]; baseline value: the strongest trivial baseline on the same items; "
                        "difference: value minus baseline with a 95% paired bootstrap interval; the verdict is read "
                        "off that interval (indistinguishable when it holds 0).")


def table_verdicts(recs) -> pd.DataFrame:
    c = recs["card"]
    if c.empty:
        return captioned(pd.DataFrame(), "No rows.")
    t = c.groupby(["paper", "verdict"]).size().unstack(fill_value=0).reset_index()
    return captioned(t, "Verdicts per paper (rows of the card).")


def home_relative(path: str) -> str:
    """``path`` relative to the data home (``CREVAL_HOME``) when it lies inside it: pages show no machine's
    absolute paths."""
    from pathlib import Path

    from creval.core.paths import home
    try:
        return str(Path(path).resolve().relative_to(home().resolve()))
    except ValueError:
        return str(path)


def table_sources(recs) -> pd.DataFrame:
    t = recs["sources"].copy()
    if "run_dir" in t:
        t["run_dir"] = t["run_dir"].map(home_relative)
    return captioned(t, "The run folders the card read (relative to the data home), and whether each study had "
                        "the real data.")


def fig_card(recs) -> go.Figure:
    """Forest plot: each row's statistic with its interval, and the baseline on the same items."""
    c = recs["card"]
    fig = go.Figure()
    if c.empty:
        return fig.update_layout(title="No rows")
    labels = [f"{m} · {d}" for m, d in zip(c["measure"], c["human data"])]
    err = dict(type="data", symmetric=False, array=(c["hi"] - c["value"]).fillna(0),
               arrayminus=(c["value"] - c["lo"]).fillna(0))
    hover = [f"{lab}<br>{s} {S.fmt_estimate(v, lo, hi, 3)}, n={n}<br>baseline {b}: {S.fmt_number(bv, 3)}<br>{verdict}"
             for lab, s, v, lo, hi, n, b, bv, verdict in zip(labels, c["statistic"], c["value"], c["lo"], c["hi"], c["n"],
                                                           c["baseline"], c["baseline value"], c["verdict"])]
    fig.add_trace(go.Scatter(x=c["value"], y=labels, mode="markers", error_x=err, name="measure or judge",
                             hovertext=hover, hoverinfo="text", marker=dict(size=9)))
    fig.add_trace(go.Scatter(x=c["baseline value"], y=labels, mode="markers", name="baseline, same items",
                             marker=dict(symbol="x", size=9)))
    fig.update_layout(title="Each measure against people, beside its trivial baseline", height=160 + 28 * len(c),
                      xaxis_title="statistic (AUROC: 0.5 = chance; rho and accuracy as they are)",
                      yaxis=dict(autorange="reversed"), margin=dict(l=20))
    return fig
