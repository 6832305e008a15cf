"""The book pipeline: execute every chapter with papermill, then render the book.

``build_book(params, out)`` runs the chapters listed in ``_quarto.yml`` (in order) into
``out/chapters/*.ipynb`` and renders ``out/site``: with Quarto when the ``quarto`` binary exists,
otherwise an offline HTML book (nbconvert pages with a table of contents; plotly inlined, no CDN).
Each chapter's kernel streams its model calls to ``out/ledger/<chapter>.jsonl``; the build writes
``out/book-manifest.json`` with calls made vs served from cache, tokens, cost and timings per chapter.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from creval.book.execute import execute_chapters
from creval.book.params import effective_params
from creval.book.render import render_offline, render_quarto
from creval.core.io import read_jsonl
from creval.core.ledger import CallRecord, Ledger
from creval.core.runs import git_commit, package_versions


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
    manifest = {"params": effective_params(params), "git_commit": git_commit(), "packages": package_versions(),
                "seconds_execute": round(t_exec, 2), "seconds_total": round(time.time() - t0, 2),
                "chapters": status, "usage": Ledger.summarize(records), "index": str(index) if index else None,
                "renderer": renderer}
    (out / "book-manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    return manifest
