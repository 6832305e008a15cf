"""Dot plots of estimates that a chapter would otherwise show as a big table (issue 53): each row a dot at its
value, its 95% interval as an error bar, its n in the row's label, a chance line where one is meaningful; panels
of rows that share a statistic. The table stays one click away (``table(..., folded=True)``).

Pure: a frame of dots in (:data:`DOT_COLUMNS`), a plotly Figure out. A study's figures module builds the frame
from its report's table and names the panels, their chance values and axis titles.
"""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

DOT_COLUMNS = ["panel", "label", "value", "lo", "hi", "n", "group"]
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22"]
GREY = "#9a9a9a"          # the colour of a group a figure marks as not to be read (a degenerate setting)


def dots_frame(rows: list[dict]) -> pd.DataFrame:
    """``rows`` (dicts with the keys of :data:`DOT_COLUMNS`) as a frame; numbers coerced, rows without a finite
    value left out (a dot needs a place)."""
    df = pd.DataFrame(rows, columns=DOT_COLUMNS)
    for c in ("value", "lo", "hi", "n"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df[np.isfinite(df["value"].to_numpy(float))].reset_index(drop=True)


LABEL_CHARS = 34          # characters of a label's line: the labels keep well under half the figure's width


def row_label(label: str, n) -> str:
    """A dot's label on the axis with its n (``"SemDis (n = 40)"``; the label alone when n is unknown), broken
    with ``<br>`` into lines of at most :data:`LABEL_CHARS` characters."""
    text = f"{label} (n = {int(n)})" if isinstance(n, (int, float)) and math.isfinite(n) else str(label)
    return "<br>".join(textwrap.wrap(text, LABEL_CHARS)) or text


def interval_text(value: float, lo: float, hi: float) -> str:
    """The hover line of a dot: its value and interval, or that it has none."""
    if math.isfinite(lo) and math.isfinite(hi):
        return f"{value:.3g} [{lo:.3g}, {hi:.3g}]"
    return f"{value:.3g} (no interval: too few units)"


def _trace(part: pd.DataFrame, name: str, colour: str, legend: bool) -> go.Scatter:
    """One group's dots in one panel: error bars from the interval (none where it is missing, an open marker
    says so)."""
    has = part["lo"].map(math.isfinite) & part["hi"].map(math.isfinite)
    plus = (part["hi"] - part["value"]).where(has, 0.0).clip(lower=0)
    minus = (part["value"] - part["lo"]).where(has, 0.0).clip(lower=0)
    hover = [f"{lab}<br>{interval_text(v, lo, hi)}" + (f", n = {int(n)}" if math.isfinite(n) else "")
             for lab, v, lo, hi, n in zip(part["label"], part["value"], part["lo"], part["hi"], part["n"])]
    return go.Scatter(x=part["value"].tolist(), y=part["shown"].tolist(), mode="markers", name=name,
                      legendgroup=name, showlegend=legend, hovertext=hover, hoverinfo="text",
                      marker=dict(color=colour, size=9, symbol=["circle" if h else "circle-open" for h in has]),
                      error_x=dict(type="data", symmetric=False, array=plus.tolist(), arrayminus=minus.tolist(),
                                   color=colour, thickness=1.5))


def colours_of(groups: list[str], grey: tuple[str, ...] = ()) -> dict[str, str]:
    """A colour per group, in order of appearance; the groups named in ``grey`` are grey."""
    out, k = {}, 0
    for g in dict.fromkeys(groups):
        out[g] = GREY if g in grey else PALETTE[k % len(PALETTE)]
        k += g not in grey
    return out


def dot_figure(dots: pd.DataFrame, title: str, *, chance: dict | None = None, x_titles: dict | None = None,
               y_title: str = "measure", cols: int = 1, grey: tuple[str, ...] = (), n_in_label: bool = True,
               missing: str = "no row has a value in these records") -> go.Figure:
    """``dots`` (:func:`dots_frame`) as one panel per ``panel`` value, ``cols`` panels a row (each row of panels
    shares its labels' order), a dashed chance line at ``chance[panel]`` where given, each panel's x-axis titled
    ``x_titles[panel]`` (else the panel's name); a colour per ``group`` (``grey`` groups grey). No dot: an empty
    figure whose title says so (``meta["missing"]``)."""
    if dots.empty:
        return go.Figure().update_layout(title=f"{title}: not computed, {missing}", meta={"missing": missing})
    chance, x_titles = chance or {}, x_titles or {}
    dots = dots.assign(shown=[row_label(lab, n if n_in_label else None) for lab, n in zip(dots["label"], dots["n"])])
    panels = list(dict.fromkeys(dots["panel"]))
    rows = -(-len(panels) // cols)
    order = list(dict.fromkeys(dots["shown"]))
    sizes = [max(sum(1 + 0.6 * t.count("<br>") for t in set(dots.loc[dots["panel"].isin(
        panels[r * cols:(r + 1) * cols]), "shown"])), 1) for r in range(rows)]
    fig = make_subplots(rows=rows, cols=cols, row_heights=sizes, subplot_titles=panels if cols == 1 else None,
                        vertical_spacing=min(0.12, 0.5 / rows), horizontal_spacing=0.03 if cols > 1 else 0.2)
    palette, seen = colours_of(list(dots["group"].astype(str)), grey), set()
    for i, p in enumerate(panels):
        r, c = divmod(i, cols)
        sub = dots[dots["panel"] == p]
        for g, part in sub.groupby(sub["group"].astype(str), sort=False):
            fig.add_trace(_trace(part, g, palette[g], g not in seen), row=r + 1, col=c + 1)
            seen.add(g)
        if p in chance:
            fig.add_vline(x=chance[p], line=dict(color="#222", width=1, dash="dash"), row=r + 1, col=c + 1)
        fig.update_xaxes(title_text=x_titles.get(p, p), zeroline=False, row=r + 1, col=c + 1)
        here = set(dots.loc[dots["panel"].isin(panels[r * cols:(r + 1) * cols]), "shown"])
        fig.update_yaxes(categoryorder="array", categoryarray=[s for s in order if s in here], autorange="reversed",
                         automargin=True, tickfont=dict(size=11), showticklabels=c == 0,
                         title_text=y_title if c == 0 else None, row=r + 1, col=c + 1)
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), margin=dict(l=10, r=10, t=90, b=60),
                      height=int(140 + 26 * sum(sizes) + 90 * rows), legend=dict(orientation="h", y=-0.08),
                      showlegend=len(seen) > 1)
    return fig
