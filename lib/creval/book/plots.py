"""Plotly figures that stay interactive offline: plotly.js is embedded once per notebook, no CDN.

Chapters call :func:`show` instead of ``fig.show()``. The output is a ``text/html`` bundle that
nbconvert, Quarto and JupyterLab all keep. Whether plotly.js is still to be inlined is the state of one
:class:`PlotlyPage` (the notebook being written: :data:`PAGE` in a chapter's kernel), which says so and can
be reset; nothing else remembers it.
"""
from __future__ import annotations

import re

import plotly.graph_objects as go
from IPython.display import display
from plotly.offline import get_plotlyjs

from creval.measures.stats.numbers import fmt_number
from creval.studies.tables import readable

TEMPLATE = "plotly_white"


TITLE_CHARS = 90      # characters of a figure title's line before it wraps (plotly never wraps a title itself)


def wrapped(text: str, width: int = TITLE_CHARS) -> str:
    """``text`` broken with ``<br>`` between words into lines of at most ``width`` characters (lines it already
    breaks are kept); what a long plotly title needs so that it is not cut at the figure's edge."""
    import textwrap
    lines = re.split(r"<br\s*/?>", text)
    return "<br>".join("<br>".join(textwrap.wrap(line, width)) or line for line in lines)


def readable_titles(fig: go.Figure) -> go.Figure:
    """``fig`` with a long title wrapped onto lines (:func:`wrapped`) and the top margin made room for them."""
    text = fig.layout.title.text if fig.layout.title else None
    if text and len(text) > TITLE_CHARS:
        text = wrapped(text)
        lines = text.count("<br>") + 1
        top = fig.layout.margin.t if fig.layout.margin and fig.layout.margin.t is not None else 80
        fig.update_layout(title_text=text, margin_t=max(top, 40 + 22 * lines))
    return fig


def figure_html(fig: go.Figure, include_js: bool) -> str:
    fig.update_layout(template=TEMPLATE)
    readable_titles(fig)
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


MIN_POINTS = 3            # a figure with fewer points is said in a sentence instead of drawn
POINT_TRACES = ("scatter", "bar", "box", "violin", "histogram", "scattergl")


def trace_points(trace) -> list[tuple]:
    """The (x, y) points one trace draws (its x or y alone when it has one)."""
    xs = list(trace.x) if getattr(trace, "x", None) is not None else None
    ys = list(trace.y) if getattr(trace, "y", None) is not None else None
    if xs is None and ys is None:
        return []
    if xs is None or ys is None:
        return [(v,) for v in (xs if ys is None else ys)]
    return list(zip(xs, ys))


def point_text(v) -> str:
    return fmt_number(v) if isinstance(v, float) else str(v)


def figure_sentence(fig: go.Figure) -> str | None:
    """What a page says instead of drawing ``fig``: its title when a report could not compute it (the
    guarded figure's ``meta["missing"]``), or its few points written out when it has fewer than
    :data:`MIN_POINTS` (a two-point line is a sentence, not a figure). None when the figure is drawn."""
    title = re.sub(r"<br\s*/?>", " ", fig.layout.title.text or "") if fig.layout.title else ""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    link = f" [The items behind it]({meta['items']})." if meta.get("items") else ""
    if meta.get("missing") or (not fig.data and title):
        return f"*{title or 'This figure: nothing to draw from these records.'}*{link}"
    traces = [t for t in fig.data if t.type in POINT_TRACES]
    if not traces or len(traces) != len(fig.data):
        return None
    pts = [(t, p) for t in traces for p in trace_points(t)]
    if len(pts) >= MIN_POINTS:
        return None
    said = "; ".join((f"{t.name}: " if t.name else "") + " → ".join(point_text(v) for v in p) for t, p in pts)
    head = title.rstrip(".") or "This figure"
    return (f"*{head}: {len(pts)} point{'s' if len(pts) != 1 else ''} in these records, too few to draw"
            + (f" ({said})" if said else "") + ".*" + link)


def show(fig: go.Figure, page: PlotlyPage = PAGE, items: str | None = None) -> None:
    """Display ``fig`` in a notebook, plotly.js inlined in ``page``'s first figure (offline-safe); a figure
    with nothing or too little to draw is displayed as the sentence :func:`figure_sentence` writes, linked to
    ``items`` (an item browser address, :func:`creval.studies.links.address`) when given."""
    if items:
        meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
        fig.update_layout(meta={**meta, "items": items})
    sentence = figure_sentence(fig)
    if sentence is not None:
        from IPython.display import Markdown
        display(Markdown(sentence))
        return
    display({"text/html": page.html(fig)}, raw=True)


COUNT = re.compile(r"^n$|^n_|_n$|count|rows|calls|tokens|items|problems|samples|pairs|seed|steps|rounds|hits|made",
                   re.I)


def whole_column(name, values) -> bool:
    """Whether a float column holds counts: every value whole (NaN aside) and the column named like a count or
    holding a value of 2 or more (a share or an AUROC stays a decimal even when it is 0 or 1)."""
    import pandas as pd
    kept = pd.to_numeric(values, errors="coerce").dropna()
    if kept.empty or not (kept == kept.round()).all():
        return False
    return bool(COUNT.search(str(name))) or bool((kept.abs() >= 2).any())


def shown_frame(df):
    """``df`` as a page shows it: nested values (dicts, lists) written as text (:func:`readable`), never as
    Python reprs; the numbers are untouched."""
    out = df.copy()
    out.attrs = dict(df.attrs)
    for i, c in enumerate(out.columns):
        col = out.iloc[:, i]
        if col.dtype == object and col.map(lambda v: isinstance(v, (dict, list, tuple))).any():
            out.iloc[:, i] = col.map(lambda v: readable(v) if isinstance(v, (dict, list, tuple)) else v)
    return out


CSV_LIMIT = 2_000_000     # bytes of a table's CSV a page carries inline; a bigger table points to the downloads


def csv_text(df) -> str:
    """``df`` as CSV with its full values (nested ones as JSON text, ``json.loads`` reads them back)."""
    import json
    out = df.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if col.dtype == object:
            out.iloc[:, i] = col.map(lambda v: json.dumps(v, ensure_ascii=False, default=str)
                                     if isinstance(v, (dict, list, tuple)) else v)
    return out.to_csv(index=False)


def csv_name(caption: str) -> str:
    """A file name for a table's CSV, from its caption ("Table 3: pass@1" -> ``table-3-pass-1.csv``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")[:60].rstrip("-")
    return f"{slug or 'table'}.csv"


def csv_link(df, caption: str) -> str:
    """An HTML link that downloads ``df`` as CSV (the values in full, not as rounded on the page), carried in
    the page itself (a ``data:`` address: no file to publish, works offline); a note when it is too big."""
    import html as html_
    from urllib.parse import quote
    text = csv_text(df)
    if len(text.encode()) > CSV_LIMIT:
        return ('<p class="creval-csv">This table is too big to carry in the page: its records are in the '
                "downloads (provenance below).</p>")
    name = html_.escape(csv_name(caption))
    return (f'<p class="creval-csv" style="margin:2px 0 12px;font-size:12px"><a download="{name}" '
            f'href="data:text/csv;charset=utf-8,{quote(text)}">Download this table (CSV)</a></p>')


class ShownTable:
    """A table as a chapter shows it: the styled table, then a link to its CSV. Anything else is the
    :class:`pandas.io.formats.style.Styler`'s (``.data``, ``.to_html()``...)."""

    def __init__(self, styler, frame, caption: str, folded: bool = False, items: str | None = None,
                 fold_empty: bool = True) -> None:
        self.styler, self.frame, self.caption, self.folded = styler, frame, caption, folded
        self.items, self.fold_empty = items or frame.attrs.get("items"), fold_empty     # False: always shown

    def __getattr__(self, name):
        return getattr(self.styler, name)

    def items_link(self) -> str:
        """A link to the rows behind this table in the item browser (empty when none was given)."""
        import html as html_
        return f' <a href="{html_.escape(self.items)}">The items behind it.</a>' if self.items else ""

    def _repr_html_(self) -> str:
        import html as html_
        if self.frame.attrs.get("missing"):          # a report that could not compute its table: one sentence
            return f"<p><em>{html_.escape(self.caption or self.frame.attrs['missing'])}</em>{self.items_link()}</p>"
        shown = self.styler.to_html() + csv_link(self.frame, self.caption)
        if self.folded:                # a figure above says it; the numbers are one click away
            return (f"<details class='creval-table'><summary>Show the table: "
                    f"{html_.escape(self.caption or 'the numbers')}</summary>{shown}</details>")
        empty, cells = empty_cells(self.frame)
        if self.fold_empty and len(self.frame) >= FOLD_ROWS and cells and empty / cells >= FOLD_EMPTY:
            head = html_.escape((self.caption or "This table").rstrip("."))
            return (f"<p><em>{head}: {empty} of {cells} cells hold no value in these records, so the table is "
                    f"folded.</em>{self.items_link()}</p><details class='creval-table'><summary>Show the table"
                    f"</summary>{shown}</details>")
        return shown


FOLD_ROWS, FOLD_EMPTY = 4, 0.6     # a table of this many rows, this share of them empty, is folded under a sentence
EMPTY = {"", "–", "-", "—", "nan", "None"}


def is_text(col) -> bool:
    """Whether a column holds text (pandas 3 types strings as ``str``, older pandas as ``object``)."""
    import pandas as pd
    return pd.api.types.is_string_dtype(col) or pd.api.types.is_object_dtype(col)


def is_empty(v) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and v.strip() in EMPTY)


def empty_cells(df) -> tuple[int, int]:
    """(cells holding no value, cells) of ``df``'s value columns: missing, NaN, or a dash standing for nothing.
    The leading text columns that name each row (measure, model, domain) are not counted."""
    lead = 0
    while lead < df.shape[1] - 1 and is_text(df.iloc[:, lead]) and not df.iloc[:, lead].map(is_empty).any():
        lead += 1
    values = [v for row in df.iloc[:, lead:].itertuples(index=False) for v in row]
    return sum(map(is_empty, values)), len(values)


def table(df, caption: str | None = None, digits: int = 3, folded: bool = False, items: str | None = None):
    """A styled pandas table for chapters: floats rounded to ``digits``, whole-valued count columns as integers
    (3292, not 3292.000), nested values as text, text columns left-aligned; caption given, else
    ``df.attrs["caption"]``; a link below it downloads the table's full values as CSV (:class:`ShownTable`);
    ``folded``: shown on a click (the figure above it draws the same numbers); ``items``: the item browser's
    address of the rows behind it (else ``df.attrs["items"]``), linked where the table is said in one line."""
    caption = df.attrs.get("caption", "") if caption is None else caption
    raw, df = df, shown_frame(df)
    unique = df.columns.is_unique
    counts = {c: (lambda v: "–" if v != v else f"{v:.0f}") for c in df.columns
              if unique and df[c].dtype.kind == "f" and whole_column(c, df[c])}
    sty = df.style.format(counts or None, precision=digits, na_rep="–").hide(axis="index")
    text_cols = [c for c in df.columns if is_text(df[c])]
    if text_cols:
        sty = sty.set_properties(subset=text_cols, **{"text-align": "left"})
    lines = [c for c in text_cols if df[c].map(lambda v: isinstance(v, str) and "\n" in v).any()]
    if lines:              # code and multi-line text keep their line breaks (a cell would join them into one line)
        sty = sty.set_properties(subset=lines, **{"white-space": "pre-wrap", "font-family": "monospace",
                                                   "font-size": "12px"})
    return ShownTable(sty.set_caption(caption) if caption else sty, raw, caption, folded, items)
