"""Plotly figures that stay interactive offline: plotly.js is embedded once per notebook, no CDN.

Chapters call :func:`show` instead of ``fig.show()``. The output is a ``text/html`` bundle that
nbconvert, Quarto and JupyterLab all keep. Whether plotly.js is still to be inlined is the state of one
:class:`PlotlyPage` (the notebook being written: :data:`PAGE` in a chapter's kernel), which says so and can
be reset; nothing else remembers it.
"""
from __future__ import annotations

import plotly.graph_objects as go
from IPython.display import display
from plotly.offline import get_plotlyjs

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


class PlotlyPage:
    """One notebook's figures: plotly.js is inlined in the first figure's HTML and only referred to after."""

    def __init__(self) -> None:
        self.has_plotly_js = False

    def html(self, fig: go.Figure) -> str:
        """``fig`` as HTML, with plotly.js when this page does not hold it yet."""
        out = figure_html(fig, include_js=not self.has_plotly_js)
        self.has_plotly_js = True
        return out

    def reset(self) -> None:
        """A new page: the next figure inlines plotly.js again."""
        self.has_plotly_js = False


PAGE = PlotlyPage()       # the page a chapter's kernel writes (one kernel per chapter)


def show(fig: go.Figure, page: PlotlyPage = PAGE) -> None:
    """Display ``fig`` in a notebook, plotly.js inlined in ``page``'s first figure (offline-safe)."""
    display({"text/html": page.html(fig)}, raw=True)


def table(df, caption: str | None = None, digits: int = 3):
    """A styled pandas table for chapters (rounded floats; caption given, else ``df.attrs["caption"]``)."""
    caption = df.attrs.get("caption", "") if caption is None else caption
    sty = df.style.format(precision=digits, na_rep="–").hide(axis="index")
    text_cols = [c for c in df.columns if df[c].dtype == object]
    if text_cols:
        sty = sty.set_properties(subset=text_cols, **{"text-align": "left"})
    return sty.set_caption(caption) if caption else sty
