"""Chapter 04's sentences about this build, from the validation records: the caveat the chapter opens with and
the closing list of the paper's claims this build reproduces, does not, or cannot test."""
from __future__ import annotations

import numpy as np

from creval.measures import stats as S
from creval.studies.contract import Records
from creval.studies.claims import ENOUGH, claims_md, verdict
from creval.studies.validation.report import (
    table_entropy_vs_diversity,
    table_naive_vs_semantic,
    table_novelty_vs_entropy,
)

SAME_SHAPE = 0.1   # H.2: mean classes per step as a share of n differing by less than this = the same shape
EXPECTED_SIGN = {"Average cosine similarity": -1, "Self-BLEU": -1, "Distinct-1": 1, "Distinct-2": 1}


def build_caveats(recs: Records) -> str:
    """What this build's correlations rest on: the models, steps and solutions, the judge, and the smallest
    number of points a correlation is shown on."""
    cfg, sd, sn = recs.cfg, recs.step_diversity, recs.solution_novelty
    models = ", ".join(sorted(set(sn["model"]))) if len(sn) else "no model"
    return (f"This build measured {models} on {len(sn)} solution(s) with {len(sd)} step(s), judged by "
            f"`{cfg.judge_model}`; every table reports `n`, and a correlation on fewer than {S.MIN_N} points is "
            "shown as NaN with a note rather than a number that looks meaningful.")


def diversity_signs(recs: Records) -> dict:
    """Step-level rows of Tables 8-10 with a defined rho: how many, how many with the sign the paper found,
    how many of those with an interval that excludes zero, and the step count."""
    t = table_entropy_vs_diversity(recs)
    t = t[(t["level"] == "step") & t["rho"].notna()] if len(t) else t
    right = [r for r in t.to_dict("records") if np.sign(r["rho"]) == EXPECTED_SIGN[r["metric"]]]
    sure = [r for r in right if not (r["ci_low"] <= 0 <= r["ci_high"])]
    return {"rows": len(t), "right": len(right), "sure": len(sure),
            "steps": int(recs.step_diversity.shape[0]),
            "rhos": "; ".join(f"{r['model']} on {r['domain']}, {r['metric']} {S.fmt_number(r['rho'])}"
                              for r in t.to_dict("records"))}


def what_this_shows(recs: Records) -> str:
    """The closing list: which of the paper's validation claims this build reproduces, which not, and which
    it cannot test."""
    cfg, rows, d = recs.cfg, [], diversity_signs(recs)
    claim = ("The paper finds semantic entropy moving with every diversity metric (Tables 8-10, |rho| from 0.1 "
             "to 0.6): against cosine similarity and self-BLEU, with distinct-n.")
    if d["rows"]:
        rows.append((verdict(d["right"] == d["rows"], d["steps"]), claim,
                     f"Here {d['right']} of {d['rows']} step-level correlations have the paper's sign, {d['sure']} "
                     f"with a 95% interval that excludes zero ({d['rhos']})."))
    else:
        rows.append(("not testable here", claim, f"No step-level correlation is defined on {d['steps']} step(s)."))
    nov = table_novelty_vs_entropy(recs)
    nov = nov[nov["rho"].notna()] if len(nov) else nov
    claim = ("The paper finds judged novelty rising with semantic entropy (Table 11, rho from 0.3 to 0.47 in our "
             "sign convention).")
    if len(nov):
        pos = int((nov["rho"] > 0).sum())
        rows.append((verdict(pos == len(nov), int(nov["n"].min())), claim,
                     "Here: " + "; ".join(f"{r['model']} on {r['domain']} {S.fmt_number(r['rho'])} (n = {r['n']}"
                                          + (f"; {r['note']}" if r["note"] else "") + ")"
                                          for r in nov.to_dict("records")) + "."))
    else:
        rows.append(("not testable here", claim, f"With `limit` = {cfg.limit} problem(s) per domain no correlation "
                     f"is defined (at least {S.MIN_N} solutions are needed)."))
    t13 = table_naive_vs_semantic(recs)
    t13 = t13[t13["semantic rho"].notna() & t13["naive rho"].notna()] if len(t13) else t13
    claim = "The paper's Table 13 has semantic entropy tracking judged novelty better than naive entropy."
    if len(t13):
        better = int((t13["semantic rho"] > t13["naive rho"]).sum())
        rows.append((verdict(better == len(t13), int(t13["n"].min())), claim,
                     f"Here semantic beats naive in {better} of {len(t13)} model x domain rows."))
    else:
        rows.append(("not testable here", claim, "No row has both correlations defined."))
    ss = recs.sample_size
    sizes = ", ".join(f"{S.fmt_number(g['n_clusters'].mean())} classes per step at n = {n}"
                      for n, g in ss.groupby("n")) if len(ss) else "no steps"
    share = {n: float((g["n_clusters"] / n).mean()) for n, g in ss.groupby("n")} if len(ss) else {}
    same = abs(max(share.values()) - min(share.values())) < SAME_SHAPE if len(share) == 2 else None
    rows.append((verdict(same, len(ss)) if len(ss) >= 2 * ENOUGH else "not testable here",
                 "The paper's appendix H.2 finds the distribution of steps over semantic classes keeping its shape "
                 "when the samples per step grow.",
                 f"Here {len(ss)} step(s) over `h2_limit` = {cfg.h2_limit} problem(s): {sizes}."))
    return claims_md(rows, recs)
