"""Chapter 09's released-models table as a dot plot (issue 53), pure: the ``released`` records in, a Figure out;
the table (:func:`creval.studies.compare.ranking.table_released`) stays one click away, folded below it.

One panel per measure (the human labels first, as in the table), three a row, the models on the rows in the
table's order: each model's mean over its items with the 95% bootstrap interval over the items, the items'
count in the axis title (per model in the hover where it differs). The same numbers as the table: nothing is
recomputed but the rankings the table reads.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from creval.studies.compare.ranking import rankings
from creval.studies.compare.released import HIGHER, LABELS, TTCW_PASSES
from creval.studies.config import boot_settings
from creval.studies.dots import dot_figure, dots_frame
from creval.studies.tables import guard_module

PER_ROW = 3


def count_text(ns) -> str:
    """The items behind a panel: ``"n = 40"``, or ``"n = 12-40"`` where the models' counts differ."""
    ns = sorted({int(n) for n in ns if n == n})
    if not ns:
        return "n unknown"
    return f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}-{ns[-1]}"


def released_dots(recs, dataset: str) -> pd.DataFrame:
    """The rankings of ``dataset`` as dots: panel = the measure (labels first), label = the model, ordered by the
    first measure's mean as the table orders them."""
    r = rankings(recs["released"], dataset, *boot_settings(recs))
    if r.empty:
        return dots_frame([])
    measures = list(dict.fromkeys(r["measure"]))
    first = [m for m in (*LABELS, TTCW_PASSES) if m in measures]
    measures = first + [m for m in measures if m not in first]
    key = r[r["measure"] == measures[0]].set_index("model")["mean"].sort_values(ascending=False)
    models = key.index.tolist() + [m for m in dict.fromkeys(r["model"]) if m not in key.index]
    r = r.assign(m_order=r["measure"].map(measures.index), k_order=r["model"].map(models.index))
    r = r.sort_values(["m_order", "k_order"])
    return dots_frame([{"panel": x["measure"], "label": x["model"], "value": x["mean"], "lo": x["lo"], "hi": x["hi"],
                        "n": x["n"], "group": "people" if "people" in str(x["model"]) else "model"}
                       for x in r.to_dict("records")])


def fig_released(recs, dataset: str) -> go.Figure:
    """Every released model on every measure of ``dataset``: the mean over its items with its 95% interval, one
    panel per measure (its axis titled with the measure, its items' n and which way is higher)."""
    dots = released_dots(recs, dataset)
    titles = {p: f"{p} ({count_text(g['n'])})" + (f"<br>higher: {HIGHER[p]}" if p in HIGHER else "")
              for p, g in dots.groupby("panel", sort=False)}
    return dot_figure(dots, f"{dataset}: every released model on every measure (mean over items, 95% interval)",
                      x_titles=titles, y_title="model", cols=PER_ROW, n_in_label=False,
                      missing=f"no released output of {dataset} was read")


guard_module(globals())
