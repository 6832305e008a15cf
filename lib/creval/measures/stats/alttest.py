"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): can an LLM judge take the place of one
of the people? Each person is held out in turn; on every text the held-out person and the judge both scored, each
is compared with the people left (their alignment: minus the root mean squared difference from the remaining
people's scores, the paper's choice for numeric scores), and the judge "wins" the text when it aligns at least as
well. Per held-out person, a one-sided paired t-test of H0: the person's advantage rate exceeds the judge's by
``epsilon`` or more (epsilon: the cost-benefit margin, 0.2 for crowd workers and 0.1 for experts as the paper
suggests); the p-values are adjusted by Benjamini-Yekutieli across the people, and the **winning rate** is the
share of people whose H0 is rejected at ``q``. The judge passes when it wins against at least half of them. The
**advantage probability** is the judge's mean winning share over the people held out. Pure numpy and scipy.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as st

from creval.measures.stats.multiple import by

EPSILON = {"crowd": 0.2, "lay": 0.2, "expert": 0.1}
"""The margin the paper suggests by who the annotators are (crowd workers 0.2, skilled annotators 0.1)."""


def _alignment(x: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Minus the root mean squared difference of ``x`` (one score per text) from each remaining person's score."""
    with np.errstate(all="ignore"):
        return -np.sqrt(np.nanmean((others - x[:, None]) ** 2, axis=1))


def alt_test(judge, people: np.ndarray, epsilon: float = 0.2, q: float = 0.05, min_texts: int = 10) -> dict:
    """``judge``: one score per text; ``people``: texts x people (NaN where a person did not score a text). Returns
    ``winning_rate`` (share of people beaten after the correction), ``passes`` (winning rate >= 0.5),
    ``advantage`` (the average advantage probability), ``epsilon`` and per person ``{person, n, judge_rate,
    person_rate, p, p_by, won}``; people with fewer than ``min_texts`` shared texts are left out (said by ``n``)."""
    x = np.asarray(judge, float)
    m = np.asarray(people, float)
    rows = []
    for j in range(m.shape[1]):
        rest = np.delete(m, j, axis=1)
        ok = np.isfinite(x) & np.isfinite(m[:, j]) & np.isfinite(rest).any(axis=1)
        if ok.sum() < min_texts:
            continue
        a_judge, a_person = _alignment(x[ok], rest[ok]), _alignment(m[ok, j], rest[ok])
        w_judge, w_person = (a_judge >= a_person).astype(float), (a_person >= a_judge).astype(float)
        d = w_person - w_judge                       # H0: mean(d) >= epsilon; H1: mean(d) < epsilon
        if np.ptp(d) == 0:
            p = 0.0 if d[0] < epsilon else 1.0
        else:
            p = float(st.ttest_1samp(d, epsilon, alternative="less").pvalue)
        rows.append({"person": j, "n": int(ok.sum()), "judge_rate": float(w_judge.mean()),
                     "person_rate": float(w_person.mean()), "p": p})
    if not rows:
        return {"winning_rate": math.nan, "passes": False, "advantage": math.nan, "epsilon": epsilon, "people": []}
    for r, adj in zip(rows, by([r["p"] for r in rows])):
        r["p_by"], r["won"] = adj, bool(adj < q)
    rate = float(np.mean([r["won"] for r in rows]))
    return {"winning_rate": rate, "passes": rate >= 0.5, "advantage": float(np.mean([r["judge_rate"] for r in rows])),
            "epsilon": epsilon, "people": rows}
