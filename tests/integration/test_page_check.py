"""The page check (issue 53) in headless Chromium: a page that runs off the right edge, prints a Python structure,
makes a heading of a sentence, or draws a figure without axis titles or with a squeezed plot area is caught,
each with what it saw; a clean page passes. The smoke book's pages are checked in test_book.py."""
import plotly.graph_objects as go
import pytest

from creval.book.pagecheck import browser, check_page, check_site
from creval.book.plots import figure_html

pytestmark = pytest.mark.integration


def need_browser() -> str:
    found = browser()
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium (`apt-get install chromium`; `make test` does "
                    "it as root)")
    return found


def page(tmp_path, body: str, name: str = "page.html"):
    p = tmp_path / "site" / "chapters" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>")
    return p


def good_figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="m"))
    return fig.update_layout(title="Entropy by step", xaxis_title="step", yaxis_title="entropy (nats)", width=800)


def test_a_clean_page_passes_and_the_site_lists_no_page(tmp_path):
    chromium = need_browser()
    body = ("<h1>Divergent creativity</h1><h2>What this build found</h2><p>Here: 0.50 [0.10, 0.90] on 40 items.</p>"
            "<details><pre>{'seed': 0}</pre></details>" + figure_html(good_figure(), include_js=True))
    p = page(tmp_path, body)
    assert check_page(p, chromium) == []
    (tmp_path / "site" / "index.html").write_text("<html><body><h1>Preface</h1></body></html>")
    assert check_site(tmp_path / "site", chromium) == {}
    assert not list(p.parent.glob(".*pagecheck*"))                       # the probe copy is removed


def test_each_thing_a_reader_should_never_meet_is_named(tmp_path):
    chromium = need_browser()
    squeezed = go.Figure(go.Bar(x=[1, 2, 3], y=["a very long label " * 4, "b", "c"], orientation="h"))
    squeezed.update_layout(title="Squeezed", width=900, xaxis_title="AUROC", yaxis_title="measure",
                           margin={"l": 700})
    bare = go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 2, 3])).update_layout(title="No axis titles")
    body = ("<p>seeds: {'seed': 0, 'data_seed': 42}</p>"
            "<h2>k with its 95% rank interval (items resampled, every model re-ranked).</h2>"
            "<table style='width:2400px'><tr><td>wide</td></tr></table>"
            + figure_html(bare, include_js=True) + figure_html(squeezed, include_js=False))
    found = check_page(page(tmp_path, body), chromium)
    kinds = sorted({f["kind"] for f in found})
    assert kinds == ["figure", "heading from data", "overflow", "repr"], found
    said = " | ".join(f["what"] for f in found)
    assert "{'seed': 0, 'data_seed': 42}" in said and "k with its 95% rank interval" in said
    assert "No axis titles: no title on its x axis" in said
    assert "Squeezed: plot area" in said and "table" in said
    assert check_site(tmp_path / "site", chromium) == {"chapters/page.html": found}
