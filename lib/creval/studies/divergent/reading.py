"""Chapter 02's closing "What this shows", pure: each divergent claim of the paper (entropies near the ceiling,
Tables 3-5; the rise with temperature, Fig. 5b; entropy against the number of classes, Fig. 5a; the ranking,
Table 3) with the book's one rule (:func:`creval.measures.stats.verdicts.claim_verdict`), read off intervals over
problems, never off a point. Each count links to the items behind it in the study's browser
(:mod:`creval.studies.links`)."""
from __future__ import annotations

import math

import numpy as np

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.verdicts import TESTABLE, Verdict, claim_verdict
from creval.studies.claims import claims_md, every_row, too_few_of
from creval.studies.config import boot_settings
from creval.studies.contract import Records
from creval.studies.divergent.report import (
    entropy_levels,
    fmt_temperature_row,
    kept_sweep,
    live,
    no_merge,
    paper_range,
    sweep_means,
)
from creval.studies.links import items
from creval.studies.tables import guard_module


def boots(recs) -> dict:
    """The run's bootstrap settings as keyword arguments (:func:`creval.studies.config.boot_settings`)."""
    n_boot, seed = boot_settings(recs)
    return {"n_boot": n_boot, "seed": seed}


def _near_ceiling(recs: Records, row: dict, claimed: tuple[float, float]) -> Verdict:
    """One model x domain's mean semantic entropy as a share of its ceiling ln n, with a bootstrap interval
    over its kept problems (the independent unit), read against the paper's range of shares."""
    g = recs.problems
    g = g[(g["model"] == row["model"]) & (g["domain"] == row["domain"]) & ~g["duplicate_filtered"].astype(bool)]
    x = g["mean_semantic_entropy"].dropna().to_numpy(float) / row["ceiling"]
    r = cluster_bootstrap(np.mean, x, **boots(recs))
    return claim_verdict(row["share"], r["lo"], r["hi"], len(x), claimed=claimed, null=None,
                         degenerate=no_merge(recs) or too_few_of(len(x), "problem"), sample=row["data"] == "sample",
                         mc=(r["mc_lo"], r["mc_hi"]), units="problem")


def _temperature_rise(recs: Records, model: str) -> tuple[dict, Verdict]:
    """Semantic entropy at the sweep's highest temperature minus its lowest, on the problems solved at both
    (paired, bootstrap over problems), read against the paper's rise (Fig. 5b)."""
    s = kept_sweep(recs)
    s = s[s["model"] == model]
    wide = s.pivot_table(index="problem_id", columns="temperature", values="mean_semantic_entropy", aggfunc="mean")
    rise = (wide[wide.columns.max()] - wide[wide.columns.min()]).dropna().to_numpy(float) if wide.shape[1] > 1 \
        else np.zeros(0)
    r = cluster_bootstrap(np.mean, rise, **boots(recs))
    d = {"diff": r["value"], "lo": r["lo"], "hi": r["hi"], "n": r["n"]}
    return d, claim_verdict(d["diff"], d["lo"], d["hi"], d["n"], claimed="+", null=0.0,
                            degenerate=no_merge(recs) or too_few_of(d["n"], "problem"), mc=(r["mc_lo"], r["mc_hi"]),
                            units="problem")


def _kept(r: dict) -> str:
    """"over k problems", linked to the kept solutions of ``r``'s model and domain in the browser."""
    return "over " + items(f"{r['kept']} problem(s)", "divergent", "problems",
                           {"model": r["model"], "domain": r["domain"], "duplicate_filtered": False})


def _ceiling_row(recs: Records, near: list[dict]) -> tuple:
    """The claim that semantic entropy lies near its ceiling ln n (Tables 3-5), one verdict for all rows."""
    ln10 = math.log(10)
    lo, hi = (f([paper_range(r["domain"])[k] for r in near]) for k, f in ((0, min), (1, max)))
    v = every_row([_near_ceiling(recs, r, (lo / ln10, hi / ln10)) for r in near])
    ours = "; ".join(f"{r['model']} on {r['domain']} {num.fmt_number(r['se'])} {_kept(r)} of a ceiling ln {r['n']} = "
                     f"{num.fmt_number(r['ceiling'])} ({num.fmt_number(r['share'], 0, 100)}% of it)" for r in near)
    return (str(v) if not v.testable else v.label,
            f"The paper's semantic entropies on these domains lie close to the ceiling (Tables 3-5: "
            f"{num.fmt_number(lo)} to {num.fmt_number(hi)} nats of ln 10 = {num.fmt_number(ln10)}, "
            f"{num.fmt_number(lo / ln10, 0, 100)}% to {num.fmt_number(hi / ln10, 0, 100)}%).",
            f"Here: {ours}; shares read with a bootstrap interval over problems, {v.reason}.")


def _classes_row(recs: Records) -> tuple:
    """Fig. 5a's claim: a step's entropy grows with its number of semantic classes (steps of one problem are
    one unit, resampled whole)."""
    s = live(recs.steps)
    if len(s) and {"n_clusters", "problem_id"} <= set(s):
        r = cluster_bootstrap(lambda a, b: corr.spearman(a, b, min_n=3)["rho"], s["n_clusters"].to_numpy(float),
                              s["semantic_entropy"].to_numpy(float), cluster=s["problem_id"].to_numpy(),
                              **boots(recs))
    else:
        r = {"value": math.nan, "lo": math.nan, "hi": math.nan, "mc_lo": math.nan, "mc_hi": math.nan, "n": 0,
             "n_units": 0, "note": "no step recorded"}
    v = claim_verdict(r["value"], r["lo"], r["hi"], r["n_units"], claimed="+", null=0.0,
                      degenerate=no_merge(recs) or too_few_of(r["n_units"], "problem"), mc=(r["mc_lo"], r["mc_hi"]),
                      units="problem")
    steps = items(f"{r['n']} steps", "divergent", "steps", {"is_stop": False}) if r["n"] else "0 steps"
    return (str(v) if not v.testable else v.label,
            "In the paper's Fig. 5a entropy grows with the number of semantic classes of a step.",
            f"Here: Spearman {num.fmt_estimate(r['value'], r['lo'], r['hi'])} over {steps} of "
            f"{r['n_units']} problems (bootstrap over problems)" + (f"; {r['note']}." if r.get("note") else "."))


def what_this_shows(recs: Records) -> str:
    """The closing list: each of the paper's divergent claims with the book's one rule (supports the paper,
    contradicts the paper, inconclusive here, not testable here), read off intervals over problems or steps,
    never off a point estimate; each count links to its items."""
    lv, rows = entropy_levels(recs), []
    near = [r for r in lv if r["share"] == r["share"]]
    if near:
        rows.append(_ceiling_row(recs, near))
    kept = kept_sweep(recs)
    dropped = len(recs.sweep) - len(kept)
    for m, pts in sweep_means(recs).items():
        if len(pts) >= 2:
            d, v = _temperature_rise(recs, m)
            n = kept[kept["model"] == m]["problem_id"].nunique()
            rows.append((str(v) if not v.testable else v.label,
                         "The paper's Fig. 5b has entropy rising with temperature, then levelling off.",
                         f"Here ({m}, " + items(f"{n} problem(s)", "divergent", "sweep", {"model": m})
                         + " per temperature"
                         + (f"; {dropped} duplicate-filtered solution(s) left out, as in the tables" if dropped else "")
                         + f"): {fmt_temperature_row(pts)}; highest minus lowest temperature on the same problems "
                         f"{num.fmt_estimate(d['diff'], d['lo'], d['hi'])}; levelling off needs more temperatures and "
                         "problems."))
    rows.append(_classes_row(recs))
    models = {x["model"] for x in lv}
    most = max((x["problems"] for x in lv), default=0)
    rows.append((TESTABLE, "The paper ranks fourteen models on MacGyver (Table 3).",
                 f"This build measured {len(models)} model(s), on "
                 + (items(f"{most} problem(s)", "divergent", "problems") if most else "0 problem(s)")
                 + " per domain: a ranking needs strong models and hundreds of problems (`divergent_limit`)."))
    return claims_md(rows, recs)


guard_module(globals())
