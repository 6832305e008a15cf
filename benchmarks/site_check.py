"""Check a built book site as a reader meets it (issue 43's acceptance), and measure its weight.

    python benchmarks/site_check.py [SITE] [--params params/default.yaml] [--json OUT]

SITE (default ``_book``) is what ``creval book`` rendered. In headless Chromium, from files, with the network
switched off (an unreachable proxy), it opens every chapter page and every study's item browser: each table, a
filter on its first filter column, and its first item. It reads every CSV and Parquet download with pandas and
compares it with the study's records (read through the registry: nothing runs). It reports the site's weight (all
of it, the browsers, the downloads) and every problem it finds: a traceback or exception shown on a page, a bare
NaN, a resource loaded from the network, a browser that opens no item, a download that differs from the records.
Exit 1 when it finds any problem. Needs ``chromium`` (``make browser`` installs Debian's).
"""
from __future__ import annotations

import argparse
import html as htmllib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from creval.studies.links import shown

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--proxy-server=127.0.0.1:9",
         "--proxy-bypass-list=<-loopback>", "--virtual-time-budget=8000"]
SHOWN_PROBLEMS = {"traceback": re.compile(r"Traceback \(most recent call last\)"),
                  "exception shown": re.compile(r"\b\w+(Error|Exception): "),
                  "bare NaN": re.compile(r"(?<![\w-])(NaN|nan)(?![\w-])")}
REMOTE = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=[\"']https?://", re.I)


def browser() -> str:
    found = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                 None)
    if not found:
        sys.exit("site_check: no chromium (run `make browser`)")
    return found


def dom(page: Path, address: str = "") -> str:
    """The page's DOM after its scripts ran, from the file, with the network unreachable."""
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run([browser(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri() + address],
                           capture_output=True, text=True, timeout=180)
    if r.returncode:
        raise RuntimeError(f"chromium failed on {page.name}{address}: {r.stderr[-500:]}")
    return r.stdout


def visible_text(doc: str) -> str:
    """The text a reader sees: scripts, styles and embedded data dropped, tags stripped."""
    doc = re.sub(r"<(script|style)\b.*?</\1>", " ", doc, flags=re.S | re.I)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", doc))


def shown_problems(text: str, only: tuple[str, ...] = tuple(SHOWN_PROBLEMS)) -> list[str]:
    out = []
    for name, pattern in ((n, SHOWN_PROBLEMS[n]) for n in only):
        for m in pattern.finditer(text):
            out.append(f"{name}: ...{' '.join(text[max(0, m.start() - 60):m.end() + 60].split())}...")
    return out


def check_chapter(page: Path) -> list[str]:
    raw = page.read_text(errors="replace")
    problems = [f"loads from the network: {m.group(0)[:120]}" for m in REMOTE.finditer(raw)]
    return problems + shown_problems(visible_text(dom(page)))


def payload_of(page: Path) -> dict:
    raw = page.read_text()
    m = re.search(r'id="creval-data"[^>]*>(.*?)</script>', raw, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def check_browser(page: Path) -> list[str]:
    """Open each table, a filter on its first filter column (its count checked against the data) and its
    first item."""
    problems, data = [], payload_of(page)
    for t in data["tables"]:
        name, rows = t["name"], t["rows"]
        address = f"#t={quote(name)}&i=0"
        flt = next(iter(t.get("filters") or []), None)
        want = None
        if flt is not None:
            k = t["columns"].index(flt)
            value = next((r[k] for r in rows if r[k] not in (None, "")), None)
            if value is not None:
                address = f"#t={quote(name)}&f.{quote(flt)}={quote(shown(value))}&i=0"
                want = sum(1 for r in rows if r[k] == value)
        doc = dom(page, address)
        seen = doc.split('id="creval-data"', 1)[0]
        if 'id="open-item"' not in seen:
            problems.append(f"{page.name} {address}: no item opened")
        if want is not None and f"{want:,} of {len(rows):,} rows" not in seen and f"{want} of {len(rows)} rows" \
                not in seen:
            problems.append(f"{page.name} {address}: the filter should show {want} of {len(rows)} rows")
        # an item's own content may hold a traceback (a generated program's stderr): only a bare NaN counts here
        problems += [f"{page.name} {address}: {p}" for p in shown_problems(visible_text(seen), only=("bare NaN",))]
    return problems


def same(a: pd.Series, b: pd.Series) -> bool:
    """Equal as a reader compares them: numbers to 1e-9, everything else as its JSON text."""
    try:
        x, y = pd.to_numeric(a), pd.to_numeric(b)
        return bool(((x - y).abs() <= 1e-9 * (1 + y.abs())) | (x.isna() & y.isna())).all()
    except (ValueError, TypeError):
        norm = lambda v: "" if v is None or (isinstance(v, float) and v != v) else (  # noqa: E731
            v.lower() if v in ("True", "False") else v if isinstance(v, str)
            else json.dumps(v, sort_keys=True, default=str))
        return [norm(v) for v in a] == [norm(v) for v in b]


def check_downloads(site: Path, params: dict) -> list[str]:
    """Every CSV and Parquet download against the study's records, column by column (scalar columns)."""
    from creval.studies.contract import is_finished
    from creval.studies.registry import STUDIES
    problems = []
    for study in STUDIES.values():
        folder = site / "downloads" / study.name
        if not study.book or not folder.exists():
            continue
        cfg = study.make_config(params)
        if not is_finished(cfg):
            problems.append(f"{study.name}: downloads written but its run is not finished here")
            continue
        recs = study.records(cfg)
        for table in study.tables:
            if not (recs.root / f"{table}.jsonl").exists():
                continue
            want = pd.DataFrame(recs.rows(table))
            for kind, read in (("csv", pd.read_csv), ("parquet", pd.read_parquet)):
                f = folder / f"{table}.{kind}"
                if not f.exists():
                    problems.append(f"{study.name}/{table}.{kind}: missing")
                    continue
                try:
                    got = read(f)
                except pd.errors.EmptyDataError:      # a table with no rows: a CSV with no header
                    got = pd.DataFrame()
                if len(got) != len(want):
                    problems.append(f"{study.name}/{table}.{kind}: {len(got)} rows, the records {len(want)}")
                    continue
                for col in want.columns:
                    scalar = want[col].map(lambda v: v is None or isinstance(v, (int, float, str, bool))).all()
                    if col not in got.columns:
                        problems.append(f"{study.name}/{table}.{kind}: column {col} missing")
                    elif scalar and not same(got[col], want[col]):
                        problems.append(f"{study.name}/{table}.{kind}: column {col} differs from the records")
    return problems


def weight(site: Path) -> dict:
    mb = lambda p: round(sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6, 2) if p.exists() else 0  # noqa: E731
    return {"site_mb": mb(site), "browse_mb": mb(site / "browse"), "downloads_mb": mb(site / "downloads"),
            "chapters_mb": mb(site / "chapters"),
            "largest_pages": sorted(((f.relative_to(site).as_posix(), round(f.stat().st_size / 1e6, 2))
                                     for f in site.rglob("*.html")), key=lambda x: -x[1])[:5]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default="_book")
    ap.add_argument("--params", default="params/default.yaml")
    ap.add_argument("--json", help="write the report here as JSON")
    args = ap.parse_args()
    import yaml
    site, params = Path(args.site).resolve(), yaml.safe_load(Path(args.params).read_text()) or {}
    t0, problems = time.time(), {}
    for page in sorted((site / "chapters").glob("*.html")) + [site / "index.html"]:
        if page.exists():
            problems[page.name] = check_chapter(page)
            print(f"{page.name}: {len(problems[page.name])} problem(s)", flush=True)
    for page in sorted((site / "browse").glob("*.html")):
        problems[f"browse/{page.name}"] = check_browser(page)
        print(f"browse/{page.name}: {len(problems[f'browse/{page.name}'])} problem(s)", flush=True)
    problems["downloads"] = check_downloads(site, params)
    print(f"downloads: {len(problems['downloads'])} problem(s)", flush=True)
    report = {"weight": weight(site), "seconds": round(time.time() - t0, 1),
              "problems": {k: v for k, v in problems.items() if v}}
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
