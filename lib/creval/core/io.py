"""Reading and fetching files: JSONL (tolerant of a torn last line), JSON rows, xlsx, CSV, and downloads
checked against a pinned sha256. Every dataset loader and the run store read through these; a file that
cannot be read is a :class:`CrevalError` naming the file."""
from __future__ import annotations

import csv
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


def _dataset_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise CrevalError(f"cannot read dataset file {path}: {e}", "check the path and its permissions") from None


def read_json(path: Path):
    """The JSON value of a dataset file (any shape); a CrevalError naming the file if it cannot be read."""
    try:
        return json.loads(_dataset_text(path))
    except json.JSONDecodeError as e:
        raise CrevalError(f"dataset file {path} is not valid JSON: {e}", "repair or replace the file") from None


def read_json_rows(path: Path) -> list[dict]:
    """Rows of a ``.json`` (list, or ``{"rows": [...]}``) or ``.jsonl`` file; CrevalError if malformed."""
    if path.suffix == ".jsonl":
        rows = []
        for n, line in enumerate(_dataset_text(path).splitlines(), start=1):   # the file's own line numbers
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise CrevalError(f"dataset file {path}: line {n} is not valid JSON ({e.msg} at column {e.colno})",
                                  "repair or remove that line") from None
    else:
        data = read_json(path)
        rows = data.get("rows", data) if isinstance(data, dict) else data
        rows = [r.get("row", r) if isinstance(r, dict) else r for r in rows]
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


def read_csv_rows(path: Path, delimiter: str = ",", quoting: int = csv.QUOTE_MINIMAL,
                  encoding: str = "utf-8-sig") -> list[dict]:
    """Rows of a CSV/TSV file keyed by its header; lines starting with ``#`` before the header are comments."""
    try:
        with open(path, encoding=encoding, newline="") as f:
            lines = [line for line in f]
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        rows = list(csv.DictReader(lines, delimiter=delimiter, quoting=quoting))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise CrevalError(f"cannot read dataset file {path}: {e}", "check the path or replace the file") from None
    if rows and None in rows[0]:
        raise CrevalError(f"dataset file {path}: row 1 has more fields than the header",
                          "repair or replace the file")
    return rows


def read_any(path: Path) -> list[dict]:
    """Rows of a ``.xlsx``, ``.json``, ``.jsonl`` or ``.csv`` file."""
    if path.suffix == ".xlsx":
        return read_xlsx_rows(path)
    if path.suffix in (".json", ".jsonl"):
        return read_json_rows(path)
    if path.suffix == ".csv":
        return read_csv_rows(path)
    raise CrevalError(f"dataset file {path} has an unsupported type {path.suffix!r}",
                      "give a .xlsx, .json, .jsonl or .csv file")


class ChecksumError(ValueError):
    """A downloaded file whose sha256 is not the pinned one (it is not kept)."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def offline() -> bool:
    return os.environ.get("CREVAL_OFFLINE") == "1"


def download(url: str, dest: Path, expect_sha256: str | None = None, timeout: float = TIMEOUT_S) -> Path:
    """Fetch ``url`` to ``dest`` atomically. Raises ``ConnectionError`` when ``CREVAL_OFFLINE=1``, httpx
    errors when unreachable, and :class:`ChecksumError` (nothing written) when the bytes do not hash to
    ``expect_sha256``."""
    if offline():
        raise ConnectionError("CREVAL_OFFLINE=1")
    import httpx
    r = httpx.get(url, timeout=timeout, follow_redirects=True)
    r.raise_for_status()
    got = hashlib.sha256(r.content).hexdigest()
    if expect_sha256 and got != expect_sha256:
        raise ChecksumError(f"sha256 of {url} is {got[:12]}…, not the pinned {expect_sha256[:12]}…")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    tmp.write_bytes(r.content)
    tmp.replace(dest)
    return dest


def download_rows(dataset: str, split: str, dest: Path, pages: int = 3) -> Path:
    """Up to ``100 * pages`` rows of a Hugging Face dataset via the datasets-server JSON API."""
    if offline():
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


