"""Chapter 04's sentences about this build, from the validation records: the caveat the chapter opens with and
the closing list of the paper's claims (Tan et al. 2026) this build supports, contradicts, leaves inconclusive or
cannot test, each read off its intervals by the one rule (docs/verdicts.md)."""
from __future__ import annotations

import numpy as np

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import verdicts as V
from creval.studies.claims import ENOUGH, claims_md, every_row
from creval.studies.contract import Records
from creval.studies.links import items
from creval.studies.tables import computed, guard_module
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
            f"`{cfg.judge_model}`; every table reports `n`, and a correlation on fewer than {corr.MIN_N} points is "
            "left blank (–) with a note rather than given as a number that looks meaningful.")


def diversity_signs(recs: Records) -> dict:
    """Step-level rows of Tables 8-10 with a defined rho: how many, how many with the sign the paper found,
    how many of those with an interval that excludes zero, and the step count."""
    t = table_entropy_vs_diversity(recs, margins=True)
    t = t[(t["level"] == "step") & t["rho"].notna()] if len(t) else t
    right = [r for r in t.to_dict("records") if np.sign(r["rho"]) == EXPECTED_SIGN[r["metric"]]]
    sure = [r for r in right if not (r["ci_low"] <= 0 <= r["ci_high"])]
    return {"rows": len(t), "right": len(right), "sure": len(sure),
            "steps": int(recs.step_diversity.shape[0]),
            "rhos": "; ".join(f"{r['model']} on {r['domain']}, {r['metric']} {num.fmt_number(r['rho'])}"
                              for r in t.to_dict("records"))}


PAPER_NOVELTY = (0.30, 0.47)   # Table 11: rho of judged novelty with semantic entropy, in our sign convention


def novelty_agrees(row: dict) -> bool:
    """Whether a Table 11 row supports the paper: its 95% interval excludes zero and reaches the paper's range
    (a stronger rho included: :func:`creval.measures.stats.verdicts.outcome`). Without an interval, never: no
    verdict from a point estimate."""
    return bool(V.agrees(row.get("rho", np.nan), row.get("ci_low", np.nan), row.get("ci_high", np.nan),
                         PAPER_NOVELTY))


def _row_verdict(row: dict, claimed, degenerate: str | None = None) -> V.Verdict:
    """One table row's rho and interval read against the paper's ``claimed`` sign or range, on its independent
    units (problems, where the table counts them)."""
    units = row.get("units")
    has = units is not None and units == units
    return V.claim_verdict(row.get("rho", np.nan), row.get("ci_low", np.nan), row.get("ci_high", np.nan),
                           int(units) if has else int(row.get("n") or 0), claimed=claimed, degenerate=degenerate,
                           mc=(row.get("mc_lo", np.nan), row.get("mc_hi", np.nan)), units="problem" if has else "item")


def _same_shape(ss) -> tuple[float, float, float]:
    """H.2: the mean share of classes per sample (n_clusters / n) at the larger n minus at the smaller, with a
    95% normal interval from the two groups' variances: ``(difference, lo, hi)``; NaN unless two sizes."""
    groups = [(g["n_clusters"] / n).astype(float) for n, g in ss.groupby("n")] if len(ss) else []
    if len(groups) != 2 or min(len(g) for g in groups) < 2:
        return float("nan"), float("nan"), float("nan")
    a, b = groups
    d = float(b.mean() - a.mean())
    se = float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))
    return d, d - 1.959964 * se, d + 1.959964 * se


def all_ties(recs: Records) -> str | None:
    """Why judged novelty carries no signal here, or None: every pairwise comparison of the judge tied (the two
    orders disagreed), so the ranking is the seeded shuffle."""
    sn = recs.solution_novelty
    if sn.empty or "comparisons" not in sn or "ties" not in sn:
        return None
    per = sn.drop_duplicates(["model", "domain"])
    comparisons, ties = int(per["comparisons"].sum()), int(per["ties"].sum())
    if comparisons and ties == comparisons:
        return (f"all ties: all {comparisons} comparisons of the judge tied, so the novelty ranking is the seeded "
                "shuffle")
    return None


def no_merge(recs: Records) -> str | None:
    """Why semantic and naive entropy cannot be told apart here, or None: on every solution they are equal (the
    entailment model merged no two samples), so Table 13's two correlations are one number."""
    sn = recs.solution_novelty
    if sn.empty or "mean_naive_entropy" not in sn:
        return None
    a, b = sn["mean_semantic_entropy"].astype(float), sn["mean_naive_entropy"].astype(float)
    if np.allclose(a, b, equal_nan=True):
        return "no merge: semantic entropy equals naive entropy on every solution (no clustering)"
    return None


def _table13_verdict(t13, degenerate: str | None) -> V.Verdict:
    """Table 13's claim on every model x domain row: semantic minus naive rho above 0, read off its paired
    bootstrap interval over problems (the rows' ``semantic - naive``, ``diff lo``, ``diff hi``)."""
    return every_row([V.claim_verdict(r["semantic - naive"], r["diff lo"], r["diff hi"], int(r["units"]),
                                      claimed="+", degenerate=degenerate, mc=(r["mc_lo"], r["mc_hi"]),
                                      units="problem") for r in t13.to_dict("records")])


def _table13_text(t13) -> str:
    """The evidence: per row the difference with its interval, linked to the solutions it rests on."""
    better = int((t13["semantic rho"] > t13["naive rho"]).sum())
    per = "; ".join(f"{r['model']} on {r['domain']} "
                    f"{num.fmt_estimate(r['semantic - naive'], r['diff lo'], r['diff hi'])}"
                    " on " + items(f"{int(r['n'])} solutions", "validation", "solution_novelty",
                                   {"model": r["model"], "domain": r["domain"]})
                    for r in t13.to_dict("records"))
    return (f"Here semantic beats naive in {better} of {len(t13)} model x domain rows; semantic minus naive rho, "
            f"paired over the same problems: {per}.")


def what_this_shows(recs: Records) -> str:
    """The closing list: which of the paper's validation claims this build reproduces, which not, and which
    it cannot test."""
    cfg, rows, d = recs.cfg, [], diversity_signs(recs)
    claim = ("The paper finds semantic entropy moving with every diversity metric (Tables 8-10, |rho| from 0.1 "
             "to 0.6): against cosine similarity and self-BLEU, with distinct-n.")
    if d["rows"]:
        t = table_entropy_vs_diversity(recs, margins=True)
        t = t[(t["level"] == "step") & t["rho"].notna()]
        v = every_row([_row_verdict({**r, "n": r.get("n", d["steps"])}, "+" if EXPECTED_SIGN[r["metric"]] > 0 else "-")
                       for r in t.to_dict("records")])
        rows.append((v, claim,
                     f"Here {d['right']} of {d['rows']} step-level correlations have the paper's sign, {d['sure']} "
                     f"with a 95% interval that excludes zero ({d['rhos']})."))
    else:
        rows.append(("not testable here", claim, f"No step-level correlation is defined on {d['steps']} step(s)."))
    nov = computed(table_novelty_vs_entropy(recs, margins=True))
    nov = nov[nov["rho"].notna()] if len(nov) else nov
    claim = ("The paper finds judged novelty rising with semantic entropy (Table 11, rho from 0.3 to 0.47 in our "
             "sign convention).")
    if len(nov):
        agree = sum(novelty_agrees(r) for r in nov.to_dict("records"))
        v = every_row([_row_verdict(r, PAPER_NOVELTY, all_ties(recs)) for r in nov.to_dict("records")])
        rows.append((v, claim,
                     f"{agree} of {len(nov)} row(s) reach the paper's range with an interval that excludes zero. "
                     "Here: " + "; ".join(f"{r['model']} on {r['domain']} {num.fmt_number(r['rho'])} (n = {r['n']}"
                                          + (f"; {r['note']}" if r["note"] else "") + ")"
                                          for r in nov.to_dict("records")) + "."))
    else:
        rows.append(("not testable here", claim,
                     f"With `divergent_limit` = {cfg.divergent().divergent_limit} problem(s) per domain no "
                     f"correlation is defined (at least {corr.MIN_N} solutions are needed)."))
    t13 = table_naive_vs_semantic(recs, margins=True)
    t13 = t13[t13["semantic rho"].notna() & t13["naive rho"].notna()] if len(t13) else t13
    claim = "The paper's Table 13 has semantic entropy tracking judged novelty better than naive entropy."
    if len(t13):
        rows.append((_table13_verdict(t13, no_merge(recs) or all_ties(recs)), claim, _table13_text(t13)))
    else:
        rows.append(("not testable here", claim, "No row has both correlations defined."))
    ss = recs.sample_size
    sizes = ", ".join(f"{num.fmt_number(g['n_clusters'].mean())} classes per step at n = {n}"
                      for n, g in ss.groupby("n")) if len(ss) else "no steps"
    diff, lo, hi = _same_shape(ss)           # "keeps its shape": equivalence within SAME_SHAPE (two one-sided tests)
    rows.append((V.claim_verdict(diff, lo, hi, len(ss), claimed=("equivalent", SAME_SHAPE), min_n=2 * ENOUGH,
                                 units="step"),       # two sample sizes: enough steps at each
                 "The paper's appendix H.2 finds the distribution of steps over semantic classes keeping its shape "
                 "when the samples per step grow.",
                 f"Here {len(ss)} step(s) over `validation_h2_limit` = {cfg.validation_h2_limit} problem(s): {sizes}; "
                 "the same shape: "
                 f"shares within {SAME_SHAPE} of each other."))
    return claims_md(rows, recs)


guard_module(globals())
