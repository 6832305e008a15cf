"""The appendix pages (issue 53): the verdict rule and the departures are read from docs/ when the site is built
(included, never copied), beside a glossary and a bibliography whose every entry links an arXiv page or a DOI;
the offline site and Quarto's staged project both carry them."""
import re

from creval.book.render import appendix_files, appendix_title, expanded, render_offline, stage_quarto
from creval.core.paths import REPO


def test_the_rule_and_the_departures_are_the_docs_themselves():
    files = appendix_files()
    assert files[:2] == ["appendices/verdicts.qmd", "appendices/departures.qmd"]
    assert expanded(REPO / files[0]) == (REPO / "docs/verdicts.md").read_text() + "\n"
    assert appendix_title(REPO / files[0]) == "How a verdict is decided"
    assert all((REPO / f).exists() for f in files)


def test_every_bibliography_entry_links_its_paper():
    text = (REPO / "appendices/bibliography.qmd").read_text()
    entries = re.findall(r"^- \*\*.+?(?=^- |^## |\Z)", text, re.S | re.M)
    assert len(entries) >= 12
    for e in entries:
        assert re.search(r"\]\(https://(arxiv\.org/abs/\d{4}\.\d{4,5}|doi\.org/10\.\S+)\)", e), e


def test_the_offline_site_and_the_quarto_stage_carry_the_appendices(tmp_path):
    (tmp_path / "chapters").mkdir()
    render_offline(tmp_path)
    site = tmp_path / "site"
    rule = (site / "appendices/verdicts.html").read_text()
    assert "<h1>How a verdict is decided</h1>" in rule and "<table>" in rule and "{{<" not in rule
    assert 'href="../appendices/glossary.html"' in rule and 'href="../index.html"' in rule
    index = (site / "index.html").read_text()
    assert 'href="appendices/bibliography.html">Bibliography</a>' in index
    assert 'href="https://arxiv.org/abs/2407.09007"' in (site / "appendices/bibliography.html").read_text()
    stage = stage_quarto(tmp_path)
    assert (stage / "appendices/verdicts.qmd").exists() and (stage / "docs/verdicts.md").exists()
    assert "appendices/bibliography.qmd" in (stage / "_quarto.yml").read_text()
    assert "overflow-x: auto" in (stage / "styles.css").read_text()             # the css _quarto.yml names


def test_the_preface_links_each_chapter_s_page_and_the_papers():
    from creval.book.render import preface_html
    body = preface_html((REPO / "index.qmd").read_text())
    assert '<em>Code creativity (NeoCoder)</em> (<a href="chapters/05-neocoder.html">page</a>)' in body
    assert ".ipynb" not in body and 'href="https://arxiv.org/abs/2407.09007"' in body
