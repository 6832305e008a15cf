"""Chapter 03's rows of the report card (:mod:`creval.studies.card`): each convergent judge's
accuracy on the human yes/no labels against the majority label, Tan et al.'s claim that the judge agrees with
people. Declared as ``card=`` on the study."""
from __future__ import annotations

import math

import numpy as np

from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.measures.stats.resample import boot_p, cluster_bootstrap
from creval.measures.stats.verdicts import CONTRADICTS, SUPPORTS, claim_verdict
from creval.studies.card import CLAIM, JUDGMENT, TAN, sourced
from creval.studies.convergent.config import ConvergentConfig


def convergent_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each convergent judge's accuracy on the human yes/no labels (Wilson interval) against always answering
    the majority label, the lead resampled by pair (a pair's verdicts are one unit); a judge that gives one
    answer to every item is flagged as constant."""
    v = recs["human_verdicts"]
    if v.empty:
        return []
    src = recs["labels_source"]                  # where the human labels came from (one line)
    line = str(src["line"].iloc[0]) if len(src) else ""
    rows = []
    for j, g in v.groupby("judge", sort=False):
        label = g["label"].astype(bool).to_numpy()
        parsed = ~(g["unparsed"].astype(bool).to_numpy() | g["verdict"].isna().to_numpy())
        pred = np.where(parsed, g["verdict"].fillna(False).astype(bool).to_numpy(), ~label)   # unparsed counts as wrong
        correct = (pred == label).astype(float)
        majority = (label == (label.mean() >= 0.5)).astype(float)
        acc = V.wilson(int(correct.sum()), len(correct))          # a proportion: Wilson, honest at 0 and 1
        pair = g["pair_id"].astype(str).to_numpy() if "pair_id" in g else None
        d = cluster_bootstrap(lambda c, m: float(np.mean(c - m)), correct, majority, cluster=pair, n_boot=n_boot,
                              seed=seed)
        sample = line if "sample" in line.lower() else ""
        why = V.first_reason(sample or None, V.constant(pred.astype(float), "judge answer"))
        v_ = claim_verdict(d["value"], d["lo"], d["hi"], d["n_units"], claimed="+", degenerate=why,
                           mc=(d["mc_lo"], d["mc_hi"]), units="pair")
        track = {SUPPORTS: TR.TRACKS, CONTRADICTS: TR.NO_BETTER}.get(v_.word, v_.word)   # behind the majority label
        p = boot_p(d["values"], 0.0, 1 if v_.word == SUPPORTS else -1) if v_.word in (SUPPORTS, CONTRADICTS) \
            else math.nan
        rows.append({"paper": TAN, "claim": CLAIM[TAN], "measure": f"convergent judge {j}",
                     "human data": "human yes/no labels per criterion", "statistic": "accuracy (unparsed = wrong)",
                     "n": len(correct), "units": d["n_units"], "value": float(correct.mean()), "lo": acc[0],
                     "hi": acc[1], "baseline": "majority label", "baseline value": float(majority.mean()),
                     "difference": d["value"], "diff lo": d["lo"], "diff hi": d["hi"], "within": "",
                     "tracking": track, "beaten by": "majority label" if track == TR.NO_BETTER else None,
                     "question": JUDGMENT, "verdict": v_.word, "borderline": v_.borderline, "p": p,
                     "reason": v_.reason, "paper figure": "0.847 (GPT-4o, Table 2)" if j == "retrieval" else "",
                     "note": sample, "raters": "MacGyver's annotators' yes/no label per criterion (crowd)",
                     **sourced(ConvergentConfig.study, "human_verdicts", {"judge": j})})
    return rows
