"""The forest plot of the rule's words (issues 51, 53): for each measure, its agreement with people above chance
and its lead over the strongest trivial baseline, each with its 95% interval, the within-author value beside
them, coloured by what the measure tracks (:mod:`creval.measures.stats.tracking`), open markers where another
bootstrap seed could change the word. One function for ``creval grade``'s card and chapter 08.

Pure: rows (the rule's result dicts, or card rows with the same keys) in, a plotly Figure out.
"""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from creval.measures.stats import tracking as TR
from creval.measures.stats.verdicts import INCONCLUSIVE, TESTABLE

COLOURS = {TR.TRACKS: "#1b7837", TR.AUTHORSHIP: "#b35806", TR.NO_BETTER: "#7b3294", TR.NO_TRACK: "#b2182b",
           INCONCLUSIVE: "#6b6b6b"}
ORDER = [TR.TRACKS, TR.AUTHORSHIP, TR.NO_BETTER, TR.NO_TRACK, INCONCLUSIVE]
CHANCE = TR.CHANCE


def _f(v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def drawable(rows: list[dict]) -> list[dict]:
    """The rows the plot can draw: a word other than *not testable here* and a finite value and interval."""
    return [r for r in rows if r.get("word", r.get("tracking")) not in (TESTABLE, None)
            and all(math.isfinite(_f(r.get(k))) for k in ("value", "lo", "hi"))]


def _word(r: dict) -> str:
    return TR.rule_word(r.get("word") or r.get("tracking") or "")


def _null(r: dict) -> float:
    return CHANCE.get(str(r.get("statistic")), _f(r.get("null")) if math.isfinite(_f(r.get("null"))) else 0.0)


def forest_figure(rows: list[dict], title: str, label=lambda r: str(r.get("description") or r.get("measure")),
                  link=lambda r: None):
    """Two panels sharing the measures' rows: left, the statistic above chance (rho, or AUROC - 0.5) with its
    interval and, where authors were given, the within-author value (a diamond); right, the lead over the
    strongest trivial baseline with its interval. A zero line on each. Colour: the word; an open marker: a
    borderline word. ``label(row)``: the row's name on the axis; ``link(row)``: where that name leads (the items
    the row was computed from; None: no link). Rows with no word or no interval are left out (list them beside
    the figure)."""
    rows = drawable(rows)
    names = [_wrap(label(r), 40) for r in rows]          # short lines: the plot keeps most of the width
    ys, span = _positions(names)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("agreement with people, above chance", "lead over the strongest baseline"))
    shown: set[str] = set()
    for i, r in enumerate(rows):
        word, null = _word(r), _null(r)
        colour = COLOURS.get(word, "#444")
        open_ = bool(r.get("borderline"))
        symbol = "circle-open" if open_ else "circle"
        shown_word = str(r.get("tracking") or TR.word_label({**r, "word": word}))   # the word the row's page shows
        mark = ", borderline" if open_ else ""
        hover = f"<b>{names[i]}</b><br>{shown_word}{mark}<br>" + _wrap(str(r.get("reason", "")))
        legend = word not in shown
        shown.add(word)
        v, lo, hi = (_f(r.get(k)) - null for k in ("value", "lo", "hi"))
        fig.add_trace(go.Scatter(x=[v], y=[ys[i]], mode="markers", marker=dict(color=colour, size=11, symbol=symbol,
                                 line=dict(width=2, color=colour)),
                                 error_x=dict(type="data", symmetric=False, array=[hi - v], arrayminus=[v - lo],
                                              color=colour, thickness=2),
                                 name=word, legendgroup=word, showlegend=legend, hovertext=hover, hoverinfo="text"),
                      row=1, col=1)
        w = _f(r.get("within value"))
        if math.isfinite(w):
            wlo, whi = _f(r.get("within lo")) - null, _f(r.get("within hi")) - null
            err = dict(type="data", symmetric=False, array=[whi - (w - null)], arrayminus=[(w - null) - wlo],
                       color=colour, thickness=1, width=3) if math.isfinite(wlo) and math.isfinite(whi) else None
            fig.add_trace(go.Scatter(x=[w - null], y=[ys[i]], mode="markers", error_x=err,
                                     marker=dict(color=colour, size=8, symbol="diamond-open"), name="within authors",
                                     legendgroup="within", showlegend="within" not in shown,
                                     hovertext=f"{names[i]}: within authors", hoverinfo="text"), row=1, col=1)
            shown.add("within")
        _ceiling(fig, r, names[i], ys[i], null, shown)
        d, dlo, dhi = (_f(r.get(k)) for k in ("difference", "diff lo", "diff hi"))
        if all(math.isfinite(t) for t in (d, dlo, dhi)):
            dot = dict(color=colour, size=11, symbol=symbol, line=dict(width=2, color=colour))
            fig.add_trace(go.Scatter(x=[d], y=[ys[i]], mode="markers", marker=dot,
                                     error_x=dict(type="data", symmetric=False, array=[dhi - d], arrayminus=[d - dlo],
                                                  color=colour, thickness=2),
                                     name=word, legendgroup=word, showlegend=False,
                                     hovertext=f"{hover}<br>strongest baseline: {r.get('baseline')}",
                                     hoverinfo="text"),
                          row=1, col=2)
        wd, wdlo, wdhi = (_f(r.get(k)) for k in ("within difference", "within diff lo", "within diff hi"))
        if all(math.isfinite(t) for t in (wd, wdlo, wdhi)):
            werr = dict(type="data", symmetric=False, array=[wdhi - wd], arrayminus=[wd - wdlo], color=colour,
                        thickness=1, width=3)
            fig.add_trace(go.Scatter(x=[wd], y=[ys[i]], mode="markers", error_x=werr,
                                     marker=dict(color=colour, size=8, symbol="diamond-open"), name="within authors",
                                     legendgroup="within", showlegend=False,
                                     hovertext=f"{names[i]}: lead within authors", hoverinfo="text"), row=1, col=2)
    for col in (1, 2):
        fig.add_vline(x=0, line=dict(color="#222", width=1, dash="dash"), row=1, col=col)
    urls = [link(r) for r in rows]   # each line of a name is its own link: plotly's <a> does not span a <br>
    fig.update_yaxes(range=[span, 0], automargin=True, tickfont=dict(size=10), tickmode="array", tickvals=ys,
                     ticktext=[linked(n, u) for n, u in zip(names, urls)], showgrid=True, zeroline=False)
    fig.update_yaxes(title_text="measure · human data" if any(" · " in n for n in names) else "measure", row=1, col=1)
    fig.update_xaxes(title_text="rho, or AUROC − 0.5 (0 = chance)", row=1, col=1, zeroline=False)
    fig.update_xaxes(title_text="measure − best baseline (> 0 = beats it)", row=1, col=2, zeroline=False)
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), height=max(260, 130 + span),
                      margin=dict(l=10, r=10, t=80, b=60), template="plotly_white",
                      legend=dict(orientation="h", y=-0.12 if len(rows) > 6 else -0.3))
    return fig


def _positions(names: list[str]) -> tuple[list[float], float]:
    """Each row's place on the y axis (top to bottom) and the axis' span, in pixels: a row as tall as its wrapped
    label (22 px a line and 14 more per extra line), so a three-line name never runs into its neighbours, as it
    did when plotly spaced the names evenly."""
    ys, top = [], 0.0
    for n in names:
        h = 22 + 14 * n.count("<br>")
        ys.append(top + h / 2)
        top += h
    return ys, max(top, 1.0)


def _ceiling(fig: go.Figure, r: dict, name: str, y: float, null: float, shown: set) -> None:
    """The raters' own agreement on the row (each held out against the others; issue 63) as a grey tick on the
    agreement panel, where the row carries one."""
    c = _f(r.get("ceiling"))
    if not math.isfinite(c):
        return
    whose = f" ({r['raters']})" if r.get("raters") else ""
    fig.add_trace(go.Scatter(x=[c - null], y=[y], mode="markers", hoverinfo="text",
                             marker=dict(color="#555", size=16, symbol="line-ns", line=dict(width=3, color="#555")),
                             name="raters' ceiling (each held out)", legendgroup="ceiling",
                             showlegend="ceiling" not in shown,
                             hovertext=f"{name}: one rater against the others' mean {c:.2f}{whose}"), row=1, col=1)
    shown.add("ceiling")


def linked(name: str, url: str | None) -> str:
    """``name`` (lines joined by ``<br>``) with every line a link to ``url``; as it is when there is none.
    plotly opens such a link from a page served over http(s), not from a ``file://`` page (it allows no
    ``file:`` link); offline, the table below the plot links each row's n to the same items."""
    if not url:
        return name
    return "<br>".join(f'<a href="{html.escape(url)}">{line}</a>' for line in name.split("<br>"))


def _wrap(text: str, width: int = 90) -> str:
    """A long reason broken into lines for a hover box."""
    out, line = [], ""
    for word in text.split():
        if len(line) + len(word) > width:
            out.append(line)
            line = ""
        line = f"{line} {word}".strip()
    return "<br>".join(out + [line])
