"""The report card's rows (chapter 08): the graded studies' records in, one row per (measure or judge, human
data) out. Each row: the statistic against people with its 95% bootstrap interval, the strongest trivial
baseline on the same items, their paired difference with its interval, and a verdict read off that interval.
:mod:`~creval.studies.reportcard.run` writes these rows; :mod:`~creval.studies.reportcard.report` only
formats them.

Statistics are oriented so that higher = agrees with people (a measure expected to fall with creativity,
such as templates per token, is negated). Baselines: response length in words (rethinking, AUT), semantic
distance between prompt and response (AUT, validation), the majority label (the convergent judges). A
baseline enters in its better orientation (both signs are computed on the same items and the stronger one is
kept): on TTCW, say, longer stories get fewer expert passes, so the baseline is length negated, and the
``baseline orientation`` column says so.
"""
from __future__ import annotations

import numpy as np

from creval.measures import stats as S
from creval.studies.aut.report import human_values
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason

COLUMNS = ["paper", "measure", "human data", "statistic", "n", "value", "lo", "hi", "baseline",
           "baseline orientation", "baseline value", "difference", "diff lo", "diff hi", "vs baseline", "verdict",
           "reason", "paper figure", "note"]
VERDICTS = {"better": "beats baseline", "indistinguishable": "indistinguishable", "worse": "worse than baseline",
            "n/a": "no interval"}
CHANCE = {"AUROC": 0.5, "Spearman rho": 0.0}      # the statistic's chance level (accuracy: the majority baseline)
TAN, LU_R, RAB = "Tan et al. 2026", "Lu et al. 2025 (rethinking)", "Rabeyah et al. 2024"
AS_IS, FLIPPED = "as is", "flipped (the other sign agrees better)"


def statistic(stat: str, x, y) -> float:
    """AUROC (``stat="auc"``, y a 0/1 label) or Spearman rho (``"spearman"``) of scores ``x`` against ``y``."""
    return S.auc(y, x)["auc"] if stat == "auc" else S.spearman(x, y)["rho"]


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


def card_verdict(row: dict, degenerate: str | None = None) -> S.Verdict:
    """The row's verdict by the one rule (:func:`creval.measures.stats.decide`) on the claim "this measure
    captures something people call creative": ``ok`` when it beats its strongest trivial baseline on the same
    items (the paired difference's interval above 0) *and* its own interval lies above chance (AUROC 0.5, rho 0);
    not testable when the data is degenerate (``degenerate``: bundled sample data, a constant score, a judge
    that copies the order, a measurement counted on another row), when no interval could be given, or on fewer
    than :data:`~creval.measures.stats.ENOUGH` items."""
    vs = row["vs baseline"]
    ok = None if vs == VERDICTS["n/a"] else vs == VERDICTS["better"]
    chance = CHANCE.get(row["statistic"])
    if ok and chance is not None:
        ok = S.agrees(row["value"], row["lo"], row["hi"], "+", null=chance)
    return S.decide(ok, int(row["n"]), degenerate=degenerate,
                    unknown=row.get("note") or "the difference from the baseline has no interval")


def with_verdict(row: dict, degenerate: str | None = None) -> dict:
    """``row`` with its ``verdict`` (the word) and ``reason`` (:func:`card_verdict`)."""
    v = card_verdict(row, degenerate)
    return {**row, "verdict": v.word, "reason": v.reason}


def graded(paper: str, measure: str, data: str, x, base, y, baseline: str, stat: str, n_boot: int, seed: int,
           paper_figure: str = "", note: str = "", degenerate: str | None = None) -> dict:
    """One card row: ``stat`` (``spearman`` or ``auc``) of ``x`` against ``y`` with its CI, the same for the
    baseline ``base`` on the same items in its better orientation (:func:`oriented`), the paired
    difference, and the verdict (:func:`card_verdict`; a constant ``x`` is degenerate on its own)."""
    x, base, y = (np.asarray(v, float) for v in (x, base, y))
    keep = np.isfinite(x) & np.isfinite(y)
    if stat == "auc":
        r = S.auc_ci(y[keep], x[keep], n_boot=n_boot, seed=seed)
        val, name = r["auc"], "AUROC"
    else:
        r = S.spearman_ci(x[keep], y[keep], n_boot=n_boot, seed=seed)
        val, name = r["rho"], "Spearman rho"
    sign, b = oriented(base[keep], y[keep], stat)
    d = S.paired_diff_ci(x, sign * base, y, n_boot=n_boot, seed=seed, stat=stat)
    row = {"paper": paper, "measure": measure, "human data": data, "statistic": name, "n": int(keep.sum()),
           "value": val, "lo": r["lo"], "hi": r["hi"], "baseline": baseline if sign > 0 else f"{baseline}, negated",
           "baseline orientation": AS_IS if sign > 0 else FLIPPED, "baseline value": b,
           "difference": d["diff"], "diff lo": d["lo"], "diff hi": d["hi"], "vs baseline": VERDICTS[d["verdict"]],
           "paper figure": paper_figure,
           "note": "; ".join(dict.fromkeys(t for t in (note, r.get("note", ""), d["note"]) if t))}
    return with_verdict(row, S.first_reason(degenerate, S.constant(x[keep], "score")))


# -- the studies graded -----------------------------------------------------------------------------------
RETHINK_SETS = (("ps", "MacGyver: unconventional vs conventional solutions", "label", "auc"),
                ("solver", "MacGyver: crowd vs GPT-4 solutions (length-matched)", "label", "auc"),
                ("ttcw", "TTCW: expert test passes (0-42)", "passes", "spearman"),
                ("aut", "Ocsai-1: AUT originality ratings", "label", "spearman"))
RETHINK_MEASURES = {"ci": ("creativity index", 1),
                    "ci_unmarked": ("creativity index, step markers stripped (formatting control)", 1),
                    "tpt": ("templates per token (negated)", -1), "ppl": ("perplexity", 1)}
PAPER_FIGURES = {("ps", "ci"): "CI 0.76 vs 0.75 (means; Table 2)", ("ps", "tpt"): "template rate 38.7% vs 31.9%",
                 ("ps", "ppl"): "PPL 13.98 vs 14.11"}


def rethinking_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Creativity index, templates and perplexity against each labelled set of chapter 06, length as the
    baseline; the crowd vs GPT-4 creativity index is followed by its formatting control."""
    rows = []
    for ts, data, label, stat in RETHINK_SETS:
        m = measures(recs, ts)
        if m.empty or label not in m:
            continue
        sample = "" if labelled(recs, ts) else f"not real labels: {unlabelled_reason(recs, ts)}"
        y = m[label].astype(float)
        for col, (name, sign) in RETHINK_MEASURES.items():
            if col == "ci_unmarked" and ts != "solver":
                continue
            if col in m and m[col].notna().sum() >= 2:
                rows.append(graded(LU_R, name, data, sign * m[col].astype(float), m["n_words"].astype(float), y,
                                   "length (words)", stat, n_boot, seed, PAPER_FIGURES.get((ts, col), ""), sample,
                                   degenerate=sample or None))
    return rows


FALLBACK = "log-prob fallback"


def from_fallback(x) -> bool:
    """Whether every value of a list setting (segmented score or rank) came from the log-prob fallback: the
    one-response prompt of the pointwise setting, read from ``human_values``' ``logprobs`` share."""
    return "logprobs" in x and len(x) > 0 and bool((x["logprobs"].astype(float) == 1.0).all())


def aut_degenerate(d: str, s: str, mode: str, x, pointwise: bool) -> tuple[str, str | None]:
    """The measure's name on the card and why the row cannot test its judge: bundled sample ratings, a judge
    that copies the order it was shown (a ranking shown forward and reversed averages exactly 0.5 per item),
    or a list setting measured entirely by the log-prob fallback (shown as the fallback; counted once, on the
    pointwise row, where there is one)."""
    name = f"LLM judge {s} ({mode})"
    sample = "bundled sample: our guesses, not ratings" if d.startswith("sample") else None
    if mode != "pointwise" and from_fallback(x):
        name = f"LLM judge {s} ({mode} = the {FALLBACK})"
        twice = ("the same measurement as the pointwise row (every value from the log-prob fallback): counted "
                 "there") if pointwise else None
        return name, S.first_reason(sample, twice)
    order = S.copies_order(means=x["value"]) if mode.endswith("rank") else None
    return name, S.first_reason(sample, order)


def aut_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each AUT judge (scorer x mode) against the human ratings, beside its strongest baseline."""
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
        best = None
        for b, bx in base[base["dataset"] == d].groupby("scorer"):
            j = x.merge(bx[["item_id", "value"]], on="item_id", suffixes=("", "_b"))
            row = graded(RAB, name, f"{d}: AUT originality", j["value"], j["value_b"], j["human"],
                         b, "spearman", n_boot, seed, "no human data in the paper",
                         "bundled sample: our guesses, not ratings" if d.startswith("sample") else "", degenerate=why)
            if best is None or (np.nan_to_num(row["baseline value"], nan=-9) >
                                np.nan_to_num(best["baseline value"], nan=-9)):
                best = row
        if best is not None:
            rows.append(best)
    return rows


def convergent_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each convergent judge's accuracy on the human yes/no labels against always answering the majority."""
    v = recs["human_verdicts"]
    if v.empty:
        return []
    src = recs["labels_source"]                  # where the human labels came from (one line)
    line = str(src["line"].iloc[0]) if len(src) else ""
    rows = []
    for j, g in v.groupby("judge", sort=False):
        label = g["label"].astype(bool).to_numpy()
        parsed = ~(g["unparsed"].astype(bool).to_numpy() | g["verdict"].isna().to_numpy())
        pred = np.where(parsed, g["verdict"].fillna(False).astype(bool).to_numpy(), ~label)   # unparsed counts as wrong
        correct = (pred == label).astype(float)
        majority = (label == (label.mean() >= 0.5)).astype(float)
        acc = S.wilson(int(correct.sum()), len(correct))          # a proportion: Wilson, honest at 0 and 1
        d = S.paired_mean_diff_ci(correct, majority, n_boot=n_boot, seed=seed)
        sample = line if "sample" in line.lower() else ""
        rows.append(with_verdict({
            "paper": TAN, "measure": f"convergent judge {j}", "human data": "human yes/no labels per criterion",
            "statistic": "accuracy (unparsed = wrong)", "n": len(correct), "value": float(correct.mean()),
            "lo": acc[0], "hi": acc[1], "baseline": "majority label", "baseline orientation": AS_IS,
            "baseline value": float(majority.mean()), "difference": d["diff"], "diff lo": d["lo"],
            "diff hi": d["hi"], "vs baseline": VERDICTS[d["verdict"]],
            "paper figure": "0.847 (GPT-4o, Table 2)" if j == "retrieval" else "",
            "note": "; ".join(t for t in (sample, d["note"]) if t)}, sample or None))
    return rows


def validation_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """The pairwise novelty judge against AUT ratings and MacGyver labels, semantic distance as the baseline; a
    judge whose every item averages exactly 0.5 under order swapping copies the order (not testable)."""
    rows = []
    a = recs["aut_items"]
    if len(a) and "novelty_score" in a:
        sample = "bundled sample" if "source" in a and (a["source"] == "sample").all() else ""
        rows.append(graded(TAN, "pairwise novelty judge", "Ocsai-1: AUT originality ratings", a["novelty_score"],
                           a["semdis"], a["score"], "semantic distance", "spearman", n_boot, seed, "", sample,
                           degenerate=S.first_reason(sample, S.copies_order(means=a["novelty_score"]))))
    m = recs["macgyver_items"]
    if len(m) and "novelty_score" in m:
        rows.append(graded(TAN, "pairwise novelty judge", "MacGyver: unconventional vs conventional solutions",
                           m["novelty_score"], m["semdis"], m["unconventional"].astype(float), "semantic distance",
                           "auc", n_boot, seed, degenerate=S.copies_order(means=m["novelty_score"])))
    return rows


def card_rows(up: dict, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Every card row from the graded studies' records (``up``: study name -> Records)."""
    rows = []
    for name, fn in (("convergent", convergent_rows), ("validation", validation_rows),
                     ("rethinking", rethinking_rows), ("aut", aut_rows)):
        if name in up:
            rows += fn(up[name], n_boot, seed)
    return [{k: r.get(k) for k in COLUMNS} for r in rows]
