"""Every table of a study's run as files a reader downloads: CSV and Parquet per table, and a data dictionary
generated from the tables' record types (:mod:`creval.core.records`).

CSV holds one value per cell: a list or a mapping (a transcript, clusters, rounds) is written as its JSON text,
which ``json.loads`` reads back. Parquet keeps them as lists and structs; a column pyarrow cannot type (values
of mixed kinds) is written as JSON text there too, and the dictionary says which.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

COMMENT = re.compile(r"^\s+(\w+)\s*:[^#]*#\s*(.+)$")


def field_notes(kind: Any) -> dict[str, str]:
    """The comment written after each field of a record class (``name: str   # what it is``)."""
    try:
        source = inspect.getsource(kind)
    except (OSError, TypeError):
        return {}
    return {m.group(1): m.group(2).strip() for m in map(COMMENT.match, source.splitlines()) if m}


def type_name(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__name__", None) or str(t).replace("typing.", "")


def dictionary_rows(table: str, kind: Any) -> list[dict]:
    """One row per column the record type of ``table`` declares: its name, type, whether every row has it,
    and the field's comment ("" where there is none)."""
    if not dataclasses.is_dataclass(kind):
        return [{"table": table, "column": "(any)", "type": "untyped", "presence": "as written",
                 "meaning": "this table has no record type: its columns are what the run wrote"}]
    notes, out = field_notes(kind), []
    for f in dataclasses.fields(kind):
        if "spread" in f.metadata:
            column, presence = f"{f.metadata['spread']}<key>", "one column per key"
        else:
            column = f.metadata.get("column", f.name)
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            presence = "optional" if f.metadata.get("optional") else "every row" if required else "every row (default)"
        out.append({"table": table, "column": column, "type": type_name(f.type), "presence": presence,
                    "meaning": notes.get(f.name, "")})
    return out


def dictionary_markdown(rows: list[dict], record_names: dict[str, str]) -> str:
    """The data dictionary as Markdown, a section per table."""
    lines = ["# Data dictionary", "",
             "Lists and mappings are JSON text in the CSV files (`json.loads` reads them back).", ""]
    for table in dict.fromkeys(r["table"] for r in rows):
        lines += [f"## {table}" + (f" ({record_names[table]})" if record_names.get(table) else ""), "",
                  "| column | type | present in | meaning |", "|---|---|---|---|"]
        lines += [f"| {r['column']} | {r['type']} | {r['presence']} | {r['meaning'] or '-'} |"
                  for r in rows if r["table"] == table]
        lines.append("")
    return "\n".join(lines)


def nested(v: Any) -> bool:
    return isinstance(v, (list, dict, tuple))


def as_json_text(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``df`` with the nested values of ``cols`` written as JSON text."""
    out = df.copy()
    for c in cols:
        out[c] = [json.dumps(v, ensure_ascii=False) if nested(v) else v for v in out[c]]
    return out


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def as_text(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``df`` with every value of ``cols`` as text (JSON for all but strings; missing stays missing)."""
    out = df.copy()
    for c in cols:
        out[c] = [v if isinstance(v, str) or missing(v) else json.dumps(v, ensure_ascii=False) for v in out[c]]
    return out


def nested_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if df[c].dtype == object and any(nested(v) for v in df[c])]


def mixed_columns(df: pd.DataFrame) -> list[str]:
    """Object columns whose values are of more than one kind (besides missing): pyarrow cannot type them."""
    kinds = {c: {type(v).__name__ for v in df[c] if not missing(v)}
             for c in df.columns if df[c].dtype == object}
    return [c for c, k in kinds.items() if len(k) > 1]


def write_table(df: pd.DataFrame, folder: Path, table: str) -> dict:
    """``folder/<table>.csv`` and, when pyarrow is installed, ``<table>.parquet``; what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    as_json_text(df, nested_columns(df)).to_csv(folder / f"{table}.csv", index=False)
    done = {"table": table, "rows": len(df), "csv": f"{table}.csv", "parquet": None, "json_in_parquet": []}
    try:
        import pyarrow  # noqa: F401 - only to know whether Parquet can be written
    except ImportError:
        return done
    mixed = mixed_columns(df)
    try:
        as_text(df, mixed).to_parquet(folder / f"{table}.parquet", index=False)
    except (ValueError, TypeError, ArithmeticError):       # pyarrow's typing errors derive from these
        mixed = list(dict.fromkeys(mixed + nested_columns(df)))
        try:
            as_text(df, mixed).to_parquet(folder / f"{table}.parquet", index=False)
        except (ValueError, TypeError, ArithmeticError) as e:
            print(f"downloads: {table}.parquet not written ({type(e).__name__}: {str(e)[:120]})")
            return done
    return {**done, "parquet": f"{table}.parquet", "json_in_parquet": mixed}


def write_downloads(tables: dict[str, tuple[list[dict], Any]], folder: Path) -> list[dict]:
    """Every table of ``tables`` (name -> (rows, record type)) into ``folder`` with ``dictionary.md`` and
    ``dictionary.csv``; one row per table written."""
    written, dictionary = [], []
    for name, (rows, kind) in tables.items():
        written.append(write_table(pd.DataFrame(rows), folder, name))
        dictionary += dictionary_rows(name, kind)
    folder.mkdir(parents=True, exist_ok=True)
    names = {n: getattr(k, "__name__", "") for n, (_, k) in tables.items() if dataclasses.is_dataclass(k)}
    (folder / "dictionary.md").write_text(dictionary_markdown(dictionary, names))
    pd.DataFrame(dictionary).to_csv(folder / "dictionary.csv", index=False)
    return written
