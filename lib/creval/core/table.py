"""A user's table of texts: one text per row of a ``.csv``, ``.jsonl`` or ``.txt`` file, read with the column
names the user gives (the text, an id, labels, groups), and the per-text results written back as CSV or JSONL.

Every problem with the file is one :class:`CrevalError` that names the file and, where one is at fault, the
column or row: a missing column lists the columns the file has; an empty text names its row and id.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from creval.core.errors import CrevalError

SUFFIXES = (".csv", ".jsonl", ".txt")


@dataclass
class TextTable:
    """The rows of one file: ``ids[i]`` and ``texts[i]`` of row i, and every column of that row in ``rows[i]``."""
    path: Path
    ids: list[str]
    texts: list[str]
    rows: list[dict]
    text_column: str = "text"
    id_column: str | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def column(self, name: str) -> list:
        """The values of column ``name``, one per row (a CrevalError naming the file when it has none)."""
        if not self.rows or name not in self.rows[0]:
            have = ", ".join(self.rows[0]) if self.rows else "none"
            raise CrevalError(f"{self.path}: no column {name!r} (its columns: {have})",
                              f"name one of its columns, or add a column {name!r}")
        lacking = next((i for i, r in enumerate(self.rows, start=1) if name not in r), None)
        if lacking is not None:
            raise CrevalError(f"{self.path}: row {lacking} has no field {name!r} (it is missing, not empty)",
                              f"give every row a {name!r} field")
        return [r.get(name) for r in self.rows]

    def numbers(self, name: str) -> list[float]:
        """Column ``name`` as numbers; a value that is not a number is an error naming its row."""
        out = []
        for i, v in enumerate(self.column(name), start=1):
            try:
                x = float(v)
            except (TypeError, ValueError):
                if v is None or str(v).strip() == "":
                    raise CrevalError(f"{self.path}: column {name!r}, row {i} (id {self.ids[i - 1]}) is empty",
                                      "give a number in every row of that column") from None
                raise CrevalError(f"{self.path}: column {name!r}, row {i} (id {self.ids[i - 1]}): {v!r} is not a "
                                  "number", "give a number in every row of that column") from None
            if math.isnan(x) or math.isinf(x):      # "nan" written out, or a value beyond a float ("inf", "1e999")
                what = f"holds {v!r}, not a number" if math.isnan(x) else f"holds {v!r}, an infinite value"
                raise CrevalError(f"{self.path}: column {name!r}, row {i} (id {self.ids[i - 1]}) {what}",
                                  "give a finite number in every row of that column")
            out.append(x)
        return out


SEPARATORS = {"\t": "tab", ";": "semicolon", "|": "bar"}
"""Other separators a one-column header may betray (a spreadsheet's export in another locale uses ``;``)."""


def _csv_rows(p: Path, raw: str) -> list[dict]:
    """The rows of a CSV file; a row with more or fewer fields than the header is refused, naming its line (a
    text with unquoted commas would otherwise be graded cut short), with a hint when another separator is used."""
    try:
        records = list(csv.reader(io.StringIO(raw)))
    except csv.Error as e:
        raise CrevalError(f"{p}: not a readable CSV file ({e})", "repair the file") from None
    records = [r for r in records if r]                 # blank lines carry no row
    if not records:
        return []
    header = records[0]
    other = next((sep for sep in SEPARATORS if len(header) == 1 and sep in header[0]), None)
    if other:
        raise CrevalError(f"{p}: the header {header[0][:60]!r} holds {SEPARATORS[other]}s: the file looks "
                          f"{SEPARATORS[other]}-separated, not comma-separated",
                          "save it comma-separated (quote texts that hold commas)")
    if len(set(header)) != len(header):
        twice = sorted({h for h in header if header.count(h) > 1})
        raise CrevalError(f"{p}: column(s) {', '.join(map(repr, twice))} appear twice in the header",
                          "give every column its own name")
    rows = []
    for i, rec in enumerate(records[1:], start=1):
        if len(rec) != len(header):
            more = "more" if len(rec) > len(header) else "fewer"
            raise CrevalError(f"{p}: row {i} has {len(rec)} fields, {more} than the header's {len(header)} "
                              f"(it starts {','.join(rec)[:60]!r})",
                              "quote fields that hold commas (\"like, this\") so each row has one field per column")
        rows.append(dict(zip(header, rec)))
    return rows


def _raw_rows(p: Path) -> list[dict]:
    try:
        raw = p.read_text(encoding="utf-8-sig")
    except (UnicodeDecodeError, OSError) as e:
        raise CrevalError(f"{p}: cannot read it as UTF-8 text ({e})", "save the file as UTF-8") from None
    suffix = p.suffix.lower()
    if suffix == ".txt":
        return [{"text": line.strip()} for line in raw.splitlines() if line.strip()]
    if suffix == ".csv":
        return _csv_rows(p, raw)
    rows = []
    for n, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise CrevalError(f"{p}: line {n} is not valid JSON", "write one JSON object per line") from None
        if not isinstance(row, dict):
            raise CrevalError(f"{p}: line {n} is not a JSON object", 'write rows like {"id": "a1", "text": "..."}')
        rows.append(row)
    return rows


def read_table(path: str | Path, text: str = "text", id: str | None = None,
               allow_empty: bool = False, repeated: bool = False) -> TextTable:
    """The texts of ``path`` (``.csv``, ``.jsonl``; ``.txt``: one text per non-empty line, no other column)
    from column ``text``, their ids from column ``id`` (default: a column named ``id`` where the file has one,
    else the row number, 0-based). Errors: no such
    file, an unsupported type, no rows, a missing column, a repeated id, or (unless ``allow_empty``) an empty
    text. ``repeated``: a long file (one row per text and rater) whose ids repeat by design."""
    p = Path(path)
    if not p.exists():
        raise CrevalError(f"{p}: no such file", "give a .csv, .jsonl or .txt file of texts")
    if p.suffix.lower() not in SUFFIXES:
        raise CrevalError(f"{p}: unsupported file type {p.suffix or '(none)'}", "use .csv, .jsonl or .txt")
    rows = _raw_rows(p)
    if not rows:
        raise CrevalError(f"{p}: contains no texts", "put at least one text in it")
    if id is None and "id" in rows[0]:
        id = "id"
    table = TextTable(p, [], [], rows, text, id)
    texts = table.column(text)
    ids = [str(v) for v in table.column(id)] if id else [str(i) for i in range(len(rows))]
    seen: dict[str, int] = {}
    for i, (k, t) in enumerate(zip(ids, texts), start=1):
        if k in seen and not repeated:
            raise CrevalError(f"{p}: id {k!r} of column {id!r} appears on rows {seen[k]} and {i}",
                              "give every row its own id")
        seen[k] = i
        if not isinstance(t, str) and t is not None:
            raise CrevalError(f"{p}: column {text!r}, row {i} (id {k}) is not a string", "give text in that column")
        if not allow_empty and not (t or "").strip():
            raise CrevalError(f"{p}: column {text!r}, row {i} (id {k}) is empty",
                              "remove that row or give it a text")
    table.ids, table.texts = ids, [t or "" for t in texts]
    return table


def check_lengths(path, n: int, **columns: Sequence) -> None:
    """A CrevalError naming the first of ``columns`` whose length is not ``n`` (one value per text)."""
    for name, values in columns.items():
        if values is not None and len(values) != n:
            raise CrevalError(f"{path}: {name} has {len(values)} values for {n} texts",
                              "give one value per text")


def _plain(v):
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v


def guard_output(out: str | Path, *inputs: str | Path | None, warn=None) -> None:
    """Before anything is computed (issue 63): an output ``out`` that is one of the ``inputs`` (the same file,
    through any path or link) is refused in one sentence, so a command never replaces the texts and ratings it
    read; an existing ``out`` that will be replaced is said so through ``warn`` (one line)."""
    o = Path(out)
    for i in inputs:
        if i and Path(i).exists() and o.exists() and o.resolve() == Path(i).resolve():
            raise CrevalError(f"--out {out} is the input file {i}: writing it would replace the texts it was read from",
                              "give --out a new file (or a folder)")
    if o.is_file() and warn is not None:
        warn(f"--out {out} exists: it will be replaced")


def guard_folder(out: str | Path, names: Sequence[str], *inputs: str | Path | None, warn=None) -> Path:
    """An output folder ``out``, checked before anything is computed: refused in one sentence when it is a file,
    and each of its files ``names`` held to :func:`guard_output` against ``inputs``. Returns it as a Path."""
    o = Path(out)
    if o.exists() and not o.is_dir():
        raise CrevalError(f"--out {out}: a file, not a folder", "give a folder (it is made if missing)")
    for name in names:
        guard_output(o / name, *inputs, warn=warn)
    return o


def write_rows(path: str | Path, rows: Sequence[dict]) -> Path:
    """Write ``rows`` to ``path``: JSONL when it ends in ``.jsonl`` (NaN written as null), else CSV (NaN as an
    empty cell). The columns are those of the first row, then any new ones in the order met."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    if p.suffix.lower() == ".jsonl":
        p.write_text("".join(json.dumps({k: (None if _plain(v) == "" and v != "" else v) for k, v in r.items()})
                             + "\n" for r in rows), encoding="utf-8")
        return p
    with open(p, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: _plain(r.get(k)) for k in cols})
    return p
