"""A reader's page: prose first (parameters folded, setup input hidden), the preface without Quarto syntax,
intervals rounded once, paths relative to the data home."""
import json

import nbformat
import pandas as pd

from creval.book.execute import book_structure
from creval.book.render import preface_html, reader_notebook
from creval.core.paths import REPO
from creval.measures.stats.numbers import fmt_estimate, fmt_interval, fmt_number
from creval.studies.registry import STUDIES


def test_intervals_are_rounded_once_from_the_full_value():
    assert fmt_interval(0.7827, 0.8448) == "[0.78, 0.84]"          # not 0.8448 -> 0.845 -> 0.85
    assert fmt_interval(0.0123, 0.5, digits=1, scale=100) == "[1.2, 50.0]"
    assert fmt_interval(float("nan"), 0.3) == "" and fmt_number(None) == "–"
    assert fmt_estimate(0.81449, 0.7827, 0.8448) == "0.81 [0.78, 0.84]"
    assert fmt_estimate(0.5, float("nan"), float("nan"), 3) == "0.500"
    assert fmt_number(25 / 4, 1) == "6.3" and fmt_number(-0.001) == "0.00" and fmt_number(-0.126) == "-0.13"


def _executed_like(chapter):
    nb = nbformat.read(str(REPO / chapter), as_version=4)
    for c in nb.cells:
        if c.cell_type == "code" and "hide-input" in c.metadata.get("tags", []):
            c.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    return nb


def test_every_page_opens_with_prose_and_keeps_its_parameters_one_click_away():
    for chapter in [f for _, f in book_structure() if f.endswith(".ipynb")]:
        nb = reader_notebook(_executed_like(chapter))
        shown = [c for c in nb.cells if not c.metadata.get("transient", {}).get("remove_source")]
        assert shown[0].cell_type == "markdown" and shown[0].source.startswith("# "), chapter
        assert shown[1].cell_type == "markdown" and shown[1].source.startswith("<details"), chapter
        assert "run_root = " in shown[1].source and "#|" not in shown[1].source, chapter
        hidden = [c for c in nb.cells if c.metadata.get("transient", {}).get("remove_source")
                  and not c.metadata.get("creval_folded")]
        assert "from_params(globals())" in hidden[0].source, chapter          # the setup cell
        assert all("Markdown(" in c.source for c in hidden[1:]), chapter     # the others write prose
        assert all("#|" not in c.source for c in nb.cells if c.cell_type == "code"), chapter


def test_offline_html_of_a_page_hides_setup_code(tmp_path):
    from nbconvert import HTMLExporter
    nb = reader_notebook(_executed_like("chapters/05-neocoder.ipynb"))
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    assert "from_params(globals())" not in page and "<summary>Parameters this page ran with</summary>" in page
    assert page.index("Code creativity") < page.index("<details")
    # every other cell's code is folded: one click shows it, its output stays on the page
    assert page.count('<details class="creval-code">') == sum(
        1 for c in nb.cells if c.metadata.get("creval_folded"))
    assert "<summary>Code</summary>\n<pre>table(report.table1(recs))</pre>" in page
    assert page.count("table1(recs)") == 1                       # only inside the folded block, not as a code cell


def test_preface_lists_every_chapter_without_quarto_attributes():
    text = (REPO / "index.qmd").read_text()
    body = preface_html(text)
    assert "{.unnumbered}" in text and "{.unnumbered}" not in body and "<h1>Preface</h1>" in body
    listed = [f for _, f in book_structure() if f.endswith(".ipynb")]
    book = {s.chapter: s.name for s in STUDIES.values() if s.book}
    assert len(book) >= 9 and sorted(listed) == sorted(book), (
        f"one chapter per book study: add {sorted(set(book) - set(listed))} to _quarto.yml; "
        f"no study declares {sorted(set(listed) - set(book))}")
    for f in listed:
        t = json.loads((REPO / f).read_text())["cells"][0]["source"][0].lstrip("# ").strip()
        assert f"<em>{t}</em>" in body, f"index.qmd: list the chapter *{t}* ({f}) in the preface"


def test_report_card_shows_run_folders_relative_to_the_data_home(tmp_path, monkeypatch):
    from creval.studies.reportcard import report
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    t = report.table_sources({"sources": pd.DataFrame([{"study": "aut", "run_dir": str(tmp_path / "runs/x/aut/1")},
                                                        {"study": "rethinking", "run_dir": "/elsewhere/r"}])})
    assert list(t["run_dir"]) == ["runs/x/aut/1", "/elsewhere/r"]
