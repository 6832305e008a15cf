"""Chapter 08, the report card, pure formatting: the card's records (``card``, ``sources``; the rows are
computed by :mod:`creval.studies.reportcard.card` when the study runs) in, DataFrames (caption in
``df.attrs["caption"]``) and a Figure out, and the chapter's closing "What this shows"."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from creval.core.paths import home
from creval.measures import stats as S
from creval.measures.verdicts import CONTRADICTS, SUPPORTS, WORDS
from creval.studies.links import anchor
from creval.studies.reportcard.card import COLUMNS, SOURCE
from creval.studies.tables import captioned

COMPACT = ["paper", "measure", "human data", "value [95% interval]", "baseline", "verdict", "reason"]
ENOUGH = S.ENOUGH


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
    if r.get("baseline") is None or pd.isna(r.get("baseline value")):
        return str(r.get("baseline") or "")
    return (f"{r['baseline']}: {S.fmt_number(r['baseline value'])}; lead "
            f"{S.fmt_estimate(r['difference'], r['diff lo'], r['diff hi'])}")


def table_card(recs) -> pd.DataFrame:
    """The compact card, the one a reader reads: whose claim, measure, human data, the value with its interval
    and n, the strongest baseline with the lead over it, the verdict on the paper's claim and its reason."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=COMPACT), "Nothing to grade: no study found human data.")
    rows = [{"paper": r["paper"], "measure": r["measure"], "human data": r["human data"],
             "value [95% interval]": (f"{r['statistic']} {S.fmt_estimate(r['value'], r['lo'], r['hi'])}, {_n_linked(r)}"
                                      if pd.notna(r["value"]) else f"{r['statistic']}: not computable, {_n_linked(r)}"),
             "baseline": against_baseline(r), "verdict": _verdict_text(r), "reason": r["reason"]}
            for r in c.to_dict("records")]
    return captioned(pd.DataFrame(rows, columns=COMPACT),
                     "The report card. Each row tests a paper's claim: Tan et al. say their judges agree with "
                     "people; Lu et al. say these measures fail to track what people judge creative (so a measure "
                     "that fails supports them); Rabeyah et al. report no human ratings. Value: the statistic "
                     "against people with its 95% interval, resampled by independent unit; baseline: the strongest "
                     "of every trivial baseline (length as stored and as cut, step markers, line count, list "
                     "lines, the author label), chosen inside each resample, and the measure's lead over it. "
                     "Verdict (docs/verdicts.md): read off the intervals, never a point; borderline where a "
                     "Monte-Carlo margin could flip it; Holm's correction across the card beside it; not "
                     f"testable here on fewer than {ENOUGH} items or degenerate data.")


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
    """Per paper: how many rows support its claim, contradict it, are inconclusive or not testable, raw and
    after Holm's correction across the card."""
    c = card_frame(recs)
    if c.empty or "claim" not in c:
        return captioned(pd.DataFrame(), "No rows.")
    rows = []
    for paper, g in c.groupby("paper", sort=False):
        row = {"paper": paper, "claim": g["claim"].iloc[0]}
        row.update({w: int((g["verdict"] == w).sum()) for w in WORDS})
        row.update({f"after Holm: {w}": int((g["adjusted"] == w).sum()) for w in (SUPPORTS, CONTRADICTS)})
        row["borderline"] = int(g["borderline"].fillna(False).astype(bool).sum())
        rows.append(row)
    return captioned(pd.DataFrame(rows), "Per paper: rows that support or contradict what the paper claimed "
                                         "(a paper without human data has nothing to support or contradict).")


def home_relative(path: str) -> str:
    """``path`` relative to the data home (``CREVAL_HOME``) when it lies inside it: pages show no machine's
    absolute paths."""
    try:
        return str(Path(path).resolve().relative_to(home().resolve()))
    except ValueError:
        return str(path)


def table_sources(recs) -> pd.DataFrame:
    t = recs["sources"].copy()
    root = getattr(getattr(recs, "cfg", None), "run_root", "")      # the records name folders under the run root
    if "run_dir" in t:
        t["run_dir"] = [home_relative(d if Path(d).is_absolute() or not root else str(Path(root) / d))
                        for d in t["run_dir"]]
    return captioned(t, "The run folders the card read (relative to the data home), and whether each study had "
                        "the real data.")


def fig_card(recs) -> go.Figure:
    """Forest plot: each row's statistic with its interval, and the strongest baseline on the same items."""
    c = card_frame(recs)
    fig = go.Figure()
    if c.empty:
        return fig.update_layout(title="No rows")
    labels = [f"{m} · {d}" for m, d in zip(c["measure"], c["human data"])]
    err = dict(type="data", symmetric=False, array=(c["hi"] - c["value"]).fillna(0),
               arrayminus=(c["value"] - c["lo"]).fillna(0))
    hover = [f"{lab}<br>{r['statistic']} {S.fmt_estimate(r['value'], r['lo'], r['hi'], 3)}, n={r['n']}<br>"
             f"baseline {r['baseline']}: {S.fmt_number(r['baseline value'], 3)}<br>{_verdict_text(r)}"
             for lab, r in zip(labels, c.to_dict("records"))]
    fig.add_trace(go.Scatter(x=c["value"], y=labels, mode="markers", error_x=err, name="measure or judge",
                             hovertext=hover, hoverinfo="text", marker=dict(size=9)))
    fig.add_trace(go.Scatter(x=c["baseline value"], y=labels, mode="markers", name="strongest baseline, same items",
                             marker=dict(symbol="x", size=9)))
    fig.update_layout(title="Each measure against people, beside its strongest trivial baseline",
                      height=160 + 28 * len(c), xaxis_title="statistic (AUROC: 0.5 = chance; rho and accuracy as "
                      "they are)", yaxis=dict(autorange="reversed"), margin=dict(l=20))
    return fig


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows", from the card's verdicts: per word, which rows (and whose claim) it
    applies to, with the lead over the strongest baseline or, for the untestable, why; borderline rows and
    rows Holm's correction changes are listed last."""
    c = card_frame(recs)
    if c.empty or "claim" not in c:
        return captioned(pd.DataFrame(columns=["verdict", "rows", "which"]), "What this shows: no rows to read.")
    c = c.assign(_name=[f"{m} · {d} ({p})" for m, d, p in zip(c["measure"], c["human data"], c["paper"])])
    groups = [(w, c["verdict"] == w, "reason" if w == S.TESTABLE else "difference") for w in WORDS]
    groups += [("borderline: a Monte-Carlo margin could flip it", c["borderline"].fillna(False).astype(bool),
                "difference"),
               ("changed by Holm's correction across the card", c["adjusted"] != c["verdict"], "difference")]
    def said(r: dict, col: str) -> str:          # the lead linked to the rows it was computed from, or why not
        where = source_of(r)
        lead = S.fmt_number(r["difference"], 2)
        return r[col] if col != "difference" else anchor(lead, *where) if where and lead != "–" else lead
    rows = [{"verdict": name, "rows": int(mask.sum()),
             "which": "; ".join(f"{r['_name']} ({said(r, col)})" for r in c[mask].to_dict("records"))}
            for name, mask, col in groups]
    return captioned(pd.DataFrame(rows), "What this shows: each card row by its verdict on the paper's claim (in "
                                          "brackets: the lead over the strongest baseline, or why the row cannot "
                                          "test its claim)")
