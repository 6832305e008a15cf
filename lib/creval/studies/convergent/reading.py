"""Chapter 03's closing "What this shows", pure: each convergent claim of the paper (Table 2's accuracy
ranking, Table 15's tokens, Tables 3-5) with the book's one rule (:func:`creval.measures.stats.verdicts.claim_verdict`),
decided on paired differences over the human-labelled pairs, the independent unit (a pair's criteria share one
problem and one solution), never on point estimates. A judge that gives one answer to every item is named
and leaves the claim not testable."""
from __future__ import annotations

import numpy as np
import pandas as pd

from creval.measures.stats import numbers as num
from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.verdicts import TESTABLE, claim_verdict
from creval.studies.claims import claims_md, every_row, too_few_of
from creval.studies.contract import Records
from creval.studies.convergent.report import PAPER_ACCURACY, PAPER_SHARE, judge_accuracy, one_answer, token_table
from creval.studies.links import items
from creval.studies.tables import computed, guard_module


def _per_pair(verdicts: pd.DataFrame, judge: str, value) -> pd.Series:
    """One number per human-labelled pair for ``judge`` (the pair is the independent unit: its criteria share
    one problem and one solution): ``value(g)`` of the pair's rows."""
    g = verdicts[verdicts["judge"] == judge]
    return g.groupby("pair_id").apply(value) if len(g) else pd.Series(dtype=float)


def _correct_share(g: pd.DataFrame) -> float:
    """Share of a pair's parsed verdicts that equal the human label (NaN when none parsed)."""
    ok = g[~g["unparsed"].astype(bool) & g["verdict"].notna()]
    return float((ok["verdict"].astype(bool) == ok["label"].astype(bool)).mean()) if len(ok) else np.nan


def _pair_tokens(g: pd.DataFrame) -> float:
    """Input plus output tokens a judge spent on one pair (all its criteria)."""
    return float(g["input_tokens"].sum() + g["output_tokens"].sum())




def _paired_claim(a: pd.Series, b: pd.Series, claimed: str, cfg, degenerate: str | None = None) -> tuple:
    """``a - b`` over the pairs both have (mean of per-pair differences, bootstrap over pairs) and the rule's
    verdict on ``claimed`` (its direction), borderline when the bounds' Monte-Carlo margin could flip it:
    (difference dict, :class:`Verdict`)."""
    both = a.dropna().index.intersection(b.dropna().index)
    r = cluster_bootstrap(lambda x, y: float(np.mean(x - y)), a[both].to_numpy(float), b[both].to_numpy(float),
                          n_boot=cfg.n_boot, seed=cfg.seed)
    d = {"diff": r["value"], "lo": r["lo"], "hi": r["hi"], "n": r["n"]}
    return d, claim_verdict(d["diff"], d["lo"], d["hi"], d["n"], claimed=claimed, null=0.0,
                            degenerate=degenerate or too_few_of(d["n"], "pair"), mc=(r["mc_lo"], r["mc_hi"]),
                            units="pair")


def what_this_shows(recs: Records) -> str:
    """The closing list: each convergent claim of the paper with the rule's word (supports the paper,
    contradicts the paper, inconclusive here, not testable here), decided on paired differences over the
    human-labelled pairs (the independent unit), never on point estimates."""
    cfg, acc, rows, hv = recs.cfg, computed(judge_accuracy(recs)), [], recs.human_verdicts
    paper = ", ".join(f"{j} {num.fmt_number(a, 3)}" for j, a in PAPER_ACCURACY.items())
    ours = {j: a for j, a in acc.items() if a["accuracy"] == a["accuracy"]}
    if "retrieval" in ours and len(ours) > 1:
        mine = hv[(hv["judge"] == "retrieval") & ~hv["unparsed"].astype(bool)]
        same = one_answer(list(mine["verdict"]))
        flat = f"the retrieval judge is constant ({same})" if same else None
        right = _per_pair(hv, "retrieval", _correct_share)
        parts, found = [], []
        for j in ours:
            if j != "retrieval":
                d, v = _paired_claim(right, _per_pair(hv, j, _correct_share), "+", cfg, flat)
                found.append(v)
                parts.append(f"retrieval minus {j} {num.fmt_estimate(d['diff'], d['lo'], d['hi'], 3)} on {d['n']} "
                             "pairs")
        v = every_row(found)
        rows.append((str(v) if not v.testable else v.label,
                     f"In the paper's Table 2 the retrieval judge is the most accurate against human labels ({paper}).",
                     f"Here, with `{cfg.judge_model}`: " + ", ".join(
                         f"{j} {num.fmt_number(a['accuracy'], 3)} on "
                         + items(f"{a['parsed']} parsed verdicts", "convergent", "human_verdicts", {"judge": j})
                         + (" (constant)" if one_answer(list(hv[(hv['judge'] == j)
                                                               & ~hv['unparsed'].astype(bool)]['verdict'])) else "")
                         for j, a in ours.items()) + "; accuracy per pair, paired: " + "; ".join(parts) + "."))
    else:
        rows.append((TESTABLE, f"The paper's Table 2 ranks the judges by accuracy ({paper}).",
                     "This build has no parsed retrieval verdict, or no other judge to compare it with."))
    tok = token_table(recs)
    if "share of chateval" in tok:
        share = float(tok.set_index("judge").loc["retrieval", "share of chateval"])
        spent = {j: _per_pair(hv, j, _pair_tokens) for j in ("retrieval", "chateval")}
        d, v = _paired_claim(spent["retrieval"], spent["chateval"], "-", cfg)
        rows.append((str(v) if not v.testable else v.label,
                     "The paper's Table 15 has the retrieval judge spending fewer tokens per pair than ChatEval "
                     f"({num.fmt_number(PAPER_SHARE, 1, 100)}% of them).",
                     f"Here it spends {num.fmt_number(share, 0, 100)}%, "
                     f"{num.fmt_estimate(d['diff'], d['lo'], d['hi'], 0)}"
                     f" tokens per pair on {d['n']} pairs (both judges at `convergent_judge_word_limit` = "
                     f"{cfg.convergent_judge_word_limit} words per turn)."))
    else:
        rows.append((TESTABLE, "The paper's Table 15 token comparison with ChatEval.",
                     "This build did not run both the retrieval judge and ChatEval."))
    models = recs.bench_verdicts["model"].nunique() if len(recs.bench_verdicts) else 0
    rows.append((TESTABLE, "The paper's convergent scores of its models (Tables 3-5) and their relation "
                 "to semantic entropy (Fig. 7).", f"This build judges {models} model(s) with `{cfg.judge_model}` on "
                 f"`divergent_limit` = {cfg.divergent().divergent_limit} problem(s) per domain; "
                 "both need strong models, a strong judge "
                 "and hundreds of solutions."))
    return claims_md(rows, recs)


guard_module(globals())
