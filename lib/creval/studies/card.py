"""The report card's rows (chapter 08): the graded studies' records in, one row per (measure or judge, human
data) out. Each row states a paper's claim the paper's way (who claimed it, in which direction), tests the
measure against people with :func:`creval.measures.stats.tracking.tracks_people` (the strongest of every trivial
surface baseline that applies, chosen inside each bootstrap replicate; a within-author check where texts by
people and by models are pooled; resampling by each dataset's declared unit) and reads the claim off that
test: *supports the paper*, *contradicts the paper*, *inconclusive here* or *not testable here*
(docs/verdicts.md). Each graded study builds its own rows with :func:`graded` (its ``grading.py``, declared
as ``card=`` on its :class:`~creval.studies.contract.Study`); :mod:`~creval.studies.reportcard.run` writes
them and adjusts them across the card (Holm); :mod:`~creval.studies.reportcard.report` only formats them.

Statistics are oriented so that higher = agrees with people (a measure expected to fall with creativity, such
as templates per token, is negated); a baseline enters in its better orientation. Lu et al. 2025 claim these
measures *fail* to track what people judge creative ("where and how current metrics fail", Sec. 6): a measure
that does not track people supports them. Rabeyah et al. 2024 report no human ratings: their rows are shown but
test no claim of theirs.
"""
from __future__ import annotations

import math
import re

import numpy as np

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.measures.stats.multiple import adjusted, adjusted_borderline
from creval.measures.stats.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, Verdict
from creval.studies.contract import Study
from creval.studies.registry import STUDIES

COLUMNS = ["paper", "claim", "measure", "human data", "statistic", "n", "units", "value", "lo", "hi", "baseline",
           "baseline value", "difference", "diff lo", "diff hi", "within value", "within lo", "within hi", "within",
           "tracking", "beaten by", "question", "verdict", "borderline", "p", "adjusted", "adjusted borderline",
           "reason", "raters", "ceiling", "paper figure", "note"]
JUDGMENT, AUTHORSHIP_Q = "people's judgment", "who wrote the text"
"""The question a row answers: agreement with what people judged (a rating, a label given by judges), or
whether a measure tells people's texts from a model's (a label that is only who wrote the text). The two are
tallied apart: telling authors apart is not tracking a judgment of creativity (issue 57)."""
CONTROL = "formatting control of the row above"
STEADINESS_Q = "how steady a judge is under rewording"
"""The question of a row that reads a judge's flips across prompt wordings against the people's flips between
raters (chapter 07c): not agreement with a judgment, so tallied apart and not drawn on the forest plot."""
APART = (AUTHORSHIP_Q, CONTROL, STEADINESS_Q)
"""The questions the card's count of "against people's judgments" leaves out."""
STEADY_WORDS = {SUPPORTS: "flips more often than the people", CONTRADICTS: "flips less often than the people",
                INCONCLUSIVE: INCONCLUSIVE, V.TESTABLE: V.TESTABLE}
"""What a steadiness row's judge does, by its verdict on Lu et al.'s claim (:data:`STEADINESS_Q`)."""
AUTHORSHIP_WORDS = TR.AUTHORSHIP_WORDS
SOURCE = ["source_study", "source_table", "source_filters"]    # the records a row's n counts (not displayed)
CHANCE = TR.CHANCE          # the statistic's chance level (accuracy: the majority baseline)
TAN, LU_R, RAB = "Tan et al. 2026", "Lu et al. 2025 (rethinking)", "Rabeyah et al. 2024"
BOOK = "this book's own question"
"""Rows of a measure no paper named (distinct-n, MATTR on the human sets): the book asks whether it tracks
people, no paper claimed anything of it, so the row has no paper's verdict and is tallied apart (issue 66)."""
CLAIMED = {TAN: "+", LU_R: "-", RAB: None, BOOK: None}        # + the measure tracks people; - it fails to
CLAIM = {TAN: "Tan et al.: the judge agrees with people",
         LU_R: "Lu et al.: the measure fails to track what people judged creative beyond surface features",
         RAB: "none: Rabeyah et al. report no human ratings",
         BOOK: "none: no paper named this measure; the book asks whether it tracks people"}
NO_CLAIM = {RAB: "Rabeyah et al. report no human ratings: nothing of theirs to support or contradict",
            BOOK: "no paper named this measure: what it tracks is the book's own question"}
LU_NAMED = ("ci", "ci_own", "ci_group", "tpt", "templates_per_token", "ppl")
"""The measure columns Lu et al. (rethinking) named: the creativity index, templates per token, perplexity."""


def claimant(col: str) -> str:
    """The paper whose claim a row of measure column ``col`` tests (issue 66): Lu et al. for the measures they
    named (:data:`LU_NAMED`), Tan et al. for their novelty judge (``judge``), the book's own question otherwise."""
    return TAN if col == "judge" else LU_R if col in LU_NAMED else BOOK


UNCLAIMED = "no paper's claim"
"""The verdict of a row that tests no paper's claim (:data:`NO_CLAIM`): not a word of the rule, never tallied
as *not testable*."""
NAME = TR.NAME
_LIST_LINE = re.compile(r"^\s*(?:[-*\u2022]|\(?\d+[.)]|step\s*\d+)", re.IGNORECASE)


def statistic(stat: str, x, y) -> float:
    """AUROC (``stat="auc"``, y a 0/1 label) or Spearman rho (``"spearman"``) of scores ``x`` against ``y``."""
    return corr.auc(y, x)["auc"] if stat == "auc" else corr.spearman(x, y)["rho"]


def oriented(base, y, stat: str) -> tuple[int, float]:
    """The baseline's better orientation on these items: ``(sign, statistic of sign * base)``. The flipped
    baseline's AUROC is 1 - AUROC and its rho is -rho; +1 on a tie or where neither is defined."""
    base, y = np.asarray(base, float), np.asarray(y, float)
    keep = np.isfinite(base) & np.isfinite(y)
    plus = statistic(stat, base[keep], y[keep])
    minus = statistic(stat, -base[keep], y[keep])
    if np.isfinite(minus) and (not np.isfinite(plus) or minus > plus):
        return -1, float(minus)
    return 1, float(plus)


def claim_word(tracking: str, claimed: str | None) -> str:
    """The paper's verdict from the tracking word (docs/verdicts.md). A paper that says the measure tracks
    people (``+``) is supported by *tracks people*, contradicted by *does not track people* or *tracks
    authorship only*; a *no better than* measure may agree with people but not beyond a trivial feature: that
    claim stays inconclusive. A paper that says the measure fails beyond surface features (``-``) the other way
    round: *no better than* (its lead's interval lies below the margin) supports it. No claim: :data:`UNCLAIMED`."""
    if claimed is None:
        return UNCLAIMED
    if tracking == V.TESTABLE:
        return V.TESTABLE
    if tracking == INCONCLUSIVE:
        return INCONCLUSIVE
    if tracking == TR.NO_BETTER:
        return SUPPORTS if claimed == "-" else INCONCLUSIVE
    tracks = tracking == TR.TRACKS
    return SUPPORTS if tracks == (claimed == "+") else CONTRADICTS


def format_baselines(texts) -> dict[str, np.ndarray]:
    """Surface features of each text a measure must beat: ``line count`` (non-empty lines) and ``list lines``
    (lines opening with a bullet, a number or "Step n")."""
    lines = [[s for s in str(t).splitlines() if s.strip()] for t in texts]
    return {"line count": np.array([len(x) for x in lines], float),
            "list lines": np.array([sum(bool(_LIST_LINE.match(s)) for s in x) for x in lines], float)}


def _within_text(r: dict) -> str:
    """Each author's value with its interval, then each prompt's own value (the within-prompt estimand)."""
    parts = [f"{w['author']} {num.fmt_estimate(w['value'], w['lo'], w['hi'])} (n = {w['n']})"
             for w in r.get("within") or []]
    prompts = "; ".join(f"{p['group']} {num.fmt_number(p['value'], 2)} (n = {p['n']})" for p in r.get("prompts") or [])
    return "; ".join(parts + ([f"per prompt: {prompts}"] if prompts else []))


def graded(paper: str, measure: str, data: str, x, baselines: dict, y, stat: str, n_boot: int, seed: int, *,
           author=None, cluster=None, group=None, paper_figure: str = "", note: str = "",
           degenerate: str | None = None, units: str = "item", source: tuple[str, str, dict] | None = None,
           label_is_author: bool = False, claim: tuple[str, str] | None = None, question: str | None = None,
           raters: str | None = None, ceiling: float | None = None) -> dict:
    """One card row: :func:`~creval.measures.stats.tracking.tracks_people` of ``x`` against ``y`` beside every
    surface baseline in ``baselines``, within ``author``'s texts, resampled by ``cluster`` within ``group``
    (the dataset's declared unit and stratum); the paper's claim (:data:`CLAIMED`) read off its word
    (:func:`claim_word`). ``degenerate`` (or a constant ``x``) makes the row *not testable here* with that
    reason. ``label_is_author``: ``y`` is who wrote the text, not a judgment: the row answers "does it tell
    people's texts from a model's" (:data:`AUTHORSHIP_Q`), in that vocabulary, and ``claim`` (the paper's
    claim text and direction) is read the same way. ``source``: ``(study, table, filters)`` of the records
    the row was computed from (:func:`sourced`). ``question``: the row's own tally line (a control of another
    row, :data:`CONTROL`, is not a claim of its own). ``raters``: whose judgment ``y`` is (n raters and their
    kind); ``ceiling``: their own agreement, each held out against the others (the forest plot draws it)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    why = V.first_reason(degenerate, V.constant(x[np.isfinite(x) & np.isfinite(y)], "score"))
    t = TR.tracks_people(x, y, stat=stat, baselines=baselines, author=author, cluster=cluster, group=group,
                         n_boot=0 if why else n_boot, seed=seed)      # an untestable row needs no resample
    track = V.TESTABLE if why else t["word"]
    claim_text, claimed = claim or (CLAIM[paper], CLAIMED[paper])
    word = claim_word(track, claimed)
    shown = AUTHORSHIP_WORDS.get(track, track) if label_is_author else TR.word_label({**t, "word": track})
    reason = why or (f"{NO_CLAIM[paper]}; against people: {shown}; {t['reason']}" if claimed is None
                     else t["reason"])
    return {"paper": paper, "claim": claim_text, "measure": measure, "human data": data, "statistic": NAME[stat],
            "n": t["n"], "units": t["n_units"], "value": t["value"], "lo": t.get("lo"), "hi": t.get("hi"),
            "baseline": t.get("baseline"), "baseline value": t.get("baseline value"),
            "difference": t.get("difference"), "diff lo": t.get("diff lo"), "diff hi": t.get("diff hi"),
            "within value": t.get("within value"), "within lo": t.get("within lo"), "within hi": t.get("within hi"),
            "within": _within_text(t), "tracking": shown,
            "beaten by": (t.get("beaten by") or "") + (" within authors" if t.get("beaten within") else "") or None,
            "question": question or (AUTHORSHIP_Q if label_is_author else JUDGMENT), "verdict": word,
            "borderline": bool(t["borderline"]) and not why, "p": t.get("p", math.nan), "reason": reason,
            "raters": raters, "ceiling": ceiling,
            "paper figure": paper_figure, "note": note, **sourced(*(source or (None, None)))}


def sourced(study: str | None, table: str | None, filters: dict | None = None) -> dict:
    """A row's source columns: the study, its table and the filters on it that select the rows its n counts
    (what the card links n and the lead to)."""
    return {"source_study": study, "source_table": table, "source_filters": dict(filters or {}) if study else None}


def with_adjusted(rows: list[dict], n_boot: int = 0) -> list[dict]:
    """Each row with its verdict after Holm's correction across the card's tested claims (shown beside the raw
    verdict: a *supports* / *contradicts* whose adjusted p is not below 0.05 reads *inconclusive here*), and
    whether that word is borderline: the raw verdict is, or another seed's p could put the adjusted p on the
    other side of 0.05 (:func:`~creval.measures.stats.multiple.adjusted_borderline`, from the ``n_boot`` resamples)."""
    tested = [i for i, r in enumerate(rows) if r["verdict"] in (SUPPORTS, CONTRADICTS, INCONCLUSIVE)
              and r.get("question") != CONTROL]             # a control of another row is no claim of its own
    ps = [rows[i]["p"] if rows[i]["p"] is not None and math.isfinite(rows[i]["p"]) else 1.0 for i in tested]
    adj = adjusted([Verdict(rows[i]["verdict"]) for i in tested], ps)    # an inconclusive claim counts, p = 1
    near = adjusted_borderline(ps, n_boot)
    out = [{**r, "adjusted": r["verdict"], "adjusted borderline": bool(r.get("borderline"))} for r in rows]
    for i, v, b in zip(tested, adj, near):
        out[i]["adjusted"] = v.word
        out[i]["adjusted borderline"] = bool(rows[i].get("borderline")) or (b and rows[i]["verdict"] != INCONCLUSIVE)
    return out


def graded_studies() -> list[Study]:
    """The registered studies that offer rows to the card (those declaring ``card=``), in the book's order."""
    return [s for s in STUDIES.values() if s.card is not None]


def card_rows(up: dict, n_boot: int = 2000, seed: int = 0) -> list[dict]:
    """Every card row from the graded studies' records (``up``: study name -> Records), Holm-adjusted: each
    study's own ``card`` rows (:func:`graded_studies`), in the book's order."""
    rows = []
    for s in graded_studies():
        if s.name in up:
            rows += s.card(up[s.name], n_boot, seed)
    return [{k: r.get(k) for k in COLUMNS + SOURCE} for r in with_adjusted(rows, n_boot)]
