"""Plotly figures that stay interactive offline: plotly.js is embedded once per notebook, no CDN.

Chapters call :func:`show` instead of ``fig.show()``. The output is a ``text/html`` bundle that
nbconvert, Quarto and JupyterLab all keep, plus the plotly JSON for JupyterLab's own renderer.
"""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

_embedded = False
TEMPLATE = "plotly_white"


def figure_html(fig: go.Figure, include_js: bool) -> str:
    fig.update_layout(template=TEMPLATE)
    html = fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True})
    if include_js:
        # Hide an AMD loader (require.js in some notebook front ends) while plotly.js loads, so it always
        # defines window.Plotly instead of registering an anonymous module.
        html = ('<script>window._crevalDefine = window.define; window.define = undefined;</script>\n'
                f'<script type="text/javascript">{get_plotlyjs()}</script>\n'
                '<script>window.define = window._crevalDefine;</script>\n') + html
    return html


def show(fig: go.Figure) -> None:
    """Display ``fig`` in a notebook with plotly.js inlined the first time (offline-safe)."""
    global _embedded
    from IPython.display import display
    html = figure_html(fig, include_js=not _embedded)
    _embedded = True
    display({"text/html": html}, raw=True)


def table(df, caption: str | None = None, digits: int = 3):
    """A styled pandas table for chapters (rounded floats; caption given, else ``df.attrs["caption"]``)."""
    caption = df.attrs.get("caption", "") if caption is None else caption
    sty = df.style.format(precision=digits, na_rep="–").hide(axis="index")
    text_cols = [c for c in df.columns if df[c].dtype == object]
    if text_cols:
        sty = sty.set_properties(subset=text_cols, **{"text-align": "left"})
    return sty.set_caption(caption) if caption else sty
