"""Chapter 07b, pure formatting: the human-sets records in, captioned tables, a forest plot and the findings
sentence out. The card rows (:func:`~creval.studies.humansets.grading.card_rows`) are computed once by the chapter
and handed to each function, so the page and chapter 08 read the same numbers."""
from __future__ import annotations

from collections import Counter

import pandas as pd
import plotly.graph_objects as go

from creval.grade.forest import forest_figure
from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.studies.tables import captioned

ROWS = ["measure · criterion", "what it tracks", "rho within prompts [95% interval]",
        "lead over the strongest baseline", "raters' ceiling", "whose judgment"]


def summary(recs, rows: list[dict]) -> str:
    """What this build found, first: per set its size and whose judgment, what the measures track against the
    criteria nearest to creativity, the strongest measure beside the raters' ceiling."""
    sets = recs["sets"]
    if sets.empty:
        return "No human set was read."
    parts = []
    for s in sets.to_dict("records"):
        s = {"title": s.get("set", "?"), "n_texts": 0, "n_prompts": 0, "raters": "raters not named", "sample": False,
             **{k: v for k, v in s.items() if v == v}}          # a missing field reads as unknown, never raises
        mine = [r for r in rows if (r.get("source_filters") or {}).get("set") == s.get("set")]
        words = Counter(TR.rule_word(r["tracking"]) for r in mine)
        tally = "; ".join(f"{k} {w}" for w, k in words.most_common())
        tested = [r for r in mine if r["tracking"] != V.TESTABLE and r.get("value") == r.get("value")
                  and r.get("value") is not None]
        best = max(tested, key=lambda r: r["value"], default=None)
        head = (f"**{s['title']}**: {s['n_texts']} texts on {s['n_prompts']} prompts, {s['raters']}"
                + (" (the bundled sample: its numbers mean nothing)" if s["sample"] else "") + f". {tally}.")
        if best:
            head += (f" The strongest, {best['measure']} on {best['human data']}, reaches rho "
                     f"{num.fmt_estimate(best['value'], best['lo'], best['hi'])} within prompts; the strongest "
                     f"baseline there, {best['baseline']}, {num.fmt_number(best['baseline value'])}"
                     + (f"; one rater against the others reaches {best['ceiling']:.2f}" if best.get("ceiling")
                        is not None else "") + ".")
        parts.append(head)
    return " ".join(parts)


def fig_rows(rows: list[dict]) -> go.Figure:
    """The forest plot of the sets' rows: agreement within prompts and the lead over the strongest baseline, each
    with its interval, the raters' ceiling drawn as a grey tick."""
    return forest_figure([{**r, "word": TR.rule_word(r["tracking"])} for r in rows],
                         "Cheap measures against people's ratings nearest to creativity (within prompts; grey "
                         "tick: one rater against the others)", label=lambda r: f"{r['measure']} · {r['human data']}")


def table_rows(rows: list[dict]) -> pd.DataFrame:
    """One row per measure and criterion: what it tracks, its value, its lead, the ceiling and whose judgment."""
    out = [{"measure · criterion": f"{r['measure']} · {r['human data']}", "what it tracks": r["tracking"]
            + (", borderline" if r.get("borderline") else ""),
            "rho within prompts [95% interval]": num.fmt_estimate(r["value"], r.get("lo"), r.get("hi")),
            "lead over the strongest baseline": (f"{r['baseline']}: "
                                                 f"{num.fmt_estimate(r['difference'], r['diff lo'], r['diff hi'])}"
                                                 if r.get("baseline") else ""),
            "raters' ceiling": num.fmt_number(r.get("ceiling")) if r.get("ceiling") is not None else "–",
            "whose judgment": r.get("raters") or ""} for r in rows]
    return captioned(pd.DataFrame(out, columns=ROWS),
                     "Every cheap measure against each criterion nearest to creativity, by the card's rule "
                     "(docs/verdicts.md): Spearman's rho within prompts (each prompt's level removed), prompts "
                     "resampled whole, read within each writer too; the lead over the strongest length or format "
                     "baseline; the raters' ceiling, one rater held out against the others' mean.")


def table_sets(recs) -> pd.DataFrame:
    """Each set: where it was read from, its size, whose judgment it is, and its paper."""
    s = recs["sets"]
    cols = ["set", "title", "n_texts", "n_prompts", "n_raters", "raters", "source", "cite"]
    if s.empty or not set(cols) <= set(s.columns):
        return captioned(pd.DataFrame(columns=cols), "No set was read.")
    return captioned(s[cols].reset_index(drop=True), "The declared sets of human judgment (creval.datasets.rated): "
                     "where each was read from (the staged copy, a pinned download, or our bundled sample), its "
                     "texts, prompts and raters.")


def table_ceilings(recs) -> pd.DataFrame:
    """The raters' own agreement per set and criterion, within prompts and pooled."""
    c = recs["ceilings"]
    cols = ["set", "criterion", "agreement", "pooled", "n_raters"]
    if c.empty or not set(cols) <= set(c.columns):
        return captioned(pd.DataFrame(columns=cols), "No ceiling: no set was read.")
    return captioned(c[cols].reset_index(drop=True),
                     "The raters' ceiling: each rater with five or more texts held out against the mean of the "
                     "others on the texts it rated (Spearman), averaged weighted by its texts; 'agreement' within "
                     "prompts (the card's estimand; empty where no rater scored two texts of one prompt), "
                     "'pooled' without removing the prompt's level.")
