"""Chapter 06's rows of the report card (:mod:`creval.studies.card`): the creativity index,
templates per token and perplexity against each labelled set, Lu et al.'s claim that they fail to track people
beyond surface features. Declared as ``card=`` on the study, so the card grades whatever the study offers.

Two more sets of human judgment (issue 54) are graded here too: LAMP (:func:`lamp_rows`: do the measures
prefer the version of a paragraph the expert writers preferred, as Chakrabarty et al. 2025 report the writers
do), on the cheap model-free measures, perplexity and the pairwise novelty judge (the last two on a seeded
sample of instructions, ``rethink_lamp_model_instructions``), and A Confederacy of Models (:func:`confed_rows`:
the cheap measures and perplexity against the raters' mean Creativity and total, Lu et al.'s claim)."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets import aut, macgyver, ttcw
from creval.measures import pertext as P
from creval.measures.stats import verdicts as V
from creval.studies import card as C
from creval.studies.human_sets import rater_ceiling
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason

RETHINK_SETS = (("ps", "MacGyver: unconventional vs conventional solutions", "label", "auc", False),
                ("solver", "MacGyver: crowd vs GPT-4 solutions (length-matched)", "label", "auc", False),
                ("ttcw", "TTCW: expert test passes (0-42)", "passes", "spearman", True),
                ("aut", "Ocsai-1: AUT originality ratings", "label", "spearman", False))
UNIT_OF = {"ps": macgyver.DATASET, "solver": macgyver.DATASET, "ttcw": ttcw.DATASET, "aut": aut.DATASET}
"""Each set's dataset, whose declared unit (``unit``; a ``stratum`` where it has one) every interval resamples:
a set's ``group`` column holds the problem, the plot or the object."""
BY_AUTHOR = {"solver": ("Lu et al. (Table 2): the index is higher for people's texts than for a model's", "+")}
"""Sets whose label is only who wrote the text: their rows answer whether a measure tells the two apart, stated
as the paper's own claim, and are tallied apart from the claims about human judgment."""
RETHINK_MEASURES = {c: (name, P.DIRECTION[c]) for c, name in (
    ("ci", "creativity index"), ("ci_unmarked", "creativity index, step markers stripped (formatting control)"),
    ("tpt", "templates per token (negated)"), ("ppl", "perplexity"))}
"""The card's measures of chapter 06, each with its name on the card and its direction (the one table of
directions, :data:`creval.measures.pertext.DIRECTION`)."""
RATERS = {"ps": "MacGyver's annotators (crowd; one label per solution)",
          "solver": "none: the label is who wrote the text (crowd or GPT-4)",
          "ttcw": "3 experts per story (creative writers and professors; TTCW)",
          "aut": "Ocsai-1's raters' mean (their number and kind per response not released)",
          "lamp": "3 expert writers per item (LAMP)",
          "confed": "2 raters per story, 10 in all (expert; The Reader is the Metric)"}
"""Whose judgment each set's rows rest on (issue 63): the raters, their number and kind."""
STORED = {"ppl": "perplexity", "ci_unmarked": "formatting"}    # measures read from a table of their own, per set
PAPER_FIGURES = {("ps", "ci"): "CI 0.76 vs 0.75 (means; Table 2)", ("ps", "tpt"): "template rate 38.7% vs 31.9%",
                 ("ps", "ppl"): "PPL 13.98 vs 14.11"}


def rethinking_baselines(m) -> dict[str, np.ndarray]:
    """Length as stored (before any cut) and as cut to the pair's shorter text, step markers, line count and
    list lines: the trivial features of chapter 06's texts."""
    cut = m["n_words"].astype(float).to_numpy()
    full = m["full_words"].astype(float).to_numpy() if "full_words" in m else np.full(len(m), np.nan)
    stored = np.where(np.isfinite(full), full, cut)
    out = {"length as stored (words)": stored}
    if np.any(stored != cut):
        out["length as cut (words)"] = cut
    if "marked" in m and m["marked"].notna().all():
        out["step markers"] = m["marked"].astype(float).to_numpy()
    return {**out, **C.format_baselines(m["text"])}


def source_of(ts: str, col: str) -> tuple[str, str, dict]:
    """The records a measure's row counts: its own table filtered on the set (perplexity, the formatting
    control), else the set's ``measures_<set>``."""
    return (RethinkingConfig.study, STORED[col], {"set": ts}) if col in STORED else \
        (RethinkingConfig.study, f"measures_{ts}", {})


def rethinking_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Creativity index, templates and perplexity against each labelled set of chapter 06, every surface
    baseline, the writer as the author (strata) on TTCW; the crowd vs GPT-4 index is followed by its formatting
    control."""
    rows = []
    for ts, data, label, stat, by_writer in RETHINK_SETS:
        m = measures(recs, ts)
        if m.empty or label not in m:
            continue
        sample = "" if labelled(recs, ts) else f"not real labels: {unlabelled_reason(recs, ts)}"
        y, base = m[label].astype(float), rethinking_baselines(m)
        author = m["kind"].astype(str).to_numpy() if by_writer and "kind" in m else None
        stratum = UNIT_OF[ts].stratum          # the declared stratum's column (the AUT object), the unit each text
        strat = bool(stratum) and stratum in m
        where = m[stratum if strat else "group"].astype(str).to_numpy()
        for col, (name, sign) in RETHINK_MEASURES.items():
            if col == "ci_unmarked" and ts != "solver":
                continue
            if col in m and m[col].notna().sum() >= 2:
                rows.append(C.graded(C.LU_R, name, data, sign * m[col].astype(float), base, y, stat, n_boot, seed,
                                   author=author, cluster=None if strat else where,
                                   group=where if strat else None, label_is_author=ts in BY_AUTHOR,
                                   claim=BY_AUTHOR.get(ts), question=C.CONTROL if col == "ci_unmarked" else None,
                                   paper_figure=PAPER_FIGURES.get((ts, col), ""), note=sample,
                                   degenerate=sample or None, units="text", source=source_of(ts, col),
                                   raters=RATERS[ts]))
    return rows + lamp_rows(recs, n_boot, seed) + confed_rows(recs, n_boot, seed)


# -- LAMP and Confederacy (issue 54) ----------------------------------------------------------------------
LAMP_PAIRS = {"writer_edit": "LAMP: writer's edit vs raw AI paragraph (writers' majority)",
              "ai_edit": "LAMP: AI edit vs raw AI paragraph (writers' majority)"}
"""LAMP's two comparisons: the edited version's ``kind`` -> the human data's name. Chakrabarty et al. claim
something of the writers (they prefer the edit), nothing of the measures; the rows test the claims of whoever
named each measure (:func:`creval.studies.card.claimant`)."""
LAMP_WHICH = {"writer_edit": "LAMP: which writer's edits the writers preferred (edit - raw, per item)",
              "ai_edit": "LAMP: which AI edits the writers preferred (edit - raw, per item)"}
"""LAMP's question conditioned on the version (issue 66): among the items, does the measure's edit-minus-raw
difference rank the items whose edit the writers preferred above those whose raw paragraph they preferred? Chance
is 0.5 here whatever share of edits won, unlike the mirrored rows, where the constant rule "prefer the edit"
scores that share (:data:`EDIT_RULE`, their baseline)."""
EDIT_RULE = "prefer the edit (a constant rule)"
CONFED_ITEMS = {"label": ("creativity", "Confederacy: raters' mean Creativity (1-10)"),
                "total": ("total", "Confederacy: raters' mean total (ten rubric items)")}
HUMAN_MEASURES = {"ci": ("creativity index", 1), "tpt": ("templates per token (negated)", -1),
                  "distinct_1": ("distinct-1", 1), "distinct_2": ("distinct-2", 1), "mattr": ("MATTR", 1)}
"""The cheap measures graded on the two sets (column of ``measures_<set>`` -> name, sign)."""
MODEL_MEASURES = {"ppl": ("perplexity", 1)}
"""Measures of a model graded on the two sets where the run scored them (perplexity under ``cfg.model``,
oriented as on chapter 06's other sets: higher = less predictable)."""
JUDGE = "pairwise novelty judge (both orders)"
"""The name of LAMP's judge rows: the judge's preference for the edit over the raw paragraph."""
SURFACE = {"words": "length (words)", "chars_per_word": "mean word length", "lines": "line count",
           "list_lines": "list lines", "digits": "digits", "markup": "markup characters"}


def surface(texts) -> dict[str, np.ndarray]:
    """The length and format features of each text (:func:`creval.measures.pertext.format_features`), named."""
    return {SURFACE[k]: v for k, v in P.format_features([str(t) for t in texts]).items()}


def mirrored(m: pd.DataFrame, edit: str, values: Mapping[str, Sequence[float]]) -> dict:
    """LAMP's paired comparison of ``edit`` (a version's ``kind``) with the raw paragraph, as rows the grading
    rule can read. Per item that has both versions and a majority of writers (``over_raw`` of ``n_writers``
    ranked the edit above the raw one; a tie is left out) two mirrored rows: x = v(edit) - v(raw) with y = 1
    when the majority preferred the edit, and x = v(raw) - v(edit) with y = 1 - that, for every array of
    ``values`` (one value per row of ``m``: measures and baselines alike).

    So the positive rows hold, per item, D = v(preferred) - v(other) and the negative rows -D: the AUROC of x
    against y is the chance that one item's D exceeds another item's -D (ties half), 0.5 by construction when
    the measure ignores the writers' choice, 1.0 when it always prefers the version they preferred (every D >
    0) and 0.0 when it always prefers the other. Both rows of an item answer one instruction: ``cluster``
    (``m.group``) resamples them together. Returns ``y``, ``cluster``, ``item`` and ``x`` (name -> array)."""
    where = {(it, k): i for i, (it, k) in enumerate(zip(m["item"], m["kind"]))}
    n_w, over = m["n_writers"].astype(float).to_numpy(), m["over_raw"].astype(float).to_numpy()
    vals = {k: np.asarray(v, float) for k, v in values.items()}
    y, cluster, items, x = [], [], [], {k: [] for k in vals}
    for i, (it, k, g) in enumerate(zip(m["item"], m["kind"], m["group"])):
        j = where.get((it, "raw"))
        if k != edit or j is None or not (math.isfinite(over[i]) and n_w[i] > 0) or 2 * over[i] == n_w[i]:
            continue
        pref = 1.0 if 2 * over[i] > n_w[i] else 0.0
        for side, yy in ((1.0, pref), (-1.0, 1.0 - pref)):
            y.append(yy)
            cluster.append(g)
            items.append(it)
            for name, v in vals.items():
                x[name].append(side * (v[i] - v[j]))
    return {"y": np.array(y, float), "cluster": np.array(cluster, dtype=object),
            "item": np.array(items, dtype=object), "x": {k: np.array(v, float) for k, v in x.items()}}


def conditioned(m: pd.DataFrame, edit: str, values: Mapping[str, Sequence[float]]) -> dict:
    """LAMP's comparison of ``edit`` with the raw paragraph, one row per item that has both versions and a
    writers' majority (a tie left out): x = v(edit) - v(raw) for every array of ``values`` and y = 1 when the
    majority preferred the edit. The version is held fixed (x is always edit minus raw), so a rule that always
    prefers the edit is constant here and chance is 0.5: the AUROC asks whether the measure knows *which* edits
    won. ``cluster``: the instruction. Returns ``y``, ``cluster``, ``item`` and ``x``."""
    p = mirrored(m, edit, values)
    first = np.arange(0, len(p["y"]), 2)            # mirrored writes each item's edit-minus-raw row first
    return {"y": p["y"][first], "cluster": p["cluster"][first], "item": p["item"][first],
            "x": {k: v[first] for k, v in p["x"].items()}}


def writer_ceiling(m: pd.DataFrame, edit: str) -> dict:
    """The writers' own agreement on ``edit`` vs the raw paragraph, from ``over_raw`` of ``n_writers`` per
    item: ``pairwise`` (the share of two writers of one item who prefer the same version; the ceiling of any
    measure), ``majority`` (the share of items whose majority preferred the edit) and ``n_items``."""
    e = m[(m["kind"] == edit) & (m["n_writers"].astype(float) >= 2)]
    n, k = e["n_writers"].astype(float).to_numpy(), e["over_raw"].astype(float).to_numpy()
    ok = np.isfinite(k)
    n, k = n[ok], k[ok]
    same = (k * (k - 1) + (n - k) * (n - k - 1)) / 2
    return {"pairwise": float(same.sum() / (n * (n - 1) / 2).sum()) if len(n) else math.nan,
            "majority": float(np.mean(2 * k > n)) if len(n) else math.nan, "n_items": int(len(n))}


def scored(m: pd.DataFrame) -> dict[str, np.ndarray]:
    """The model measures (:data:`MODEL_MEASURES`) the run scored on at least two texts of ``m``, oriented."""
    return {c: sign * m[c].astype(float).to_numpy() for c, (_, sign) in MODEL_MEASURES.items()
            if c in m and m[c].notna().sum() >= 2}


def lamp_judge(recs) -> pd.DataFrame:
    """The run's ``lamp_judge`` rows (empty when it wrote none, or for records from before the judge)."""
    try:
        return recs["lamp_judge"]
    except KeyError:
        return pd.DataFrame()


def judge_values(m: pd.DataFrame, judged: pd.DataFrame, edit: str) -> np.ndarray:
    """The judge's preference as one value per row of ``m`` for :func:`mirrored`: on ``edit``'s row of a judged
    item its preference for the edit minus one half (0.5, 0 on a flip, -0.5; NaN unparsed), 0 on that item's raw
    row, NaN elsewhere; so v(edit) - v(raw) is the judge's side."""
    out = np.full(len(m), np.nan)
    if judged.empty or "pair" not in judged:
        return out
    j = judged[judged["pair"] == edit]
    pref = dict(zip(j["first_id"], j["pref"].astype(float)))
    items = set(j["item"])
    for i, (tid, it, k) in enumerate(zip(m["id"], m["item"], m["kind"])):
        if k == edit and tid in pref:
            out[i] = pref[tid] - 0.5
        elif k == "raw" and it in items:
            out[i] = 0.0
    return out


def subset_note(recs, m: pd.DataFrame, x) -> str:
    """How many LAMP instructions a model-backed row saw (finite ``x`` on :func:`mirrored`'s rows) of how many."""
    k, n = len(set(m["group"][np.isfinite(np.asarray(x, float))])), int(m["group"].nunique())
    if k >= n:
        return f"all {n} instructions"
    param = getattr(recs.cfg, "rethink_lamp_model_instructions", None)
    return (f"on {k} of {n} instructions, a seeded sample (rethink_lamp_model_instructions = {param}; "
            "0 scores all)")


def lamp_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Per LAMP comparison (:data:`LAMP_PAIRS`) and measure: does the measure prefer the version the writers'
    majority preferred (:func:`mirrored`, AUROC, resampled by instruction), beyond the same mirrored
    differences of length and format? The cheap measures on every item; perplexity and the pairwise novelty
    judge (:data:`JUDGE`; a flip between its two orders is a tie) on the items the run scored, the reason
    saying how many instructions that was. A judge that mostly prefers a position (a flip on at least
    :data:`~creval.measures.stats.verdicts.ORDER_COPY_SHARE` of its pairs) is *not testable here*. The mirrored rows
    are read against the constant rule "prefer the edit" (:data:`EDIT_RULE`, a baseline: it scores the share of
    edits the writers preferred), and each comparison has a second row conditioned on the version
    (:func:`conditioned`, :data:`LAMP_WHICH`). Each row states its claimant's claim
    (:func:`~creval.studies.card.claimant`)."""
    m = measures(recs, "lamp")
    if m.empty or "over_raw" not in m:
        return []
    sample = "" if labelled(recs, "lamp") else f"not real labels: {unlabelled_reason(recs, 'lamp')}"
    cols = {c: sign * m[c].astype(float).to_numpy() for c, (_, sign) in HUMAN_MEASURES.items() if c in m}
    models, judged = scored(m), lamp_judge(recs)
    names = {**{c: n for c, (n, _) in HUMAN_MEASURES.items()}, **{c: n for c, (n, _) in MODEL_MEASURES.items()},
             "judge": JUDGE}
    rule = (m["kind"] != "raw").astype(float).to_numpy()          # 1 on an edit, 0 on the raw paragraph
    rows = []
    for edit in LAMP_PAIRS:
        jv = judge_values(m, judged, edit)
        both = {**cols, **models, **({"judge": jv} if np.isfinite(jv).any() else {})}
        bases = {**surface(m["text"]), EDIT_RULE: rule}
        ceiling = writer_ceiling(m, edit)
        note = "; ".join(s for s in (sample, f"writers' own agreement (ceiling): two writers of one item prefer the "
                                             f"same version on {ceiling['pairwise']:.0%} of pairs") if s)
        for design, data, units in ((mirrored, LAMP_PAIRS[edit], "pair side"), (conditioned, LAMP_WHICH[edit], "item")):
            p = design(m, edit, {**both, **{f"base::{k}": v for k, v in bases.items()}})
            base = {k.split("::", 1)[1]: v for k, v in p["x"].items()
                    if k.startswith("base::") and len(v) and np.ptp(v) > 0}   # the rule is constant per item
            for c in both:
                scope = subset_note(recs, m[m["kind"] == edit], both[c][m["kind"] == edit]) if c not in cols else ""
                copies = None
                if c == "judge":
                    j = judged[judged["pair"] == edit]
                    copies = V.copies_order(means=j["pref"].astype(float))
                why = V.first_reason(sample or None, copies)
                r = C.graded(C.claimant(c), names[c], data, p["x"][c], base, p["y"], "auc", n_boot, seed,
                             cluster=p["cluster"], note="; ".join(t for t in (note, scope) if t), degenerate=why,
                             units=units, source=(RethinkingConfig.study, "lamp_judge" if c == "judge" else
                                                  "perplexity" if c in models else "measures_lamp",
                                                  {"set": "lamp"} if c in models else {}),
                             raters=RATERS["lamp"])     # the writers' pairwise agreement is no AUROC: in the note
                rows.append({**r, "reason": "; ".join(t for t in (r["reason"], scope) if t)} if scope else r)
    return rows


def confed_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each cheap measure against the Confederacy raters' mean Creativity and mean total (Spearman), beside
    length and format, within person and model stories (the author label as strata), resampled by author
    (the declared unit); the raters' agreement in the note as the ceiling. Lu et al.'s claim."""
    m = measures(recs, "confed")
    if m.empty or "total" not in m:
        return []
    sample = "" if labelled(recs, "confed") else f"not real labels: {unlabelled_reason(recs, 'confed')}"
    base, who, author = surface(m["text"]), m["kind"].astype(str).to_numpy(), m["group"].astype(str).to_numpy()
    rows = []
    for col, (item, data) in CONFED_ITEMS.items():
        rho = None
        try:
            rc = rater_ceiling(m, item)
            rho = float(rc["leave_one_out"])
            ceiling = (f"raters' agreement (ceiling): Spearman {rc['rho']:.2f} between the two raters, noise "
                       f"ceiling {rc['ceiling']:.2f} against their mean")
        except CrevalError as e:    # a table without two raters' columns: say so, grade anyway
            ceiling = f"no rater ceiling: {str(e).splitlines()[0]}"
        note = "; ".join(s for s in (sample, ceiling) if s)
        for c, (name, sign) in {**HUMAN_MEASURES, **MODEL_MEASURES}.items():
            if c in m and m[c].notna().sum() >= 2:
                model = c in MODEL_MEASURES
                k = int(m[c].notna().sum())
                scope = f"{k} of {len(m)} stories scored (rethink_confed_ppl_per_author)" if model and k < len(m) \
                    else ""
                r = C.graded(C.claimant(c), name, data, sign * m[c].astype(float), base, m[col].astype(float),
                             "spearman", n_boot, seed, author=who, cluster=author,
                             note="; ".join(t for t in (note, scope) if t), degenerate=sample or None,
                             units="story", source=(RethinkingConfig.study, "perplexity", {"set": "confed"})
                             if model else (RethinkingConfig.study, "measures_confed", {}), raters=RATERS["confed"],
                             ceiling=rho)
                rows.append({**r, "reason": "; ".join(t for t in (r["reason"], scope) if t)} if scope else r)
    return rows
