"""Chapter 08, the report card, pure formatting: the card's records (``card``, ``sources``; the rows are
computed by :mod:`creval.studies.reportcard.card` when the study runs) in, DataFrames (caption in
``df.attrs["caption"]``) and a Figure out, and the chapter's closing "What this shows"."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from creval.core.paths import home
from creval.measures import stats as S
from creval.studies.reportcard.card import COLUMNS, FLIPPED, VERDICTS, card_verdict
from creval.studies.tables import captioned

COMPACT = ["measure", "human data", "value [95% interval]", "baseline", "verdict", "reason"]
ENOUGH = S.ENOUGH


# -- what the chapter shows -------------------------------------------------------------------------------
def card_frame(recs) -> pd.DataFrame:
    """The card's rows, each with ``vs baseline``, ``verdict`` and ``reason`` (a card written before the one
    verdict rule carried only the paired verdict: it is graded again here from its own columns)."""
    c = recs["card"]
    if c.empty or "vs baseline" in c:
        return c
    c = c.rename(columns={"verdict": "vs baseline"}).replace({"vs baseline": {"not enough data": VERDICTS["n/a"]}})
    graded = [card_verdict(r) for r in c.to_dict("records")]
    return c.assign(verdict=[v.word for v in graded], reason=[v.reason for v in graded])


def against_baseline(r: dict) -> str:
    """The reason column of a testable row: how it stands against its baseline, with the interval."""
    d = S.fmt_estimate(r["difference"], r["diff lo"], r["diff hi"])
    return {VERDICTS["better"]: f"beats {r['baseline']} by {d}",
            VERDICTS["worse"]: f"worse than {r['baseline']} by {d}"}.get(
        r["vs baseline"], f"indistinguishable from {r['baseline']}: difference {d}")


def table_card(recs) -> pd.DataFrame:
    """The compact card, the one a reader reads: measure, human data, the value with its interval and n, the
    baseline on the same items, the verdict and its reason (the full table: :func:`table_card_full`)."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=COMPACT), "Nothing to grade: no study found human data.")
    rows = [{"measure": r["measure"], "human data": r["human data"],
             "value [95% interval]": (f"{r['statistic']} {S.fmt_estimate(r['value'], r['lo'], r['hi'])}, n = {r['n']}"
                                      if pd.notna(r["value"]) else f"{r['statistic']}: not computable, n = {r['n']}"),
             "baseline": f"{r['baseline']}: {S.fmt_number(r['baseline value'])}", "verdict": r["verdict"],
             "reason": r["reason"] or against_baseline(r)} for r in c.to_dict("records")]
    return captioned(pd.DataFrame(rows, columns=COMPACT),
                     "The report card. Value: the statistic against people (higher = agrees) with its 95% interval "
                     "(none where too many resamples are undefined); baseline: the strongest trivial baseline on the "
                     f"same items. Verdict (docs/verdicts.md): reproduced when the measure beats its baseline (paired "
                     f"interval above 0) and its own interval clears chance; not testable here on fewer than {ENOUGH} "
                     "items, bundled sample data, a constant score, a judge that copies the order it was shown, or a "
                     "measurement counted on another row.")


def table_card_full(recs) -> pd.DataFrame:
    """Every column of the card (for the folded block below the compact one)."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=COLUMNS), "No rows.")
    return captioned(c[[k for k in COLUMNS if k in c]], "The full card: baseline orientation flipped where the "
                     "negated baseline agrees better; difference = value minus baseline with a 95% paired bootstrap "
                     "interval (vs baseline: indistinguishable when it holds 0).")


def table_verdicts(recs) -> pd.DataFrame:
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(), "No rows.")
    t = c.groupby(["paper", "verdict"]).size().unstack(fill_value=0).reset_index()
    return captioned(t, "Verdicts per paper (rows of the card).")


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
    """Forest plot: each row's statistic with its interval, and the baseline on the same items."""
    c = card_frame(recs)
    fig = go.Figure()
    if c.empty:
        return fig.update_layout(title="No rows")
    labels = [f"{m} · {d}" for m, d in zip(c["measure"], c["human data"])]
    err = dict(type="data", symmetric=False, array=(c["hi"] - c["value"]).fillna(0),
               arrayminus=(c["value"] - c["lo"]).fillna(0))
    cols = zip(labels, c["statistic"], c["value"], c["lo"], c["hi"], c["n"], c["baseline"], c["baseline value"],
               c["verdict"], c["reason"])
    hover = [f"{lab}<br>{s} {S.fmt_estimate(v, lo, hi, 3)}, n={n}<br>baseline {b}: {S.fmt_number(bv, 3)}<br>{verdict}"
             + (f" ({why})" if why else "") for lab, s, v, lo, hi, n, b, bv, verdict, why in cols]
    fig.add_trace(go.Scatter(x=c["value"], y=labels, mode="markers", error_x=err, name="measure or judge",
                             hovertext=hover, hoverinfo="text", marker=dict(size=9)))
    fig.add_trace(go.Scatter(x=c["baseline value"], y=labels, mode="markers", name="baseline, same items",
                             marker=dict(symbol="x", size=9)))
    fig.update_layout(title="Each measure against people, beside its trivial baseline", height=160 + 28 * len(c),
                      xaxis_title="statistic (AUROC: 0.5 = chance; rho and accuracy as they are)",
                      yaxis=dict(autorange="reversed"), margin=dict(l=20))
    return fig


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows", from the card's verdicts (the one rule): which measures beat their
    strongest trivial baseline on the same items (reproduced), which do not (not reproduced: indistinguishable
    or worse), which rows cannot test it here and why; then the baselines that only hold up flipped."""
    c = card_frame(recs)
    if c.empty:
        return captioned(pd.DataFrame(columns=["verdict", "rows", "which"]), "What this shows: no rows to read.")
    c = c.assign(_name=[f"{m} · {d}" for m, d in zip(c["measure"], c["human data"])])
    testable = c["verdict"] != S.TESTABLE
    groups = (("reproduced: beats its strongest trivial baseline", c["verdict"] == "reproduced", "difference"),
              ("not reproduced: no better than its baseline (or its own interval holds chance)",
               testable & (c["verdict"] == "not reproduced") & (c["vs baseline"] != VERDICTS["worse"]), "difference"),
              ("not reproduced: worse than its baseline",
               testable & (c["verdict"] == "not reproduced") & (c["vs baseline"] == VERDICTS["worse"]), "difference"),
              ("not testable here", ~testable, "reason"),
              ("note, across the verdicts above: the strongest baseline is a flipped one (for example, shorter "
               "texts rated higher)",
               c["baseline orientation"] == FLIPPED, "difference"))
    rows = [{"verdict": name, "rows": int(mask.sum()),
             "which": "; ".join(f"{n} ({S.fmt_number(x, 2) if col == 'difference' else x})"
                                for n, x in zip(c.loc[mask, "_name"], c.loc[mask, col]))}
            for name, mask, col in groups]
    return captioned(pd.DataFrame(rows), "What this shows: each card row by its verdict (in brackets: the "
                                          "difference from the baseline, or why the row cannot test its measure)")
