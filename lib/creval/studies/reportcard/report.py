"""Chapter 08, the report card, pure formatting: the card's records (``card``, ``sources``; the rows are
computed by :mod:`creval.studies.reportcard.card` when the study runs) in, DataFrames (caption in
``df.attrs["caption"]``) and a Figure out, and the chapter's closing "What this shows"."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from creval.core.paths import home
from creval.measures import stats as S
from creval.studies.reportcard.card import COLUMNS, FLIPPED, VERDICTS
from creval.studies.tables import captioned


# -- what the chapter shows -------------------------------------------------------------------------------
def table_card(recs) -> pd.DataFrame:
    c = recs["card"]
    if c.empty:
        return captioned(pd.DataFrame(columns=COLUMNS), "Nothing to grade: no study found human data.")
    return captioned(c, "The report card. value: the statistic against people (higher = agrees), 95% bootstrap "
                        "interval [lo, hi]; baseline value: the strongest trivial baseline on the same items, in its "
                        "better orientation (baseline orientation: flipped where the negated baseline agrees better); "
                        "difference: value minus baseline with a 95% paired bootstrap interval; the verdict is read "
                        "off that interval (indistinguishable when it holds 0).")


def table_verdicts(recs) -> pd.DataFrame:
    c = recs["card"]
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
    c = recs["card"]
    fig = go.Figure()
    if c.empty:
        return fig.update_layout(title="No rows")
    labels = [f"{m} · {d}" for m, d in zip(c["measure"], c["human data"])]
    err = dict(type="data", symmetric=False, array=(c["hi"] - c["value"]).fillna(0),
               arrayminus=(c["value"] - c["lo"]).fillna(0))
    cols = zip(labels, c["statistic"], c["value"], c["lo"], c["hi"], c["n"], c["baseline"], c["baseline value"],
               c["verdict"])
    hover = [f"{lab}<br>{s} {S.fmt_estimate(v, lo, hi, 3)}, n={n}<br>baseline {b}: {S.fmt_number(bv, 3)}<br>{verdict}"
             for lab, s, v, lo, hi, n, b, bv, verdict in cols]
    fig.add_trace(go.Scatter(x=c["value"], y=labels, mode="markers", error_x=err, name="measure or judge",
                             hovertext=hover, hoverinfo="text", marker=dict(size=9)))
    fig.add_trace(go.Scatter(x=c["baseline value"], y=labels, mode="markers", name="baseline, same items",
                             marker=dict(symbol="x", size=9)))
    fig.update_layout(title="Each measure against people, beside its trivial baseline", height=160 + 28 * len(c),
                      xaxis_title="statistic (AUROC: 0.5 = chance; rho and accuracy as they are)",
                      yaxis=dict(autorange="reversed"), margin=dict(l=20))
    return fig


UNTESTABLE_NOTES = ("sample", "not real labels", "too few")


def untestable(row) -> bool:
    """Whether a card row says nothing about the measure: bundled sample data, or too few items to compare."""
    return row["verdict"] == VERDICTS["n/a"] or any(t in str(row["note"] or "").lower() for t in UNTESTABLE_NOTES)


def what_this_shows(recs) -> pd.DataFrame:
    """The closing "What this shows", from the card: which measures beat their strongest trivial baseline on the
    same items (the claim that they measure something people call creative, reproduced), which do not (not
    reproduced), and which rows cannot test it here (sample data, too few items); then the baselines that only
    hold up flipped."""
    c = recs["card"]
    if c.empty:
        return captioned(pd.DataFrame(columns=["verdict", "rows", "which"]), "What this shows: no rows to read.")
    c = c.assign(_u=[untestable(r) for _, r in c.iterrows()], _name=[f"{m} · {d}" for m, d in
                                                                      zip(c["measure"], c["human data"])])
    groups = (("reproduced: beats its strongest trivial baseline", ~c["_u"] & (c["verdict"] == VERDICTS["better"])),
              ("not reproduced: indistinguishable from its baseline",
               ~c["_u"] & (c["verdict"] == VERDICTS["indistinguishable"])),
              ("not reproduced: worse than its baseline", ~c["_u"] & (c["verdict"] == VERDICTS["worse"])),
              ("cannot be tested here (sample data or too few items)", c["_u"]),
              ("the baseline is stronger flipped (for example, shorter texts rated higher)",
               c["baseline orientation"] == FLIPPED))
    rows = [{"verdict": name, "rows": int(mask.sum()),
             "which": "; ".join(f"{n} ({S.fmt_number(d, 2)})" for n, d in zip(c.loc[mask, "_name"],
                                                                              c.loc[mask, "difference"]))}
            for name, mask in groups]
    return captioned(pd.DataFrame(rows), "What this shows: each card row by its verdict (in brackets: the "
                                          "difference from the baseline)")
