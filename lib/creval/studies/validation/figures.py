"""Chapter 04's big comparison tables as dot plots (issue 53), pure: the report's tables in, a Figure out; the
tables themselves stay one click away, folded below the figure.

- :func:`fig_entropy_vs_diversity`: Tables 8-10, each diversity metric's Spearman rho with semantic entropy per
  model and domain, one panel per level (step, solution), the zero line;
- :func:`fig_labelled_items`: every measure against the human labels (the AUT originality ratings, the
  MacGyver ``Unconventional?`` labels), on the chapter's subsample and on every labelled item, one panel per
  statistic (Spearman rho, chance 0; AUC, chance 0.5).
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from creval.measures.stats import tracking as TR
from creval.studies.dots import dot_figure, dots_frame
from creval.studies.tables import guard_module
from creval.studies.validation import report as R

RHO, AUC = "Spearman rho", "AUC"
CHANCE = {s: TR.CHANCE[s] for s in (RHO, AUC)}
AXES = {RHO: "Spearman rho with the human rating (0 = chance)",
        AUC: "AUC, unconventional above conventional (0.5 = chance)"}


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    """A report table's rows, none when the report could not compute it (its ``attrs["missing"]``)."""
    return df.iloc[0:0] if df.attrs.get("missing") or df.empty else df


def entropy_dots(recs) -> pd.DataFrame:
    """Tables 8-10 as dots: panel = the level, label = metric · model · domain, rho with its interval and n."""
    t = _rows(R.table_entropy_vs_diversity(recs))
    return dots_frame([{"panel": f"{r['level']} level", "label": f"{r['metric']} · {r['model']} · {r['domain']}",
                        "value": r["rho"], "lo": r["ci_low"], "hi": r["ci_high"], "n": r["n"], "group": r["metric"]}
                       for r in t.to_dict("records")])


def fig_entropy_vs_diversity(recs) -> go.Figure:
    """Tables 8-10 as a dot plot: each metric's Spearman rho with semantic entropy, its 95% interval and n,
    one panel per level, the zero line (expected: below it for cosine and self-BLEU, above for distinct-n)."""
    dots = entropy_dots(recs)
    panels = list(dict.fromkeys(dots["panel"]))
    return dot_figure(dots, "Tables 8-10: semantic entropy vs each diversity metric (Spearman rho, 95% interval)",
                      chance={p: 0.0 for p in panels},
                      x_titles={p: "Spearman rho with semantic entropy (0 = none)" for p in panels},
                      y_title="metric · model · domain")


def labelled_dots(recs) -> pd.DataFrame:
    """Every measure against people as dots: the chapter's AUT and MacGyver subsamples and, where computed,
    every labelled item (panel = the statistic, group = the data and how much of it)."""
    rows = [{"panel": RHO, "label": f"{r['measure']} · {r['dataset']}", "value": r["rho"], "lo": r["ci_low"],
             "hi": r["ci_high"], "n": r["n"], "group": "the chapter's subsample"}
            for r in _rows(R.table_aut_validation(recs)).to_dict("records")]
    rows += [{"panel": AUC, "label": f"{r['measure']} · macgyver", "value": r["AUC"], "lo": r["ci_low"],
              "hi": r["ci_high"], "n": r["n"], "group": "the chapter's subsample"}
             for r in _rows(R.table_macgyver_unconventional(recs)).to_dict("records")]
    rows += [{"panel": RHO if r["statistic"] == RHO else AUC, "label": f"{r['measure']} · {r['dataset']}",
              "value": r["all items"], "lo": r["ci_low"], "hi": r["ci_high"], "n": r["n"],
              "group": "every labelled item"}
             for r in _rows(R.table_full_data(recs)).to_dict("records")]
    return dots_frame(rows)


def fig_labelled_items(recs) -> go.Figure:
    """The labelled-items tables as a dot plot: each measure's agreement with the human labels, its 95%
    interval and n, on the chapter's subsample and on every labelled item, each panel with its chance line."""
    dots = labelled_dots(recs)
    return dot_figure(dots, "Each measure against the human labels (95% interval; the judge only on the subsample)",
                      chance=CHANCE, x_titles=AXES, y_title="measure · data")


guard_module(globals())
