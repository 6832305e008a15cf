"""The report card's rows (chapter 08): the graded studies' records in, one row per (measure or judge, human
data) out. Each row states a paper's claim the paper's way (who claimed it, in which direction), tests the
measure against people with :func:`creval.measures.tracking.tracks_people` (the strongest of every trivial
baseline that applies, chosen inside each bootstrap replicate; the author label and a within-author check
where texts by people and by models are pooled; resampling by independent unit) and reads the claim off that
test: *supports the paper*, *contradicts the paper*, *inconclusive here* or *not testable here*
(docs/verdicts.md). :mod:`~creval.studies.reportcard.run` writes these rows and adjusts them across the card
(Holm); :mod:`~creval.studies.reportcard.report` only formats them.

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

from creval.measures import stats as S
from creval.measures import tracking as TR
from creval.measures.multiple import adjusted
from creval.measures.resample import boot_p, cluster_bootstrap
from creval.measures.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, Verdict, claim_verdict
from creval.studies.aut.report import human_values
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason

COLUMNS = ["paper", "claim", "measure", "human data", "statistic", "n", "units", "value", "lo", "hi", "baseline",
           "baseline value", "difference", "diff lo", "diff hi", "within", "tracking", "verdict", "borderline",
           "p", "adjusted", "reason", "paper figure", "note"]
CHANCE = {"AUROC": 0.5, "Spearman rho": 0.0}      # the statistic's chance level (accuracy: the majority baseline)
TAN, LU_R, RAB = "Tan et al. 2026", "Lu et al. 2025 (rethinking)", "Rabeyah et al. 2024"
CLAIMED = {TAN: "+", LU_R: "-", RAB: None}        # + the measure tracks people; - it fails to
CLAIM = {TAN: "Tan et al.: the judge agrees with people",
         LU_R: "Lu et al.: the measure fails to track what people judged creative beyond surface features",
         RAB: "none: Rabeyah et al. report no human ratings"}
NO_CLAIM = "Rabeyah et al. report no human ratings: nothing of theirs to support or contradict"
NAME = {"auc": "AUROC", "spearman": "Spearman rho"}
_LIST_LINE = re.compile(r"^\s*(?:[-*\u2022]|\(?\d+[.)]|step\s*\d+)", re.IGNORECASE)


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


def claim_word(tracking: str, claimed: str | None) -> str:
    """The paper's verdict from the tracking word: a paper that says the measure tracks people (``+``) is
    supported by *tracks people* and contradicted by *does not track people* or *tracks authorship only*; a
    paper that says it fails (``-``) the other way round."""
    if claimed is None or tracking == S.TESTABLE:
        return S.TESTABLE
    if tracking == INCONCLUSIVE:
        return INCONCLUSIVE
    tracks = tracking == TR.TRACKS
    return SUPPORTS if tracks == (claimed == "+") else CONTRADICTS


def format_baselines(texts) -> dict[str, np.ndarray]:
    """Surface features of each text a measure must beat: ``line count`` (non-empty lines) and ``list lines``
    (lines opening with a bullet, a number or "Step n")."""
    lines = [[s for s in str(t).splitlines() if s.strip()] for t in texts]
    return {"line count": np.array([len(x) for x in lines], float),
            "list lines": np.array([sum(bool(_LIST_LINE.match(s)) for s in x) for x in lines], float)}


def _within_text(r: dict) -> str:
    return "; ".join(f"{w['author']} {S.fmt_estimate(w['value'], w['lo'], w['hi'])} (n = {w['n']})"
                     for w in r.get("within") or [])


def graded(paper: str, measure: str, data: str, x, baselines: dict, y, stat: str, n_boot: int, seed: int, *,
           author=None, cluster=None, paper_figure: str = "", note: str = "", degenerate: str | None = None,
           units: str = "item") -> dict:
    """One card row: :func:`~creval.measures.tracking.tracks_people` of ``x`` against ``y`` beside every
    baseline in ``baselines`` (and ``author``'s label), resampled by ``cluster``; the paper's claim
    (:data:`CLAIMED`) read off its word (:func:`claim_word`). ``degenerate`` (or a constant ``x``) makes the
    row *not testable here* with that reason."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    why = S.first_reason(degenerate, S.constant(x[np.isfinite(x) & np.isfinite(y)], "score"))
    t = TR.tracks_people(x, y, stat=stat, baselines=baselines, author=author, cluster=cluster,
                         n_boot=0 if why else n_boot, seed=seed)      # an untestable row needs no resample
    track = S.TESTABLE if why else t["word"]
    word = claim_word(track, CLAIMED[paper])
    reason = why or (NO_CLAIM + f"; against people: {track}" if CLAIMED[paper] is None else t["reason"])
    return {"paper": paper, "claim": CLAIM[paper], "measure": measure, "human data": data, "statistic": NAME[stat],
            "n": t["n"], "units": t["n_units"], "value": t["value"], "lo": t.get("lo"), "hi": t.get("hi"),
            "baseline": t.get("baseline"), "baseline value": t.get("baseline value"),
            "difference": t.get("difference"), "diff lo": t.get("diff lo"), "diff hi": t.get("diff hi"),
            "within": _within_text(t), "tracking": track, "verdict": word,
            "borderline": bool(t["borderline"]) and not why, "p": t.get("p", math.nan), "reason": reason,
            "paper figure": paper_figure, "note": note}


# -- the studies graded -----------------------------------------------------------------------------------
RETHINK_SETS = (("ps", "MacGyver: unconventional vs conventional solutions", "label", "auc", False),
                ("solver", "MacGyver: crowd vs GPT-4 solutions (length-matched)", "label", "auc", False),
                ("ttcw", "TTCW: expert test passes (0-42)", "passes", "spearman", True),
                ("aut", "Ocsai-1: AUT originality ratings", "label", "spearman", False))
RETHINK_MEASURES = {"ci": ("creativity index", 1),
                    "ci_unmarked": ("creativity index, step markers stripped (formatting control)", 1),
                    "tpt": ("templates per token (negated)", -1), "ppl": ("perplexity", 1)}
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
    return {**out, **format_baselines(m["text"])}


def rethinking_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Creativity index, templates and perplexity against each labelled set of chapter 06, every surface
    baseline, the writer as the author label on TTCW; the crowd vs GPT-4 index is followed by its formatting
    control."""
    rows = []
    for ts, data, label, stat, by_writer in RETHINK_SETS:
        m = measures(recs, ts)
        if m.empty or label not in m:
            continue
        sample = "" if labelled(recs, ts) else f"not real labels: {unlabelled_reason(recs, ts)}"
        y, base = m[label].astype(float), rethinking_baselines(m)
        author = m["kind"].astype(str).to_numpy() if by_writer and "kind" in m else None
        for col, (name, sign) in RETHINK_MEASURES.items():
            if col == "ci_unmarked" and ts != "solver":
                continue
            if col in m and m[col].notna().sum() >= 2:
                rows.append(graded(LU_R, name, data, sign * m[col].astype(float), base, y, stat, n_boot, seed,
                                   author=author, cluster=m["group"].astype(str).to_numpy(),
                                   paper_figure=PAPER_FIGURES.get((ts, col), ""), note=sample,
                                   degenerate=sample or None, units="text"))
    return rows


FALLBACK = "log-prob fallback"


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
        return name, S.first_reason(sample, twice)
    order = S.copies_order(means=x["value"]) if mode.endswith("rank") else None
    return name, S.first_reason(sample, order)


def aut_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each AUT judge (scorer x mode) against the human ratings, beside every stored baseline scorer at once
    (the strongest chosen inside each replicate), resampled by object."""
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
        rows.append(graded(RAB, name, f"{d}: AUT originality", j["value"], {b: j[f"base {b}"] for b in names},
                           j["human"], "spearman", n_boot, seed, cluster=j["object"].astype(str).to_numpy()
                           if "object" in j else None, paper_figure="no human data in the paper",
                           note="bundled sample: our guesses, not ratings" if d.startswith("sample") else "",
                           degenerate=why))
    return rows


def convergent_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Each convergent judge's accuracy on the human yes/no labels (Wilson interval) against always answering
    the majority label, the lead resampled by pair (a pair's verdicts are one unit); a judge that gives one
    answer to every item is flagged as constant."""
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
        pair = g["pair_id"].astype(str).to_numpy() if "pair_id" in g else None
        d = cluster_bootstrap(lambda c, m: float(np.mean(c - m)), correct, majority, cluster=pair, n_boot=n_boot,
                              seed=seed)
        sample = line if "sample" in line.lower() else ""
        why = S.first_reason(sample or None, S.constant(pred.astype(float), "judge answer"))
        v_ = claim_verdict(d["value"], d["lo"], d["hi"], d["n_units"], claimed="+", degenerate=why,
                           mc=(d["mc_lo"], d["mc_hi"]), units="pair")
        track = {SUPPORTS: TR.TRACKS, CONTRADICTS: TR.NO_TRACK}.get(v_.word, v_.word)
        p = boot_p(d["values"], 0.0, 1 if v_.word == SUPPORTS else -1) if v_.word in (SUPPORTS, CONTRADICTS) \
            else math.nan
        rows.append({"paper": TAN, "claim": CLAIM[TAN], "measure": f"convergent judge {j}",
                     "human data": "human yes/no labels per criterion", "statistic": "accuracy (unparsed = wrong)",
                     "n": len(correct), "units": d["n_units"], "value": float(correct.mean()), "lo": acc[0],
                     "hi": acc[1], "baseline": "majority label", "baseline value": float(majority.mean()),
                     "difference": d["value"], "diff lo": d["lo"], "diff hi": d["hi"], "within": "",
                     "tracking": track, "verdict": v_.word, "borderline": v_.borderline, "p": p,
                     "reason": v_.reason, "paper figure": "0.847 (GPT-4o, Table 2)" if j == "retrieval" else "",
                     "note": sample})
    return rows


def validation_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """The pairwise novelty judge against AUT ratings (resampled by object) and MacGyver labels (by problem),
    semantic distance, length and format as baselines; a judge of whose items at least 90% average exactly
    0.5 under order swapping copies the order (not testable, the share shown)."""
    rows = []
    a = recs["aut_items"]
    if len(a) and "novelty_score" in a:
        sample = "bundled sample" if "source" in a and (a["source"] == "sample").all() else ""
        base = {"semantic distance": a["semdis"]}
        if "response" in a:
            base["length (words)"] = a["response"].astype(str).str.split().str.len().astype(float)
        rows.append(graded(TAN, "pairwise novelty judge", "Ocsai-1: AUT originality ratings", a["novelty_score"],
                           base, a["score"], "spearman", n_boot, seed,
                           cluster=a["prompt"].astype(str).to_numpy() if "prompt" in a else None, note=sample,
                           degenerate=S.first_reason(sample, S.copies_order(means=a["novelty_score"]))))
    m = recs["macgyver_items"]
    if len(m) and "novelty_score" in m:
        base = {"semantic distance": m["semdis"]}
        if "solution" in m:
            base = {**base, "length (words)": m["solution"].astype(str).str.split().str.len().astype(float),
                    **format_baselines(m["solution"])}
        rows.append(graded(TAN, "pairwise novelty judge", "MacGyver: unconventional vs conventional solutions",
                           m["novelty_score"], base, m["unconventional"].astype(float), "auc", n_boot, seed,
                           cluster=m["problem_id"].astype(str).to_numpy() if "problem_id" in m else None,
                           degenerate=S.copies_order(means=m["novelty_score"])))
    return rows


def with_adjusted(rows: list[dict]) -> list[dict]:
    """Each row with its verdict after Holm's correction across the card's tested claims (shown beside the raw
    verdict: a *supports* / *contradicts* whose adjusted p is not below 0.05 reads *inconclusive here*)."""
    tested = [i for i, r in enumerate(rows) if r["verdict"] in (SUPPORTS, CONTRADICTS, INCONCLUSIVE)]
    ps = [rows[i]["p"] if rows[i]["p"] is not None and math.isfinite(rows[i]["p"]) else 1.0 for i in tested]
    adj = adjusted([Verdict(rows[i]["verdict"]) for i in tested], ps)    # an inconclusive claim counts, p = 1
    out = [{**r, "adjusted": r["verdict"]} for r in rows]
    for i, v in zip(tested, adj):
        out[i]["adjusted"] = v.word
    return out


def card_rows(up: dict, n_boot: int = 2000, seed: int = 0) -> list[dict]:
    """Every card row from the graded studies' records (``up``: study name -> Records), Holm-adjusted."""
    rows = []
    for name, fn in (("convergent", convergent_rows), ("validation", validation_rows),
                     ("rethinking", rethinking_rows), ("aut", aut_rows)):
        if name in up:
            rows += fn(up[name], n_boot, seed)
    return [{k: r.get(k) for k in COLUMNS} for r in with_adjusted(rows)]
