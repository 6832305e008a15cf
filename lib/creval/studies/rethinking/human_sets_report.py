"""Chapter 06's section on the two newer sets of human judgment (issue 54): LAMP (expert writers rank an AI
paragraph, a writer's edit and an AI edit of it; Chakrabarty et al. 2025) and A Confederacy of Models (raters
score 65 stories on a rubric; Gómez-Rodríguez and Williams 2023). Pure functions of the study's records: the
card's own rows for these sets (:func:`creval.studies.rethinking.grading.lamp_rows` and
:func:`~creval.studies.rethinking.grading.confed_rows`), findings first, and the people's own agreement, the
ceiling of any measure."""
from __future__ import annotations

import math

import pandas as pd

from creval.core.errors import CrevalError
from creval.measures.stats import tracking as TR
from creval.measures.stats.numbers import fmt_estimate, fmt_number
from creval.studies.human_sets import rater_ceiling
from creval.studies.links import anchor, items
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.grading import (
    CONFED_ITEMS,
    LAMP_PAIRS,
    confed_rows,
    lamp_judge,
    lamp_rows,
    writer_ceiling,
)
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason
from creval.studies.tables import captioned

UNIT_WORD = {"lamp": "instructions", "confed": "authors"}
ORDER = {TR.TRACKS: 0, TR.AUTHORSHIP: 1, TR.NO_BETTER: 2, TR.NO_TRACK: 3}   # the findings before the rest


def human_set_rows(recs, n_boot: int = 2000, seed: int = 0) -> list[dict]:
    """The card's rows of LAMP and Confederacy, exactly as the card grades them (same function, same seed)."""
    return lamp_rows(recs, n_boot, seed) + confed_rows(recs, n_boot, seed)


def _set_of(r: dict) -> str:
    """Which of the two sets a card row grades: ``lamp`` or ``confed`` (its table, or the set it filters)."""
    table, filters = r.get("source_table") or "", r.get("source_filters") or {}
    return "lamp" if table in ("measures_lamp", "lamp_judge") or filters.get("set") == "lamp" else "confed"


def _number(r: dict, link=anchor) -> str:
    """``value [lo, hi]`` with n linked to the records it counts (``link``: :func:`~creval.studies.links.anchor`
    in a table cell, :func:`~creval.studies.links.items` in a sentence) and the independent units resampled."""
    est = fmt_estimate(r["value"], r.get("lo"), r.get("hi"))
    table, which = r.get("source_table") or "", _set_of(r)
    n = f"{r['n'] // 2} items" if which == "lamp" else f"{r['n']} stories"
    linked = link(n, RethinkingConfig.study, table, r.get("source_filters") or None) if table else n
    return f"{est}, n = {linked} ({r['units']} {UNIT_WORD[which]})"


def table_human_sets(recs, n_boot: int = 2000, seed: int = 0, rows: list[dict] | None = None) -> pd.DataFrame:
    """One row per card row of the two sets, findings first (*tracks people*, then *no better than*, *does
    not track people*, then the undecided), each with its claim, the number (n linked to the texts, the
    interval resampled by instruction or author), the best surface baseline, the tracking word, the claim's
    word and why. LAMP's AUROC is the paired one (:func:`~creval.studies.rethinking.grading.mirrored`): 0.5
    when the measure ignores which version the writers preferred, 1 when it always prefers it. ``rows``: the
    rows already computed (:func:`human_set_rows`), so a page grades them once."""
    rows = human_set_rows(recs, n_boot, seed) if rows is None else rows
    out = pd.DataFrame([{"human data": r["human data"], "measure": r["measure"], "claim": r["claim"],
                         "statistic": r["statistic"], "number": _number(r),
                         "best baseline": f"{r['baseline']} {fmt_number(r['baseline value'])}"
                         if r.get("baseline") else "",
                         "word": TR.word_label({"word": r["tracking"], "beaten by": r.get("beaten by")}),
                         "verdict": r["verdict"] + (" (borderline)" if r.get("borderline") else ""),
                         "why": r["reason"], "_order": ORDER.get(r["tracking"], 9)} for r in rows],
                       columns=["human data", "measure", "claim", "statistic", "number", "best baseline", "word",
                                "verdict", "why", "_order"])
    out = out.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
    said = [f"{s}: {unlabelled_reason(recs, s)}" for s in ("lamp", "confed") if not labelled(recs, s)]
    return captioned(out, "The cheap measures against two more sets of human judgment, findings first: LAMP "
                          "(does the measure prefer the version of a paragraph the expert writers' majority "
                          "preferred? paired AUROC, resampled by instruction) and A Confederacy of Models "
                          "(Spearman against the raters' mean, within person and model stories, resampled by "
                          "author)." + (f" Not real labels here ({'; '.join(said)})." if said else ""))


def table_human_ceilings(recs) -> pd.DataFrame:
    """The people's own agreement, the ceiling of any measure: for each LAMP comparison the share of two
    writers of one item who prefer the same version and how often the majority preferred the edit; for each
    Confederacy item the Spearman between the two raters, the noise ceiling against their mean and what one
    more rater would score."""
    rows = []
    lamp = measures(recs, "lamp")
    if len(lamp) and "over_raw" in lamp:
        for edit, data in LAMP_PAIRS.items():
            c = writer_ceiling(lamp, edit)
            k = int(lamp["n_writers"].astype(float).max())
            rows.append({"human data": data, "people": f"{c['n_items']} items, up to {k} writers each",
                         "agreement": f"two writers agree on {_pct(c['pairwise'])} of pairs",
                         "ceiling": f"majority prefers the edit on {_pct(c['majority'])} of items"})
    conf = measures(recs, "confed")
    if len(conf) and "total" in conf:
        for _, (item, data) in CONFED_ITEMS.items():
            try:
                c = rater_ceiling(conf, item)
            except CrevalError as e:        # a table without two raters' columns: say so
                rows.append({"human data": data, "people": "", "agreement": str(e).splitlines()[0],
                             "ceiling": ""})
                continue
            rows.append({"human data": data, "people": f"{c['n']} stories, {c['k']} raters each",
                         "agreement": f"raters' Spearman {fmt_number(c['rho'])}",
                         "ceiling": f"noise ceiling {fmt_number(c['ceiling'])}; one more rater "
                                    f"{fmt_number(c['one_rater'])}"})
    out = pd.DataFrame(rows, columns=["human data", "people", "agreement", "ceiling"])
    return captioned(out, "How far the people agree with one another: no measure can agree with them more "
                          "than they agree among themselves.")


def _pct(v: float) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:.0%}"


def human_sets_md(recs, n_boot: int = 2000, seed: int = 0, rows: list[dict] | None = None) -> str:
    """The section's finding in one paragraph, from the rows: per set how many rows got each word, and the
    strongest surface baseline beside the best measure (a sample says it grades nothing)."""
    rows = human_set_rows(recs, n_boot, seed) if rows is None else rows
    out = []
    for which, name in (("lamp", "LAMP"), ("confed", "A Confederacy of Models")):
        got = [r for r in rows if _set_of(r) == which]
        if not got:
            out.append(f"{name}: no texts in these records.")
            continue
        if all(r["tracking"] == TR.TESTABLE for r in got):
            out.append(f"{name}: not testable here ({got[0]['reason']}).")
            continue
        words: dict[str, int] = {}
        for r in got:
            w = TR.word_label({"word": r["tracking"], "beaten by": r.get("beaten by")})
            words[w] = words.get(w, 0) + 1
        best = max(got, key=lambda r: r["value"] if math.isfinite(r["value"]) else -math.inf)
        tally = "; ".join(f"{w}: {k}" for w, k in sorted(words.items(), key=lambda kv: -kv[1]))
        out.append(f"{name}, {len(got)} rows ({tally}). Its best measure, {best['measure']} on "
                   f"{best['human data'].split(': ', 1)[-1]}, reaches {best['statistic']} {_number(best, items)}; the "
                   f"strongest surface feature there, {best['baseline']}, reaches "
                   f"{fmt_number(best['baseline value'])}.")
    return " ".join(out + _model_scope(recs))


def _model_scope(recs) -> list[str]:
    """What the model-backed measures saw: LAMP's instructions under perplexity and the novelty judge (a seeded
    sample, ``rethink_lamp_model_instructions``), how often the judge flipped with the order, and the
    Confederacy stories under perplexity."""
    out = []
    lamp_m, conf = measures(recs, "lamp"), measures(recs, "confed")
    judged = lamp_judge(recs)
    if len(lamp_m) and "group" in lamp_m:
        n = int(lamp_m["group"].nunique())
        k_ppl = int(lamp_m.loc[lamp_m["ppl"].notna(), "group"].nunique()) if "ppl" in lamp_m else 0
        k_j = int(judged["group"].nunique()) if len(judged) and "group" in judged else 0
        param = getattr(recs.cfg, "rethink_lamp_model_instructions", None)
        seen = (f"Perplexity saw {k_ppl} and the pairwise novelty judge {k_j} of LAMP's {n} instructions (every "
                f"version of each; a seeded sample of rethink_lamp_model_instructions = {param}, 0 for all).")
        if k_j and "pref" in judged:
            p = judged["pref"].astype(float)
            ok = p[p.notna()]
            flips = int((ok == 0.5).sum())
            seen += (f" The judge changed its answer with the order on {flips} of {len(ok)} comparisons"
                     + (f" ({len(p) - len(ok)} unparsed)" if len(ok) < len(p) else "") + ".")
        out.append(seen)
    if len(conf) and "ppl" in conf:
        out.append(f"Perplexity scored {int(conf['ppl'].notna().sum())} of the {len(conf)} Confederacy stories.")
    return out
