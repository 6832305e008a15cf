"""Reading and fetching files: JSONL (tolerant of a torn last line), JSON rows, xlsx, and downloads
checked against a pinned sha256. Every dataset loader and the run store read through these."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from creval.core.errors import CrevalError

ROWS_API = "https://datasets-server.huggingface.co/rows?dataset={ds}&config=default&split={split}&offset={off}&length=100"
TIMEOUT_S = 4.0


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSONL file; a torn last line (a killed writer) is dropped, any other bad line is an error."""
    if not path.exists():
        return []
    rows, lines = [], path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break
            raise CrevalError(f"{path}: line {i + 1} is not valid JSON", "remove or repair that line") from None
    return rows


def read_json_rows(path: Path) -> list[dict]:
    """Rows of a ``.json`` (list, or ``{"rows": [...]}``) or ``.jsonl`` file; CrevalError if malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CrevalError(f"cannot read dataset file {path}: {e}", "check the path and its permissions") from None
    try:
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            rows = data.get("rows", data) if isinstance(data, dict) else data
            rows = [r.get("row", r) if isinstance(r, dict) else r for r in rows]
    except json.JSONDecodeError as e:
        raise CrevalError(f"dataset file {path} is not valid JSON: {e}", "repair or replace the file") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise CrevalError(f"dataset file {path} must hold a list of objects (one per problem)",
                          "use the dataset's own JSON/JSONL layout")
    return rows


def read_xlsx_rows(path: Path) -> list[dict]:
    """Rows of the first sheet of an xlsx file, keyed by the header row."""
    try:
        import openpyxl
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as e:   # openpyxl raises many types for corrupt files
        raise CrevalError(f"dataset file {path} is not a readable xlsx workbook: {e}", "replace the file") from None
    it = wb.worksheets[0].iter_rows(values_only=True)
    header = [str(h).strip() if h is not None else "" for h in next(it, [])]
    rows = [dict(zip(header, r)) for r in it if any(v is not None for v in r)]
    wb.close()
    return rows


def read_any(path: Path) -> list[dict]:
    if path.suffix == ".xlsx":
        return read_xlsx_rows(path)
    if path.suffix in (".json", ".jsonl"):
        return read_json_rows(path)
    raise CrevalError(f"dataset file {path} has an unsupported type {path.suffix!r}", "give a .xlsx, .json or .jsonl file")


def pick_file(folder: Path, preferred: list[str]) -> Path:
    """The dataset file inside ``folder``: the first preferred name present (also under ``data/``)."""
    for name in preferred:
        for cand in (folder / name, folder / "data" / name):
            if cand.exists():
                return cand
    raise CrevalError(f"no dataset file in {folder}", f"expected one of {preferred}")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(url: str, dest: Path, expect_sha256: str | None = None) -> Path:
    """Fetch ``url`` to ``dest`` (atomically); raises OSError-like exceptions when offline or on mismatch."""
    if os.environ.get("CREVAL_OFFLINE") == "1":
        raise ConnectionError("CREVAL_OFFLINE=1")
    import httpx
    r = httpx.get(url, timeout=TIMEOUT_S, follow_redirects=True)
    r.raise_for_status()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".partial")
    tmp.write_bytes(r.content)
    if expect_sha256 and sha256(tmp) != expect_sha256:
        tmp.unlink()
        raise ValueError(f"sha256 of {url} does not match the pinned {expect_sha256[:12]}…")
    tmp.replace(dest)
    return dest


def download_rows(dataset: str, split: str, dest: Path, pages: int = 3) -> Path:
    """Up to ``100 * pages`` rows of a Hugging Face dataset via the datasets-server JSON API."""
    if os.environ.get("CREVAL_OFFLINE") == "1":
        raise ConnectionError("CREVAL_OFFLINE=1")
    import httpx
    rows: list[dict] = []
    for p in range(pages):
        r = httpx.get(ROWS_API.format(ds=dataset, split=split, off=100 * p), timeout=TIMEOUT_S)
        r.raise_for_status()
        got = [x["row"] for x in r.json().get("rows", [])]
        rows.extend(got)
        if len(got) < 100:
            break
    if not rows:
        raise ValueError(f"{dataset}: no rows returned")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".partial")
    tmp.write_text(json.dumps(rows, ensure_ascii=False))
    tmp.replace(dest)
    return dest


