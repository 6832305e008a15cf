"""After the book is rendered: each study's item browser (``site/browse/<study>.html``) and its tables as
downloads (``site/downloads/<study>/``: CSV, Parquet, the data dictionary and an index page).

Only finished runs are read (through the study registry: nothing runs here), and nothing here may fail the
book: a study whose pages cannot be written gets one line on stderr and the others go on.
"""
from __future__ import annotations

import html
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from creval.book.browse import fitted_payload, write_page
from creval.book.downloads import write_downloads
from creval.studies.contract import is_finished
from creval.studies.registry import STUDIES, Study

BROWSE, DOWNLOADS = "browse", "downloads"


def chapter_href(study: Study) -> str:
    """The chapter's page, relative to a page one folder below the site root."""
    return "../" + str(Path(study.chapter).with_suffix(".html"))


def study_tables(study: Study, params: Mapping) -> dict[str, tuple[list[dict], Any]] | None:
    """Every table the study's finished run wrote (name -> (rows, record type)); None when the run is not
    finished (nothing is run to publish it)."""
    cfg = study.make_config(params)
    if not is_finished(cfg):
        return None
    recs = study.records(cfg)
    return {t: (recs.rows(t), kind) for t, kind in study.tables.items() if (recs.root / f"{t}.jsonl").exists()}


def link(href: str | None, text: str) -> str:
    return f"<a href='{html.escape(href)}'>{text}</a>" if href else "not written"


def downloads_index(study: str, written: list[dict]) -> str:
    """A page listing the study's files, each table with its row count, and the data dictionary."""
    rows = "".join(f"<tr><td>{html.escape(w['table'])}</td><td>{w['rows']}</td><td>{link(w['csv'], 'CSV')}</td>"
                   f"<td>{link(w['parquet'], 'Parquet')}</td>"
                   f"<td>{html.escape(', '.join(w['json_in_parquet'])) or '-'}</td></tr>" for w in written)
    name = html.escape(study)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Tables of the {name} study</title></head>"
            f"<body style='font:14px/1.5 system-ui,sans-serif;margin:18px'><h1>Tables of the {name} study</h1>"
            f"<p><a href='../../{BROWSE}/{name}.html'>browse the items</a> · <a href='dictionary.md'>data "
            f"dictionary</a> (<a href='dictionary.csv'>CSV</a>)</p>"
            f"<table border='1' cellpadding='4' style='border-collapse:collapse'><tr><th>table</th><th>rows</th>"
            f"<th>CSV</th><th>Parquet</th><th>JSON text in Parquet</th></tr>{rows}</table></body></html>")


def publish_study(study: Study, params: Mapping, site: Path) -> dict:
    """The browser page and downloads of one study; a row saying what was written (or why not)."""
    t0 = time.time()
    tables = study_tables(study, params)
    if tables is None:
        return {"study": study.name, "written": False, "why": "its run is not finished"}
    links = {"chapter": chapter_href(study), "downloads": f"../{DOWNLOADS}/{study.name}/index.html"}
    page = write_page(fitted_payload(study.name, tables, links), site / BROWSE)
    folder = site / DOWNLOADS / study.name
    written = write_downloads(tables, folder)
    (folder / "index.html").write_text(downloads_index(study.name, written))
    size = sum(f.stat().st_size for f in folder.iterdir()) + page.stat().st_size
    return {"study": study.name, "written": True, "rows": sum(len(r) for r, _ in tables.values()),
            "bytes": size, "page_bytes": page.stat().st_size, "seconds": round(time.time() - t0, 2)}


def publish(site: Path, params: Mapping, names: list[str] | None = None) -> list[dict]:
    """Every book study's browser and downloads under ``site`` (those in ``names`` when given). A study that
    fails is one line on stderr and a row with ``why``; it never stops the others nor the book."""
    out = []
    for study in STUDIES.values():
        if not study.book or (names is not None and study.name not in names):
            continue
        try:
            out.append(publish_study(study, params, Path(site)))
        except Exception as e:      # noqa: BLE001 - the browser is an extra: the book must not fail for it
            print(f"item browser of {study.name} not written: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            out.append({"study": study.name, "written": False, "why": f"{type(e).__name__}: {e}"})
    return out
