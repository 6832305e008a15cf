"""Chapter 08, the report card, pure formatting: the card's records (``card``, ``sources``; the rows are
computed by :mod:`creval.studies.card` when the study runs) in, DataFrames (caption in
``df.attrs["caption"]``) and a Figure out, and the chapter's closing "What this shows"."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from creval.core.paths import home_relative
from creval.grade.forest import forest_figure
from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.measures.stats.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, WORDS
from creval.studies.card import (
    APART,
    AUTHORSHIP_Q,
    AUTHORSHIP_WORDS,
    BOOK,
    COLUMNS,
    CONTROL,
    LU_R,
    RAB,
    SOURCE,
    STEADINESS_Q,
    TAN,
    UNCLAIMED,
)
from creval.studies.links import address, anchor
from creval.studies.tables import captioned

COMPACT = ["measure · human data", "what it tracks", "value [95% interval]", "lead over the strongest baseline",
           "the paper said · here", "whose judgment", "why"]
SAID = {LU_R: "Lu et al.: it fails", TAN: "Tan et al.: it agrees with people", RAB: "Rabeyah et al.: no human data",
        BOOK: "no paper named it"}
HERE = {SUPPORTS: "it holds here", CONTRADICTS: "here: the opposite", INCONCLUSIVE: "here: can't tell",
        V.TESTABLE: "here: not testable", UNCLAIMED: "nothing to hold or contradict"}
HERE_LU = {SUPPORTS: "it fails here too", CONTRADICTS: "here it tracks people", INCONCLUSIVE: "here: can't tell",
           V.TESTABLE: "here: not testable", UNCLAIMED: "nothing to hold or contradict"}
UNSTEADY = "Lu et al.: a judge is unstable under rewording"
ENOUGH = V.ENOUGH


def source_of(r: dict) -> tuple[str, str, dict] | None:
    """The study, table and filters of the records a card row was computed from (what its n counts), as the
    study's grading wrote them (``source_*``); None where the row names none (a card written before it did)."""
    study, table, filters = (r.get(k) for k in SOURCE)
    if not (isinstance(study, str) and isinstance(table, str)):
        return None
    return study, table, dict(filters) if isinstance(filters, dict) else {}


def _n_linked(r: dict) -> str:
    """"n = …" with n linked to the rows it counts in its study's browser (plain where the source is unknown)."""
    where = source_of(r)
    return f"n = {anchor(r['n'], *where) if where and r.get('n') else r.get('n')}"


# -- what the chapter shows -------------------------------------------------------------------------------
def card_frame(recs) -> pd.DataFrame:
    """The card's rows (a card written before claims were stated the papers' way has no ``claim`` column: its
    rows are shown as they are, its run id differs from today's)."""
    return recs["card"]


def _verdict_text(r: dict) -> str:
    """The verdict as the card shows it: the word, "borderline" where a Monte-Carlo margin could flip it, and
    Holm's adjusted word beside it where the correction changes it or could under another seed (marked)."""
    word = f"{r['verdict']}, borderline" if r.get("borderline") else str(r["verdict"])
    adj, raw_near = r.get("adjusted"), bool(r.get("borderline"))
    holm_near = r.get("adjusted borderline") is True            # only Holm's word could flip: shown even if equal
    if not (adj and isinstance(adj, str)) or (adj == r["verdict"] and (raw_near or not holm_near)):
        return word
    return f"{word} (after Holm: {adj}{', borderline' if raw_near or holm_near else ''})"


def against_baseline(r: dict) -> str:
    """The baseline column: the strongest trivial baseline's value and the measure's lead over it."""
    base = r.get("baseline") if isinstance(r.get("baseline"), str) else ""     # none read back from JSON is NaN
    if not base or pd.isna(r.get("baseline value")):
        return base
    return (f"{r['baseline']}: {num.fmt_number(r['baseline value'])}; lead "
            f"{num.fmt_estimate(r['difference'], r['diff lo'], r['diff hi'])}")


def tracked(r: dict) -> str:
    """What the row's measure tracks, as a reader reads it: the rule's word (a *no better than* naming its
    baseline; a row whose label is only who wrote the text in that vocabulary), with its borderline mark."""
    word = str(r.get("tracking") or "")      # the card stores the word as the page shows it (issue 66)
    shown = AUTHORSHIP_WORDS.get(word, word) if r.get("question") in (AUTHORSHIP_Q, CONTROL) else \
        TR.word_label({"word": word, "beaten by": r.get("beaten by")})
    return f"{shown}, borderline" if r.get("borderline") else shown


def said_here(r: dict) -> str:
    """The paper's claim and this build's answer to it in plain words, no double negative ("Lu et al.: it
    fails · it fails here too"); Holm's word beside it where the correction changes it or could."""
    by_author, steady = r.get("question") in (AUTHORSHIP_Q, CONTROL), r.get("question") == STEADINESS_Q
    paper, verdict = str(r.get("paper") or ""), str(r.get("verdict") or V.TESTABLE)
    said = str(r.get("claim") or "") if by_author else UNSTEADY if steady else SAID.get(paper, paper)
    words = HERE if by_author or steady or paper != LU_R else HERE_LU
    here = words.get(verdict, verdict)
    text = f"{said} · {here}"
    adj = r.get("adjusted")
    if isinstance(adj, str) and (adj != verdict or r.get("adjusted borderline") is True) and \
            verdict in (SUPPORTS, CONTRADICTS):
        text += f" (after Holm: {words.get(adj, adj)}{', borderline' if r.get('adjusted borderline') else ''})"
    return text


def whose(r: dict) -> str:
    """Whose judgment the row rests on (issue 63): its raters and their kind, with their own agreement where the
    card knows it ("3 raters per text, 22 in all (crowd); one against the others 0.39")."""
    who = r.get("raters") if isinstance(r.get("raters"), str) else ""
    c = r.get("ceiling")
    if who and isinstance(c, (int, float)) and c == c:
        who += f"; one against the others {c:.2f}"
    return who or "not named"


def _short(reason: str) -> str:
    return str(reason or "").split(";")[0]


def table_card(recs) -> pd.DataFrame:
    """The compact card, the one a reader reads, testable rows only (:func:`table_untestable` lists the rest):
    what the measure tracks first, then its value with interval and n, its lead over the strongest baseline,
    the paper's claim and this build's answer to it, and the first clause of the reason."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=COMPACT), "Nothing to grade: no study found human data.")
    c = c[c["tracking"] != V.TESTABLE]
    rows = [{"measure · human data": f"{r['measure']} · {r['human data']}", "what it tracks": tracked(r),
             "value [95% interval]": (f"{r['statistic']} {num.fmt_estimate(r['value'], r['lo'], r['hi'])}, "
                                      f"{_n_linked(r)}"
                                      if pd.notna(r["value"]) else f"{r['statistic']}: not computable, {_n_linked(r)}"),
             "lead over the strongest baseline": against_baseline(r), "the paper said · here": said_here(r),
             "whose judgment": whose(r), "why": _short(r["reason"])}
            for r in c.to_dict("records")]
    return captioned(pd.DataFrame(rows, columns=COMPACT),
                     "The report card, rows that could be tested. What it tracks: the rule's word (docs/verdicts.md) "
                     "from the intervals: tracks people (above chance and ahead of every trivial baseline, within "
                     "authors too), no better than a named baseline, tracks authorship only, does not track people "
                     "(its interval rules out agreement worth the name), inconclusive. Value: the statistic against "
                     "people, resampled by each dataset's declared unit. The paper said · here: the claim as its "
                     "paper made it and this build's answer.")


KINDS = (("expert", "experts"), ("lay", "lay readers"), ("crowd", "crowd workers"))


def rater_kind(raters) -> str:
    """The kind of people a row's judgment rests on, read from its ``raters`` words: experts, lay readers, crowd
    workers, or "" where the row does not say."""
    t = str(raters or "").lower()
    return next((name for key, name in KINDS if key in t), "")


def table_kinds(recs) -> pd.DataFrame:
    """Experts against lay readers and crowd workers (issue 63): for each measure read on sets rated by experts and
    on sets rated by lay or crowd raters, what it tracks on each, and whether the two kinds of people disagree (it
    tracks one kind's judgment and does not track, or is no better than a baseline on, the other's). No set
    has both kinds, so each side is other texts as well as other people: a disagreement is a lead, not a proof."""
    cols = ["measure", "experts' sets", "lay readers' and crowd workers' sets", "the two kinds disagree"]
    c = card_frame(recs)
    if c.empty or "raters" not in c:
        return captioned(pd.DataFrame(columns=cols), "No row names its raters.")
    c = c[(c["tracking"] != V.TESTABLE) & ~c.get("question", pd.Series("", index=c.index)).isin(APART)]
    c = c.assign(kind=c["raters"].map(rater_kind), word=c["tracking"].map(TR.rule_word))
    rows = []
    for measure, g in c.groupby("measure", sort=False):
        expert, other = g[g["kind"] == "experts"], g[g["kind"].isin(["lay readers", "crowd workers"])]
        if expert.empty or other.empty:
            continue
        said = {k: set(x["word"]) for k, x in (("e", expert), ("o", other))}
        against = {TR.NO_TRACK, TR.NO_BETTER}
        split = (TR.TRACKS in said["e"] and said["o"] & against) or (TR.TRACKS in said["o"] and said["e"] & against)
        rows.append({"measure": measure,
                     "experts' sets": "; ".join(f"{w} on {h}" for w, h in zip(expert["word"], expert["human data"])),
                     "lay readers' and crowd workers' sets": "; ".join(f"{w} on {h}" for w, h in
                                                                       zip(other["word"], other["human data"])),
                     "the two kinds disagree": "yes" if split else "no"})
    return captioned(pd.DataFrame(rows, columns=cols),
                     "Each measure read on sets rated by experts (TTCW, LAMP, Confederacy) and on sets rated by lay "
                     "readers or crowd workers (HANNA, the SLM synopses, MacGyver), by the card's rule. They disagree "
                     "where the measure tracks one kind's judgment and does not track, or is no better than a "
                     "baseline on, the other's. No set was rated by both kinds, so the texts differ too.")


def table_untestable(recs) -> pd.DataFrame:
    """The rows that could not be tested, each with why (too few units, sample data, a degenerate judge)."""
    c = card_frame(recs)
    cols = ["measure · human data", "paper", "n", "why not testable"]
    if c.empty:
        return captioned(pd.DataFrame(columns=cols), "No rows.")
    c = c[c["tracking"] == V.TESTABLE]
    return captioned(pd.DataFrame([{"measure · human data": f"{r['measure']} · {r['human data']}",
                                    "paper": r["paper"], "n": _n_linked(r), "why not testable": r["reason"]}
                                   for r in c.to_dict("records")], columns=cols),
                     f"Not testable here: {len(c)} rows, each with what it lacks.")


def summary(recs) -> str:
    """One sentence of what the card found: how many rows could be tested and what their measures track."""
    c = card_frame(recs)
    if c.empty:
        return "No study offered a check against people."
    tested = c[c["tracking"] != V.TESTABLE]
    judged = tested[~tested["question"].isin(APART)] if "question" in tested else tested
    parts = []
    rule = judged["tracking"].map(TR.rule_word)
    for w in (TR.TRACKS, TR.AUTHORSHIP, TR.NO_BETTER, TR.NO_TRACK, INCONCLUSIVE):
        k = int((rule == w).sum())
        if k:
            parts.append(f"{k} {w}")
    who = (", ".join(f"{r['measure']} on {r['human data']}" for r in judged[judged["tracking"] == TR.TRACKS]
                     .to_dict("records")))
    text = (f"Of {len(c)} checks, {len(tested)} could be tested here; against people's judgments: "
            + ("; ".join(parts) if parts else "none") + ".")
    if who:
        text += f" Tracks people: {who}."
    auth = tested[tested["question"] == AUTHORSHIP_Q] if "question" in tested else tested.iloc[0:0]
    if len(auth):
        text += (" Apart from these, " + "; ".join(f"{r['measure']} on {r['human data']}: {tracked(r)}"
                                                   for r in auth.to_dict("records"))
                 + " (a label that is only who wrote the text, not a judgment).")
    steady = tested[tested["question"] == STEADINESS_Q] if "question" in tested else tested.iloc[0:0]
    if len(steady):
        counts = steady["tracking"].value_counts()
        text += (f" Under rewording ({len(steady)} judge and criterion rows, against the people's flips between "
                 "raters): " + "; ".join(f"{k} {w}" for w, k in counts.items()) + ".")
    return text


def table_card_full(recs) -> pd.DataFrame:
    """Every column of the card (for the folded block below the compact one)."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=COLUMNS), "No rows.")
    return captioned(c[[k for k in COLUMNS if k in c]], "The full card: the claim, independent units, the lead "
                     "over the strongest baseline with its 95% paired cluster-bootstrap interval, the statistic "
                     "within each author's texts, what the measure tracks, the one-sided p of the deciding test "
                     "and the verdict after Holm's correction.")


def table_verdicts(recs) -> pd.DataFrame:
    """Per paper and question (people's judgment, or who wrote the text: tallied apart): how many rows support
    its claim, contradict it, are inconclusive or not testable, raw and after Holm's correction across the
    card."""
    c = card_frame(recs)
    if c.empty or "claim" not in c:
        return captioned(pd.DataFrame(), "No rows.")
    if "question" not in c:
        c = c.assign(question="people's judgment")
    rows = []
    for (paper, q), g in c.groupby(["paper", "question"], sort=False):
        row = {"paper": paper, "question": q, "claim": g["claim"].iloc[0]}
        row.update({w: int((g["verdict"] == w).sum()) for w in (*WORDS, UNCLAIMED)})
        row.update({f"after Holm: {w}": int((g["adjusted"] == w).sum()) for w in (SUPPORTS, CONTRADICTS)})
        row["borderline"] = int(g["borderline"].fillna(False).astype(bool).sum())
        rows.append(row)
    return captioned(pd.DataFrame(rows), "Per paper: rows that support or contradict what the paper claimed, "
                                         "claims about people's judgment apart from those about who wrote the "
                                         "text (a paper without human data has nothing to support or contradict).")


def table_sources(recs) -> pd.DataFrame:
    t = recs["sources"].copy()
    root = getattr(getattr(recs, "cfg", None), "run_root", "")      # the records name folders under the run root
    if "run_dir" in t:
        t["run_dir"] = [home_relative(d if Path(d).is_absolute() or not root else str(Path(root) / d))
                        for d in t["run_dir"]]
    return captioned(t, "The run folders the card read (relative to the data home), and whether each study had "
                        "the real data.")


def fig_card(recs) -> go.Figure:
    """The forest plot of the card's tested rows (:func:`creval.grade.forest.forest_figure`, the plot
    ``creval grade`` draws): agreement above chance and the lead over the strongest baseline, each with its
    interval, coloured by what the measure tracks, open where borderline."""
    c = card_frame(recs)
    if not c.empty and "question" in c:
        c = c[c["question"] != STEADINESS_Q]          # flips, not agreement: chapter 07c draws them
    rows = [{**r, "word": TR.rule_word(r["tracking"])} for r in c.to_dict("records")] if not c.empty else []
    return forest_figure(rows, "What each measure tracks: agreement with people and lead over the strongest "
                               "trivial baseline", label=lambda r: f"{r['measure']} · {r['human data']}",
                         link=lambda r: address(*source_of(r)) if source_of(r) else None)


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows", from the card's verdicts: per word, which rows (and whose claim) it
    applies to, with the lead over the strongest baseline or, for the untestable, why; borderline rows and
    rows Holm's correction changes are listed last."""
    c = card_frame(recs)
    if c.empty or "claim" not in c:
        return captioned(pd.DataFrame(columns=["verdict", "rows", "which"]), "What this shows: no rows to read.")
    c = c.assign(_name=[f"{m} · {d} ({p})" for m, d, p in zip(c["measure"], c["human data"], c["paper"])])
    groups = [(w, c["verdict"] == w, "reason" if w == V.TESTABLE else "difference") for w in WORDS]
    groups += [(f"{UNCLAIMED} (what the measure tracks: the book's own question, or a paper without human data)",
                c["verdict"] == UNCLAIMED, "tracking")]
    groups += [("borderline: a Monte-Carlo margin could flip it", c["borderline"].fillna(False).astype(bool),
                "difference"),
               ("changed by Holm's correction across the card", c["adjusted"] != c["verdict"], "difference")]
    def said(r: dict, col: str) -> str:          # the lead linked to the rows it was computed from, or why not
        where = source_of(r)
        lead = num.fmt_number(r["difference"], 2)
        return r[col] if col != "difference" else anchor(lead, *where) if where and lead != "–" else lead
    rows = [{"verdict": name, "rows": int(mask.sum()),
             "which": "; ".join(f"{r['_name']} ({said(r, col)})" for r in c[mask].to_dict("records"))}
            for name, mask, col in groups]
    return captioned(pd.DataFrame(rows), "What this shows: each card row by its verdict on the paper's claim (in "
                                          "brackets: the lead over the strongest baseline, or why the row cannot "
                                          "test its claim)")
