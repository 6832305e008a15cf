"""Chapter 04's rows of the report card (:mod:`creval.studies.card`): the pairwise novelty judge
against AUT ratings and MacGyver labels, beside semantic distance, length and format. Declared as ``card=`` on
the study."""
from __future__ import annotations

from creval.measures.stats import verdicts as V
from creval.studies import card as C
from creval.studies.validation.config import ValidationConfig


def validation_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """The pairwise novelty judge against AUT ratings (resampled by response within each object, the dataset's
    declared unit and stratum) and MacGyver labels (by problem),
    semantic distance, length and format as baselines; a judge of whose items at least 90% average exactly
    0.5 under order swapping copies the order (not testable, the share shown)."""
    rows = []
    a = recs["aut_items"]
    if len(a) and "novelty_score" in a:
        sample = "bundled sample" if "source" in a and (a["source"] == "sample").all() else ""
        base = {"semantic distance": a["semdis"]}
        if "response" in a:
            base["length (words)"] = a["response"].astype(str).str.split().str.len().astype(float)
        rows.append(C.graded(C.TAN, "pairwise novelty judge", "Ocsai-1: AUT originality ratings", a["novelty_score"],
                           base, a["score"], "spearman", n_boot, seed,
                           group=a["prompt"].astype(str).to_numpy() if "prompt" in a else None, note=sample,
                           degenerate=V.first_reason(sample, V.copies_order(means=a["novelty_score"])),
                           source=(ValidationConfig.study, "aut_items", {}),
                           raters="Ocsai-1's raters' mean (their number and kind per response not released)"))
    m = recs["macgyver_items"]
    if len(m) and "novelty_score" in m:
        base = {"semantic distance": m["semdis"]}
        if "solution" in m:
            base = {**base, "length (words)": m["solution"].astype(str).str.split().str.len().astype(float),
                    **C.format_baselines(m["solution"])}
        rows.append(C.graded(C.TAN, "pairwise novelty judge", "MacGyver: unconventional vs conventional solutions",
                           m["novelty_score"], base, m["unconventional"].astype(float), "auc", n_boot, seed,
                           cluster=m["problem_id"].astype(str).to_numpy() if "problem_id" in m else None,
                           degenerate=V.copies_order(means=m["novelty_score"]),
                           source=(ValidationConfig.study, "macgyver_items", {}),
                           raters="MacGyver's annotators (crowd; one label per solution)"))
    return rows
