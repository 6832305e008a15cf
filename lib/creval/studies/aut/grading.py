"""Chapter 07's rows of the report card (:mod:`creval.studies.card`): each AUT judge (scorer x
mode) against the human ratings beside the stored baseline scorers. Rabeyah et al. report no human ratings, so
the rows test no claim of theirs. Declared as ``card=`` on the study."""
from __future__ import annotations

from creval.measures.stats import verdicts as V
from creval.studies import card as C
from creval.studies.aut.config import AutConfig
from creval.studies.aut.report import human_values

FALLBACK = "log-prob fallback"


AUT_RATERS = {"ocsai1": "Ocsai-1's raters' mean (their number and kind per response not released)",
              "cambridge": "3 trained raters per response (Cambridge AUT)"}
"""Whose judgment each AUT set's rows rest on (issue 63)."""

def from_fallback(x) -> bool:
    """Whether every value of a list setting (segmented score or rank) came from the log-prob fallback: the
    one-response prompt of the pointwise setting, read from ``human_values``' ``logprobs`` share."""
    return "logprobs" in x and len(x) > 0 and bool((x["logprobs"].astype(float) == 1.0).all())


def aut_degenerate(d: str, s: str, mode: str, x, pointwise: bool) -> tuple[str, str | None]:
    """The measure's name on the card and why the row cannot test its judge: bundled sample ratings, a judge
    that copies the order it was shown on at least 90% of the items (a ranking shown forward and reversed
    averages exactly 0.5 per item; the share is shown), or a list setting measured entirely by the log-prob
    fallback (shown as the fallback; counted once, on the pointwise row, where there is one)."""
    name = f"LLM judge {s} ({mode})"
    sample = "bundled sample: our guesses, not ratings" if d.startswith("sample") else None
    if mode != "pointwise" and from_fallback(x):
        name = f"LLM judge {s} ({mode} = the {FALLBACK})"
        twice = ("the same measurement as the pointwise row (every value from the log-prob fallback): counted "
                 "there") if pointwise else None
        return name, V.first_reason(sample, twice)
    order = V.copies_order(means=x["value"]) if mode.endswith("rank") else None
    return name, V.first_reason(sample, order)


def aut_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each AUT judge (scorer x mode) against the human ratings, beside every stored baseline scorer at once
    (the strongest chosen inside each replicate), resampled by response within each object (the dataset's
    declared unit and stratum, :data:`creval.datasets.aut.DATASET`)."""
    h = human_values(recs)
    if h.empty:
        return []
    rows = []
    base = h[h["mode"] == "baseline"]
    judged = h[h["mode"] != "baseline"]
    pointwise = set(zip(judged.loc[judged["mode"] == "pointwise", "dataset"],
                        judged.loc[judged["mode"] == "pointwise", "scorer"]))
    for (d, s, mode), x in judged.groupby(["dataset", "scorer", "mode"]):
        name, why = aut_degenerate(d, s, mode, x, (d, s) in pointwise)
        j = x
        names = []
        for b, bx in base[base["dataset"] == d].groupby("scorer"):
            j = j.merge(bx[["item_id", "value"]].rename(columns={"value": f"base {b}"}), on="item_id", how="inner")
            names.append(b)
        rows.append(C.graded(C.RAB, name, f"{d}: AUT originality", j["value"], {b: j[f"base {b}"] for b in names},
                           j["human"], "spearman", n_boot, seed, group=j["object"].astype(str).to_numpy()
                           if "object" in j else None, paper_figure="no human data in the paper",
                           note="bundled sample: our guesses, not ratings" if d.startswith("sample") else "",
                           degenerate=why,
                           source=(AutConfig.study, "human", {"dataset": d, "scorer": s, "mode": mode}),
                           raters=AUT_RATERS.get(d.split()[0].lower(), "the dataset's raters' mean")))
    return rows
