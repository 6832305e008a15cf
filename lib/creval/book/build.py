"""The book pipeline: execute every chapter with papermill, then render the book.

``build_book(params, out)`` runs the chapters listed in ``_quarto.yml`` (in order) into
``out/chapters/*.ipynb`` and renders ``out/site``: with Quarto when the ``quarto`` binary exists,
otherwise an offline HTML book (nbconvert pages with a table of contents; plotly inlined, no CDN).
Each chapter's kernel streams its model calls to ``out/ledger/<chapter>.jsonl``; the build writes
``out/book-manifest.json`` with calls made vs served from cache, tokens, cost and timings per chapter.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import yaml

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.ledger import CallRecord, Ledger
from creval.models.registry import package_dir
from creval.core.io import read_jsonl
from creval.core.runs import git_commit, package_versions


def book_structure(quarto_file: Path | None = None) -> list[tuple[str | None, str]]:
    """(part title or None, file) for every entry of ``_quarto.yml``'s book chapters, in order."""
    cfg = yaml.safe_load((quarto_file or paths.REPO / "_quarto.yml").read_text())
    out: list[tuple[str | None, str]] = []
    for entry in cfg["book"]["chapters"]:
        if isinstance(entry, str):
            out.append((None, entry))
        else:
            out += [(entry["part"], c) for c in entry["chapters"]]
    return out


def book_title() -> str:
    return yaml.safe_load((paths.REPO / "_quarto.yml").read_text())["book"]["title"]


def load_params(path: str | Path, overrides: list[str] = ()) -> dict:
    """A flat parameter file plus ``key=value`` overrides (values parsed as YAML)."""
    p = Path(path)
    if not p.exists():
        raise CrevalError(f"parameter file {p} does not exist", "pass --params params/default.yaml or another profile")
    try:
        params = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise CrevalError(f"parameter file {p} is not valid YAML: {e}", "fix its syntax") from None
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise CrevalError(f"parameter file {p} must be a flat mapping of names to values", "see params/default.yaml")
    for o in overrides:
        if "=" not in o:
            raise CrevalError(f"override {o!r} is not key=value", "e.g. -p model=gpt-4o")
        k, v = o.split("=", 1)
        params[k.strip()] = yaml.safe_load(v)
    return params


def notebook_title(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            m = re.search(r"^#\s+(.+)$", "".join(c["source"]), re.M)
            if m:
                return m.group(1).strip()
    return nb_path.stem


def declared_parameters(nb_path: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters``."""
    import ast
    nb = json.loads(Path(nb_path).read_text())
    for c in nb["cells"]:
        if "parameters" in c.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(c["source"]))
            return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}
    return set()


def execute_chapters(params: dict, out: Path, only: list[str] | None = None, progress: bool = True) -> list[dict]:
    """Run each chapter notebook with papermill (cwd = repo root). Returns one status row per chapter."""
    import papermill as pm
    from tqdm.auto import tqdm

    chapters = [f for _, f in book_structure() if f.endswith(".ipynb")]
    if only:
        chapters = [c for c in chapters if any(o in Path(c).stem for o in only)]
    (out / "chapters").mkdir(parents=True, exist_ok=True)
    (out / "ledger").mkdir(parents=True, exist_ok=True)
    status = []
    for ch in tqdm(chapters, desc="chapters", disable=not progress):
        src, dst = paths.REPO / ch, out / ch
        ledger_file = out / "ledger" / f"{Path(ch).stem}.jsonl"
        ledger_file.unlink(missing_ok=True)
        os.environ["CREVAL_LEDGER_FILE"] = str(ledger_file)
        os.environ["TQDM_DISABLE"] = "1"        # progress is shown per cell here, not as noise inside the pages
        t0, error = time.time(), None
        declared = declared_parameters(src)             # inject only what the chapter declares
        try:
            pm.execute_notebook(str(src), str(dst), parameters={k: v for k, v in params.items() if k in declared}, cwd=str(paths.REPO), kernel_name="python3",
                                progress_bar=progress, request_save_on_cell_execute=True)
        except pm.PapermillExecutionError as e:
            error = f"{e.ename}: {e.evalue}"
        finally:
            os.environ.pop("CREVAL_LEDGER_FILE", None)
            os.environ.pop("TQDM_DISABLE", None)
        status.append({"chapter": ch, "seconds": round(time.time() - t0, 2), "error": error,
                       "usage": Ledger.summarize([CallRecord(**r) for r in read_jsonl(ledger_file)])["total"]})
    return status


# -- offline HTML rendering ---------------------------------------------------------------------
STYLE = """
body{margin:0} .creval-nav{position:fixed;top:0;left:0;bottom:0;width:250px;overflow-y:auto;background:#f7f7f9;
border-right:1px solid #ddd;padding:16px;font:14px/1.45 system-ui,sans-serif;box-sizing:border-box;z-index:10}
.creval-nav a{color:#1a4f8b;text-decoration:none;display:block;padding:3px 0}.creval-nav a.active{font-weight:700}
.creval-nav .part{margin-top:12px;font-weight:600;color:#555;text-transform:uppercase;font-size:12px}
.creval-main{margin-left:260px;padding:8px 24px;max-width:1100px}
.creval-nav h1{font-size:16px;margin:0 0 8px}
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
    return re.sub(r'<script type="module">(?:(?!</script>).)*https://cdn(?:(?!</script>).)*</script>', "", page, flags=re.S)


def render_offline(out: Path) -> Path:
    """Write ``out/site/index.html`` and one page per executed chapter, with a table of contents."""
    import mistune
    from nbconvert import HTMLExporter

    site = out / "site"
    (site / "chapters").mkdir(parents=True, exist_ok=True)
    entries = []
    for part, f in book_structure():
        if f.endswith(".ipynb") and not (out / f).exists():
            continue
        title = notebook_title(out / f) if f.endswith(".ipynb") else "Preface"
        entries.append((part, str(Path(f).with_suffix(".html")), title))
    exporter = HTMLExporter(template_name="lab", exclude_input_prompt=True, exclude_output_prompt=True)
    mathjax = package_dir("jupyter_server_mathjax")    # MathJax shipped on PyPI: formulas render offline
    if mathjax and not (site / "mathjax").exists():
        shutil.copytree(mathjax / "static", site / "mathjax")
    if mathjax:
        exporter.mathjax_url = "../mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
    for part, href, title in entries:
        depth = href.count("/")
        nav = _nav(entries, href, "../" * depth)
        if href == "index.html":
            text = re.sub(r"^---.*?---\s*", "", (paths.REPO / "index.qmd").read_text(), flags=re.S)
            body = mistune.html(text)
            page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(book_title())}</title>"
                    f"<style>{STYLE} .creval-main{{font:16px/1.6 system-ui,sans-serif}}</style></head>"
                    f"<body>{nav}<main class='creval-main'>{body}</main></body></html>")
        else:
            page, _ = exporter.from_filename(str(out / Path(href).with_suffix(".ipynb")))
            page = _strip_cdn(page)
            page = page.replace("</head>", f"<style>{STYLE}</style></head>", 1)
            page = re.sub(r"<body([^>]*)>", lambda m: f"<body{m.group(1)}>{nav}<div class='creval-main'>", page, count=1)
            page = page.replace("</body>", "</div></body>", 1)
        (site / href).write_text(page)
    return site / "index.html"


def render_quarto(out: Path) -> Path:
    """Stage the executed chapters beside ``_quarto.yml`` and run ``quarto render`` (no execution)."""
    stage = out / "quarto"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for f in ("_quarto.yml", "index.qmd", "references.bib"):
        if (paths.REPO / f).exists():
            shutil.copy(paths.REPO / f, stage / f)
    shutil.copytree(out / "chapters", stage / "chapters")
    r = subprocess.run(["quarto", "render", str(stage)], capture_output=True, text=True)
    if r.returncode != 0:
        raise CrevalError(f"quarto render failed:\n{r.stderr[-2000:]}", "see the message above; the offline build still works")
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(stage / "_book", site)
    return site / "index.html"


def build_book(params: dict, out: Path, only: list[str] | None = None, render: str = "auto",
               progress: bool = True) -> dict:
    """Execute and render the whole book; returns (and writes) the book manifest."""
    out = Path(out)
    t0 = time.time()
    status = execute_chapters(params, out, only, progress)
    t_exec = time.time() - t0
    index, renderer = None, None
    if render != "none":
        use_quarto = render == "quarto" or (render == "auto" and bool(shutil.which("quarto")))
        index = render_quarto(out) if use_quarto else render_offline(out)
        renderer = "quarto" if use_quarto else "offline-html"
    records = [CallRecord(**r) for f in sorted((out / "ledger").glob("*.jsonl")) for r in read_jsonl(f)]
    manifest = {"params": params, "git_commit": git_commit(), "packages": package_versions(),
                "seconds_execute": round(t_exec, 2), "seconds_total": round(time.time() - t0, 2),
                "chapters": status, "usage": Ledger.summarize(records), "index": str(index) if index else None,
                "renderer": renderer}
    (out / "book-manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    return manifest
