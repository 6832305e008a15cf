"""Chapter 07 against people, pure: the judges and two trivial baselines against human originality ratings
(Ocsai-1 ``main2_test``, Cambridge AUT), how far the Cambridge raters agree with each other and what that allows
a judge, and Ocsai's published figures. Records in (``STUDY.records(cfg)``), captioned
DataFrames out."""
from __future__ import annotations

import numpy as np
import pandas as pd

from creval.measures import aut_agreement as A
from creval.measures.stats import correlation as corr
from creval.measures.stats import raters
from creval.measures.stats.verdicts import BORDERLINE
from creval.studies.aut.report import human_values
from creval.studies.contract import Records
from creval.studies.tables import captioned, guard_module

# Ocsai on the full main2_test (n = 3,030): Spearman from the published per-response results (spec §3.4).
OCSAI_REFERENCE = pd.DataFrame([
    ("ocsai-chatgpt (fine-tuned gpt-3.5)", .786, .740),
    ("ocsai-davinci2 (fine-tuned GPT-3)", .780, .699),
    ("gpt-4o, prompted, ~108 few-shot", .612, .685),
    ("gpt-4o-mini, same prompt", .500, .592),
], columns=["scorer", "rho pooled", "rho per-object mean"])


def table_human(recs: Records) -> pd.DataFrame:
    """Judges and baselines against human originality ratings: Spearman per object (mean), pooled with a
    bootstrap CI, Kendall tau-b."""
    h, cfg = human_values(recs), recs.cfg
    if h.empty:
        return captioned(pd.DataFrame(columns=["dataset", "scorer", "mode"]),
                    "No human-rated AUT data was found (set CREVAL_AUT_DIR or stage ../shared/data/aut): "
                    "the comparison with people is missing.")
    rows = []
    for (d, s, m), x in h.groupby(["dataset", "scorer", "mode"]):
        per = [corr.spearman(g["value"], g["human"], min_n=5)["rho"] for _, g in x.groupby("object")]
        per = [p for p in per if np.isfinite(p)]
        sp = corr.spearman_ci(x["value"], x["human"], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"dataset": d, "scorer": s, "mode": m, "n": int(x["value"].notna().sum()),
                     "rho per-object mean": float(np.mean(per)) if per else float("nan"),
                     "rho pooled": sp["rho"], "lo": sp["lo"], "hi": sp["hi"],
                     "tau-b": corr.kendall(x["value"], x["human"])["tau"],
                     "unparsed": float(x["unparsed"].mean()), "via logprobs": float(x["logprobs"].mean()),
                     "note": sp["note"]})
    df = pd.DataFrame(rows)
    return captioned(df, "Scorers against human ratings (Ocsai-1 main2_test 1-5; Cambridge 0-4). Ranks are "
                    "normalised within a list, so pooled values of segmented-rank mix lists. 'via logprobs': "
                    "share of values read from the log-probs of 1..5 in a one-response prompt (pointwise always; "
                    "list scores after failed re-asks): a segmented-score row with 1.0 there is the pointwise "
                    "row again. A 'sample-*' dataset is the bundled illustrative sample written for creval: its "
                    "'human' scores are our guesses.")


def table_human_reference(recs: Records) -> pd.DataFrame:
    """How well people agree on Cambridge (each response has two of three raters) and Ocsai's published
    numbers: every rater pair on the responses both rated, their n-weighted mean r, and what r implies for the
    judges, who are compared with the mean of two raters: the expected correlation of one more person with
    that mean (r sqrt(2 / (1 + r))) and the noise ceiling no scorer can pass (sqrt of the Spearman-Brown
    reliability 2r / (1 + r))."""
    rows, cfg, rt = [], recs.cfg, recs["raters"]
    if len(rt):
        cols = sorted(c for c in rt.columns if c.startswith("rater"))
        m = rt[cols].to_numpy(float)
        pairs = corr.rater_pairs(m, cols, n_boot=cfg.n_boot, seed=cfg.seed)
        for p in pairs:
            rows.append({"reference": f"Cambridge: {p['a']} vs {p['b']} on the responses both rated",
                         "n": p["n"], "rho pooled": p["rho"], "lo": p["lo"], "hi": p["hi"]})
        ok = [p for p in pairs if np.isfinite(p["rho"])]
        if ok:
            r = float(np.average([p["rho"] for p in ok], weights=[p["n"] for p in ok]))
            rows += [{"reference": "Cambridge: one rater vs another, n-weighted mean of the pairs (r)",
                      "n": sum(p["n"] for p in ok), "rho pooled": r},
                     {"reference": "Cambridge: one more person vs the two-rater mean the judges face (expected)",
                      "rho pooled": raters.one_vs_mean(r, 2)},
                     {"reference": "Cambridge: noise ceiling vs the two-rater mean (no scorer can exceed it)",
                      "rho pooled": raters.noise_ceiling(r, 2)},
                     {"reference": f"Cambridge: Krippendorff alpha (interval), all raters ({rt['source'].iloc[0]})",
                      "n": len(rt), "rho pooled": A.krippendorff_interval(m.T)}]
    else:
        rows.append({"reference": "Cambridge raters: not available (no Cambridge AUT data was found)"})
    for r in OCSAI_REFERENCE.to_dict("records"):
        rows.append({"reference": f"{r['scorer']} on all of main2_test (published)", "n": 3030,
                     "rho pooled": r["rho pooled"], "rho per-object mean": r["rho per-object mean"]})
    return captioned(pd.DataFrame(rows), "People against people on Cambridge, and Ocsai's published Spearman on the "
                                    "full Ocsai-1 test set (spec §3.4). Each Cambridge response carries two of three "
                                    "raters; the pairs differ, so they are shown apart. A judge is compared with the "
                                    "mean of two raters, which is steadier than one rater: a judge as good as one "
                                    "more person would reach the 'one more person' row, and no scorer can pass the "
                                    "noise ceiling.")


def table_vs_baselines(recs: Records) -> pd.DataFrame:
    """Judge minus trivial baseline on the same items: Spearman(judge, human) - Spearman(baseline, human)
    with a paired bootstrap CI (semantic distance, length in words); a verdict from the interval."""
    h, cfg = human_values(recs), recs.cfg
    if h.empty:
        return captioned(pd.DataFrame(), "No human-rated AUT data: no comparison with baselines.")
    base = h[h["mode"] == "baseline"]
    rows = []
    for (d, s, m), x in h[h["mode"] != "baseline"].groupby(["dataset", "scorer", "mode"]):
        for b, bx in base[base["dataset"] == d].groupby("scorer"):
            j = x.merge(bx[["item_id", "value"]], on="item_id", suffixes=("", "_b"))
            r = corr.paired_diff_ci(j["value"], j["value_b"], j["human"], n_boot=cfg.n_boot, seed=cfg.seed)
            rows.append({"dataset": d, "judge": s, "mode": m, "baseline": b, "n": r["n"],
                         "rho judge - rho baseline": r["diff"], "lo": r["lo"], "hi": r["hi"],
                         "verdict": f"{r['verdict']}, {BORDERLINE}" if r.get("borderline") else r["verdict"],
                         "note": r["note"]})
    return captioned(pd.DataFrame(rows), "Does a judge beat a trivial baseline on the same items? Difference of "
                                    "Spearman correlations with the human ratings, 95% paired bootstrap interval "
                                    "(items resampled once for both). 'indistinguishable': the interval holds 0; "
                                    "'borderline': another bootstrap seed could change the word.")


def table_baselines_full(recs: Records) -> pd.DataFrame:
    """Semantic distance and length against people on every human-rated response (no subsample)."""
    b, cfg = recs["baselines_full"], recs.cfg
    if b.empty:
        return captioned(pd.DataFrame(), "The full-data baselines were not computed (aut_baselines_full is off, or "
                                         "no human-rated AUT data was found).")
    rows = []
    for (d, s), x in b.groupby(["dataset", "scorer"]):
        per = [corr.spearman(g["value"], g["human"], min_n=5)["rho"] for _, g in x.groupby("object")]
        per = [p for p in per if np.isfinite(p)]
        sp = corr.spearman_ci(x["value"], x["human"], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"dataset": d, "scorer": s, "n": sp["n"], "objects": x["object"].nunique(),
                     "rho pooled": sp["rho"], "lo": sp["lo"], "hi": sp["hi"],
                     "rho per-object mean": float(np.mean(per)) if per else float("nan")})
    return captioned(pd.DataFrame(rows), "Trivial baselines on every rated response (all of Ocsai-1 main2_test and "
                                    "the whole Cambridge set, or the bundled samples): the yardstick a judge's "
                                    "subsampled correlation should be read against.")


guard_module(globals())
