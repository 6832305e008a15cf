"""Render executed chapters: an offline HTML book (nbconvert pages with a table of contents; plotly.js
shipped once beside the pages, MathJax from PyPI, no CDN) or, when the ``quarto`` binary exists,
``quarto render``."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from creval.book.execute import book_structure, failing_cell, notebook_title
from creval.core import paths
from creval.core.errors import CrevalError
from creval.models.weights import package_dir


def book_title() -> str:
    return yaml.safe_load((paths.REPO / "_quarto.yml").read_text())["book"]["title"]


STYLE = """
body{margin:0} .creval-nav{position:fixed;top:0;left:0;bottom:0;width:250px;overflow-y:auto;background:#f7f7f9;
border-right:1px solid #ddd;padding:16px;font:14px/1.45 system-ui,sans-serif;box-sizing:border-box;z-index:10}
.creval-nav a{color:#1a4f8b;text-decoration:none;display:block;padding:3px 0}.creval-nav a.active{font-weight:700}
.creval-nav .part{margin-top:12px;font-weight:600;color:#555;text-transform:uppercase;font-size:12px}
.creval-main{margin-left:260px;padding:8px 24px;max-width:1100px}
.creval-nav h1{font-size:16px;margin:0 0 8px}
details.creval-parameters{margin:4px 0 8px;color:#555} details.creval-parameters summary{cursor:pointer}
details.creval-parameters pre{font-size:12px;background:#f7f7f9;padding:8px;overflow-x:auto}
details.creval-code{margin:2px 0;color:#555;font-size:13px} details.creval-code summary{cursor:pointer}
details.creval-code pre{font-size:12px;background:#f7f7f9;padding:8px;overflow-x:auto;white-space:pre}
.jp-RenderedHTMLCommon table{display:block;max-width:100%;overflow-x:auto}
.jp-RenderedHTMLCommon th{text-align:left!important} .jp-RenderedHTMLCommon td{vertical-align:top}
.jp-OutputArea-output{overflow-x:auto;max-width:100%}
"""


def _nav(entries: list[tuple[str | None, str, str]], active: str, prefix: str) -> str:
    items, part = [f"<h1>{html.escape(book_title())}</h1>"], None
    for p, href, title in entries:
        if p != part and p:
            items.append(f'<div class="part">{html.escape(p)}</div>')
        part = p
        cls = ' class="active"' if href == active else ""
        items.append(f'<a href="{prefix}{href}"{cls}>{html.escape(title)}</a>')
    return f'<nav class="creval-nav">{"".join(items)}</nav>'


def _strip_cdn(page: str) -> str:
    """Drop scripts loaded from a CDN (require.js, mermaid): the book must not depend on the network."""
    page = re.sub(r'<script[^>]+src="https?://[^"]+"[^>]*>\s*</script>', "", page)
    return re.sub(r'<script type="module">(?:(?!</script>).)*https://cdn(?:(?!</script>).)*</script>', "", page,
                  flags=re.S)


PLOTLY_FILE = "plotly.min.js"


def share_plotly(site: Path) -> int:
    """Replace the plotly.js each chapter inlines (once per notebook, for JupyterLab) by one shared
    ``site/plotly.min.js`` loaded by relative path: the book stays offline and ships the library once.
    Returns how many pages now load the shared copy."""
    import os

    from plotly.offline import get_plotlyjs
    inline = f'<script type="text/javascript">{get_plotlyjs()}</script>'
    n = 0
    for page in sorted(site.rglob("*.html")):
        text = page.read_text()
        if inline not in text:
            continue
        rel = os.path.relpath(site / PLOTLY_FILE, page.parent)
        page.write_text(text.replace(inline, f'<script type="text/javascript" src="{rel}"></script>'))
        n += 1
    if n:
        (site / PLOTLY_FILE).write_text(get_plotlyjs())
    return n


QUARTO_OPTION = re.compile(r"^#\|.*\n?", re.M)
ATTRIBUTES = re.compile(r"^(#+ .*?)\s*\{[.#][^}]*\}\s*$", re.M)


FOLDED = "creval_folded"      # metadata key of a code cell whose source the offline page shows folded


def folded_code(source: str) -> str:
    """A code cell's source as a ``<details>`` block that opens on a click (what Quarto's ``code-fold`` does)."""
    return (f'<details class="creval-code"><summary>Code</summary>\n<pre>{html.escape(source.strip())}</pre>\n'
            "</details>")


def reader_notebook(nb):
    """The executed notebook as the offline book shows it (in place): the parameters cell folded into a
    ``<details>`` block that opens on a click, every other code cell's source folded the same way (its output
    shown), the input of setup cells (tag ``hide-input``) hidden, Quarto's ``#|`` cell options dropped. The
    page starts with prose."""
    import nbformat
    cells = []
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code":
            cell.source = QUARTO_OPTION.sub("", cell.source)
        if cell.cell_type == "code" and "parameters" in tags:
            body = html.escape(cell.source.strip())
            cells.append(nbformat.v4.new_markdown_cell(
                f'<details class="creval-parameters"><summary>Parameters this page ran with</summary>\n'
                f"<pre>{body}</pre>\n</details>"))
            continue
        if cell.cell_type == "code" and "hide-input" in tags:
            cell.metadata.setdefault("transient", {})["remove_source"] = True
            if not cell.get("outputs"):
                continue
        elif cell.cell_type == "code" and cell.source.strip():
            cells.append(nbformat.v4.new_markdown_cell(folded_code(cell.source)))
            cell.metadata.setdefault("transient", {})["remove_source"] = True
            cell.metadata[FOLDED] = True
        cells.append(cell)
    nb.cells = cells
    return nb


def preface_html(text: str) -> str:
    """``index.qmd`` as HTML without Quarto: front matter and attribute syntax (``{.unnumbered}``) dropped, links
    to a chapter's notebook pointed at its page."""
    import mistune
    text = re.sub(r"^---.*?---\s*", "", text, flags=re.S)
    out = mistune.html(ATTRIBUTES.sub(r"\1", text))
    return re.sub(r'href="([^":]+)\.ipynb"', r'href="\1.html"', out)     # a chapter's page, as Quarto links it


INCLUDE = re.compile(r"\{\{<\s*include\s+(\S+)\s*>\}\}")


def appendix_files(quarto_file: Path | None = None) -> list[str]:
    """The book's appendix pages (``book: appendices:`` of ``_quarto.yml``), in order."""
    cfg = yaml.safe_load((quarto_file or paths.REPO / "_quarto.yml").read_text())
    return list(cfg["book"].get("appendices") or [])


def expanded(path: Path) -> str:
    """A ``.qmd`` page's Markdown with each ``{{< include file >}}`` replaced by that file (read now, at build
    time: the verdict rule and the departures are ``docs/*.md``, never copied into the site's sources)."""
    text = path.read_text()
    return INCLUDE.sub(lambda m: expanded(path.parent / m.group(1)), text)


def included_files(path: Path) -> list[Path]:
    """The files a ``.qmd`` page includes (what staging it for Quarto must copy beside it)."""
    return [(path.parent / m.group(1)).resolve() for m in INCLUDE.finditer(path.read_text())]


def appendix_title(path: Path) -> str:
    """An appendix page's title: its first heading."""
    m = re.search(r"^#\s+(.+?)\s*(\{[^}]*\})?\s*$", expanded(path), re.M)
    return m.group(1) if m else path.stem


def failed_chapters(out: Path) -> list[str]:
    """One line per executed chapter of ``out`` that raised: the chapter, the cell, the error and the records
    (the note :func:`creval.book.execute.failure_note` wrote, else the first error output found)."""
    lines = []
    for part, f in book_structure():
        path = out / f
        if not f.endswith(".ipynb") or not path.exists():
            continue
        nb = json.loads(path.read_text())
        note = nb.get("metadata", {}).get("creval", {}).get("failure")
        if not note:
            cell = failing_cell(nb)
            note = f"cell {cell[0]} (`{cell[1][:80]}`) raised {cell[2]}" if cell else None
        if note:
            lines.append(f"{f}: {note}")
    return lines


def refuse_failed(out: Path) -> None:
    """Stop before anything is published when a chapter raised: a page that opens with "An Exception was
    encountered" is never rendered."""
    bad = failed_chapters(out)
    if bad:
        raise CrevalError("a chapter failed, so the book is not rendered:\n  " + "\n  ".join(bad),
                          "fix the report function named in the traceback (see the executed notebook in "
                          f"{out.name}/chapters/), or rebuild only the other chapters with --chapters")


def render_offline(out: Path) -> Path:
    """Write ``out/site/index.html`` and one page per executed chapter, with a table of contents; refuses when
    a chapter raised (:func:`refuse_failed`)."""
    refuse_failed(out)
    import nbformat
    from nbconvert import HTMLExporter

    site = out / "site"
    (site / "chapters").mkdir(parents=True, exist_ok=True)
    entries = []
    for part, f in book_structure():
        if f.endswith(".ipynb") and not (out / f).exists():
            continue
        title = notebook_title(out / f) if f.endswith(".ipynb") else "Preface"
        entries.append((part, str(Path(f).with_suffix(".html")), title))
    (site / "appendices").mkdir(exist_ok=True)
    for f in appendix_files():
        entries.append(("Appendices", str(Path(f).with_suffix(".html")), appendix_title(paths.REPO / f)))
    exporter = HTMLExporter(template_name="lab", exclude_input_prompt=True, exclude_output_prompt=True)
    mathjax = package_dir("jupyter_server_mathjax")    # MathJax shipped on PyPI: formulas render offline
    if mathjax and not (site / "mathjax").exists():
        shutil.copytree(mathjax / "static", site / "mathjax")
    if mathjax:
        exporter.mathjax_url = "../mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
    for part, href, title in entries:
        depth = href.count("/")
        nav = _nav(entries, href, "../" * depth)
        if href == "index.html" or part == "Appendices":
            source = paths.REPO / ("index.qmd" if href == "index.html" else Path(href).with_suffix(".qmd"))
            body = preface_html(expanded(source))
            page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(book_title())}</title>"
                    f"<style>{STYLE} .creval-main{{font:16px/1.6 system-ui,sans-serif}}</style></head>"
                    f"<body>{nav}<main class='creval-main'>{body}</main></body></html>")
        else:
            nb = reader_notebook(nbformat.read(str(out / Path(href).with_suffix(".ipynb")), as_version=4))
            page, _ = exporter.from_notebook_node(nb)
            page = _strip_cdn(page)
            page = page.replace("</head>", f"<style>{STYLE}</style></head>", 1)
            page = re.sub(r"<body([^>]*)>", lambda m: f"<body{m.group(1)}>{nav}<div class='creval-main'>", page,
                          count=1)
            page = page.replace("</body>", "</div></body>", 1)
        (site / href).write_text(page)
    share_plotly(site)
    return site / "index.html"


def staged_quarto_config(text: str) -> str:
    """``_quarto.yml`` for a folder of chapters executed already: without the pre-render step (which executes
    the checkout's chapters, :mod:`creval.book.prerender`)."""
    cfg = yaml.safe_load(text)
    cfg.get("project", {}).pop("pre-render", None)
    return yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True)


def stage_quarto(out: Path) -> Path:
    """``out/quarto``: the book's Quarto project with the executed chapters of ``out/chapters``."""
    stage = out / "quarto"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    (stage / "_quarto.yml").write_text(staged_quarto_config((paths.REPO / "_quarto.yml").read_text()))
    for f in ("index.qmd", "references.bib", "styles.css"):
        if (paths.REPO / f).exists():
            shutil.copy(paths.REPO / f, stage / f)
    for f in appendix_files():           # the appendix pages and the docs they include, where they include them
        for src in [paths.REPO / f, *included_files(paths.REPO / f)]:
            dest = stage / src.resolve().relative_to(paths.REPO.resolve())
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest)
    shutil.copytree(out / "chapters", stage / "chapters")
    return stage


def render_quarto(out: Path) -> Path:
    """Stage the executed chapters beside ``_quarto.yml`` and run ``quarto render`` (no execution); refuses
    when a chapter raised (:func:`refuse_failed`)."""
    refuse_failed(out)
    stage = stage_quarto(out)
    r = subprocess.run(["quarto", "render", str(stage)], capture_output=True, text=True)
    if r.returncode != 0:
        raise CrevalError(f"quarto render failed:\n{r.stderr[-2000:]}",
                          "see the message above; the offline build still works")
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(stage / "_book", site)
    share_plotly(site)
    return site / "index.html"


