"""The card's rows of the judges study (chapter 07c, issue 64), declared as ``card=`` on the study:

- each released TTCW judge (and your own judge, where one rated HANNA or TTCW stories) against the people's mean,
  beside the surface baselines, within each writer, prompts resampled whole, the people named and their ceiling
  drawn (:func:`creval.studies.card.graded`; no paper claimed these judges track these people: the book's own
  question, as for HANNA's released judges, which the human-sets study grades beside the cheap measures on the same
  stories, chapter 07b). TTCW releases no New Yorker story's text, so its rows read the 36 model-written stories;
- Lu et al.'s claim that an LLM judge is unstable under minor prompt variations (Sec. 5.2.4: about 20% of
  verdicts contradicted by a rephrasing), per HANNA judge and criterion: the judge's flip rate across its four
  wordings minus the people's flip rate between raters on the same pairs of stories
  (:func:`creval.measures.stats.consistency.flip_gap`). *supports* when the judge flips more often than a change
  of rater does (the interval above 0), *contradicts* when it flips less often (below 0)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from creval.measures import pertext as P
from creval.measures.stats import numbers as num
from creval.measures.stats import verdicts as V
from creval.studies import card as C
from creval.studies.judges.config import JudgesConfig
from creval.studies.judges.run import JUDGE, YOURS, YOURS_TTCW

GRADED = ("ttcw", YOURS, YOURS_TTCW)
"""The sets whose judges the card grades here (HANNA's are graded in chapter 07b)."""
UNSTABLE = ("Lu et al.: an LLM judge is unstable under minor prompt variations (Sec. 5.2.4), beyond the "
            "people's own disagreement")


def _table(recs, name: str) -> pd.DataFrame:
    try:
        return recs[name]
    except Exception:                           # noqa: BLE001 - records from before the table: no rows
        return pd.DataFrame()


def panel_info(panels: pd.DataFrame, s: str, crit: str) -> dict:
    cut = panels[(panels["set"] == s) & (panels["criterion"] == crit)] if len(panels) else panels
    return cut.iloc[0].to_dict() if len(cut) else {}


def _ceiling(info: dict) -> float | None:
    c = info.get("ceiling")
    return float(c) if c is not None and math.isfinite(float(c)) else None


def judge_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """One card row per judge and criterion of the :data:`GRADED` sets: the judge's score against the people's
    mean."""
    t, panels = _table(recs, "texts"), _table(recs, "panels")
    if t.empty or not {"set", "criterion", "people"} <= set(t.columns):
        return []
    rows = []
    for (s, crit), g in t[t["set"].isin(GRADED)].groupby(["set", "criterion"], sort=False):
        info = panel_info(panels, s, crit)
        ceiling = _ceiling(info)
        sample = "not real ratings: our bundled sample" if bool(info.get("sample")) else ""
        base = {k: g[k].astype(float).to_numpy() for k in P.BASELINES if k in g and g[k].notna().any()}
        data = f"{'HANNA' if s == YOURS else 'TTCW'}: {info.get('label', crit)}"
        note = "; ".join(x for x in (sample, f"the people's ceiling: one held out against the others' mean, within "
                                             f"prompts, {ceiling:.2f}" if ceiling is not None else "") if x)
        for col in [c for c in g.columns if c.startswith(JUDGE + ":") and g[c].notna().sum() >= 2]:
            if s != "ttcw" and not col.startswith(f"{JUDGE}:yours"):
                continue                        # the released judges are graded on all their texts
            x = g[col].astype(float).to_numpy()
            rows.append(C.graded(C.BOOK, f"LLM judge {col[len(JUDGE) + 1:]}", data, x, base,
                                 g["people"].astype(float).to_numpy(), "spearman", n_boot, seed,
                                 author=g["author"].astype(str).to_numpy(), group=g["prompt"].astype(str).to_numpy(),
                                 note=note, degenerate=sample or None, units="text",
                                 source=(JudgesConfig.study, "texts", {"set": s, "criterion": crit}),
                                 raters=info.get("people") or None, ceiling=ceiling))
    return rows


def variant_row(v: dict, info: dict) -> dict:
    """The card row of Lu et al.'s instability claim for one judge and criterion (a ``variants`` row)."""
    value, lo, hi = (float(v.get(k, math.nan)) for k in ("gap", "gap_lo", "gap_hi"))
    sample = "not real ratings: our bundled sample" if bool(info.get("sample")) else None
    verdict = V.claim_verdict(value, lo, hi, int(v.get("gap_prompts") or 0), claimed="+", null=0.0,
                              degenerate=sample, min_n=V.MIN_ITEMS, mc=(v.get("gap_mc_lo"), v.get("gap_mc_hi")),
                              units="prompt")
    judge, people = float(v.get("flip_rate", math.nan)), float(v.get("people_flip", math.nan))
    shown = (f"the judge flips {num.fmt_number(judge, 2)} of its pairs across {int(v['variants'])} wordings, the "
             f"people {num.fmt_number(people, 2)} between raters")
    return {"paper": C.LU_R, "claim": UNSTABLE, "measure": f"LLM judge {v['judge']}: flips across wordings",
            "human data": f"HANNA: {info.get('label', v['criterion'])}", "statistic": "flip rate minus the people's",
            "n": int(v.get("pairs") or 0), "units": int(v.get("gap_prompts") or 0), "value": value, "lo": lo,
            "hi": hi, "baseline": None, "baseline value": None, "difference": value, "diff lo": lo, "diff hi": hi,
            "within value": None, "within lo": None, "within hi": None, "within": "",
            "tracking": C.STEADY_WORDS[verdict.word], "beaten by": None, "question": C.STEADINESS_Q,
            "verdict": verdict.word, "borderline": bool(verdict.borderline), "p": float(v.get("gap_p", math.nan)),
            "reason": f"{shown}; {verdict.reason}", "raters": info.get("people") or None, "ceiling": None,
            "paper figure": "about 20% of verdicts contradicted by a rephrasing (Sec. 5.2.4)", "note": "",
            **C.sourced(JudgesConfig.study, "variants", {"set": v["set"], "criterion": v["criterion"],
                                                        "judge": v["judge"]})}


def variant_rows(recs) -> list[dict]:
    """One row of Lu et al.'s instability claim per judge asked with several wordings."""
    v, panels = _table(recs, "variants"), _table(recs, "panels")
    if v.empty or "gap" not in v:
        return []
    return [variant_row(r, panel_info(panels, r["set"], r["criterion"])) for r in v.to_dict("records")
            if np.isfinite(float(r.get("flip_rate", math.nan)))]


def card_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """The judges' rows against people, then the instability rows."""
    return judge_rows(recs, n_boot, seed) + variant_rows(recs)
