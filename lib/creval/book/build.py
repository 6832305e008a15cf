"""The book pipeline: run every study (in dependency order), execute every chapter with papermill, render.

``build_book(params, out)`` first runs each study (:mod:`creval.book.studies`: every model, judge and sandbox
call, into the studies' run folders), then runs the chapters listed in ``_quarto.yml`` (in order) into
``out/chapters/*.ipynb`` and renders ``out/site``: with Quarto when the ``quarto`` binary exists,
otherwise an offline HTML book (nbconvert pages with a table of contents; plotly inlined, no CDN).
Each chapter's kernel streams its model calls to ``out/ledger/<chapter>.jsonl``; the build writes
``out/book-manifest.json`` with calls made vs served from cache, tokens, cost and timings per study and
per chapter (a chapter only reads records, so its calls should be 0).
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from creval.book.execute import execute_chapters
from creval.book.params import effective_params
from creval.book.publish import publish
from creval.book.render import render_offline, render_quarto
from creval.book.studies import measure_slow_models, run_studies, slowest_phases
from creval.core.io import read_jsonl
from creval.core.ledger import CallRecord, Ledger, merge_usage
from creval.core.runs import git_commit, package_versions
from creval.studies.registry import STUDIES


def build_book(params: dict, out: Path, only: list[str] | None = None, render: str = "auto",
               progress: bool = True, source: Path | None = None) -> dict:
    """Execute and render the whole book; returns (and writes) the book manifest. ``source``: the folder the
    chapter notebooks are read from (default: the checkout)."""
    out = Path(out)
    t0 = time.time()
    chosen = [n for n, s in STUDIES.items() if not only or any(o in Path(s.chapter).stem for o in only)]
    studies = run_studies(effective_params(params), chosen) if chosen else []
    t_studies = time.time() - t0
    failed = {STUDIES[r["study"]].chapter: r["error"] for r in studies if r["error"]}
    status = execute_chapters(params, out, only, progress, skip=failed, source=source)
    t_exec = time.time() - t0 - t_studies
    index, renderer = None, None
    if render != "none":
        use_quarto = render == "quarto" or (render == "auto" and bool(shutil.which("quarto")))
        index = render_quarto(out) if use_quarto else render_offline(out)
        renderer = "quarto" if use_quarto else "offline-html"
    t_pub = time.time()          # the item browsers and downloads (book/publish.py): never fails the book
    published = publish(out / "site", effective_params(params), chosen) if index is not None else []
    t_pub = time.time() - t_pub
    records = [CallRecord(**r) for f in sorted((out / "ledger").glob("*.jsonl")) for r in read_jsonl(f)]
    usage = merge_usage([Ledger.summarize(records)] + [{"total": r["usage"], "by_kind_model": r["by_kind_model"]}
                                                       for r in studies])   # chapters' calls + the studies' calls
    measure_slow_models(studies)
    manifest = {"params": effective_params(params), "git_commit": git_commit(), "packages": package_versions(),
                "seconds_studies": round(t_studies, 2), "seconds_execute": round(t_exec, 2),
                "seconds_total": round(time.time() - t0, 2), "studies": studies,
                "slowest_phases": slowest_phases(studies), "chapters": status, "usage": usage,
                "index": str(index) if index else None, "published": published,
                "seconds_publish": round(t_pub, 2),
                "renderer": renderer}
    (out / "book-manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    return manifest
