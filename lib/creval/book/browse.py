"""The item browser: one self-contained HTML page per study listing every row of every table it wrote.

The page holds its study's rows as JSON inside the page (``<script type="application/json">``), so it opens
from the built site and as a local file (``file://``, JupyterLab) with the network off. Its script
(``assets/browser.html``) shows one table at a time, a page of rows at a time, with a filter per column
that has few values (dataset, model, verdict, parse state...) and a text search; a row opens into every field
(prompts, outputs, transcripts, clusters, rounds) and the rows of the study's other tables that share its ids
(a verdict's transcript, a problem's steps). The state lives in the address (``#t=verdicts&f.model=x&i=3``),
so a link can open the browser filtered, or on one item.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creval.studies.links import address  # noqa: F401 - the links chapters write, here for the book

ASSET = Path(__file__).with_name("assets") / "browser.html"
PLACEHOLDER = "/*CREVAL_DATA*/"
MAX_LIST = 500              # a list longer than this (token log-probs...) is cut, saying how much was left out
MAX_TEXT = 200_000          # characters of one string (a full transcript fits)
PAGE_BUDGET = 15_000_000    # bytes of one page's data; past it, long values are cut shorter (:data:`SHORT`)
MAX_FILTERS = 6
MAX_LEVELS = 40             # a column with more distinct values is searched, not filtered
PREFERRED = re.compile(r"dataset|domain|model|verdict|pars|agree|judge|criterion|label|source|kind|split|set\b|"
                       r"temperature|solver|state|status", re.I)
KEY = re.compile(r"(^|_)(id|uid|key)$|^(item|pair|problem|criterion|judge|story|prompt_id)$", re.I)
CONTEXT = re.compile(r"^(model|domain|dataset|temperature|mode|criterion|judge)$", re.I)   # narrow a match on ids


@dataclass(frozen=True)
class Cut:
    """How long a string (characters) and a list (elements) a page holds before cutting it."""
    text: int = MAX_TEXT
    items: int = MAX_LIST


FULL, SHORT = Cut(), Cut(2_000, 50)


def plain(v: Any, cut: Cut = FULL) -> Any:
    """``v`` as JSON can hold it: NaN and infinities become None (shown as "not recorded"), numpy scalars
    Python numbers, strings and lists longer than ``cut`` allows cut, saying how much was left out."""
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, str):
        return v if len(v) <= cut.text else v[:cut.text] + f" [... {len(v) - cut.text} more characters]"
    if isinstance(v, dict):
        return {str(k): plain(x, cut) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        kept = [plain(x, cut) for x in v[:cut.items]]
        return kept + ([f"[... {len(v) - cut.items} more]"] if len(v) > cut.items else [])
    if hasattr(v, "item") and not hasattr(v, "__len__"):
        return plain(v.item(), cut)
    if hasattr(v, "tolist"):
        return plain(v.tolist(), cut)
    return v if v is None or isinstance(v, (bool, int)) else str(v)


def declared_columns(kind: Any) -> list[str]:
    """The columns a record type declares, in its order (none for an untyped table)."""
    if not dataclasses.is_dataclass(kind):
        return []
    return [f.metadata.get("column", f.name) for f in dataclasses.fields(kind) if "spread" not in f.metadata]


def columns_of(rows: list[dict], kind: Any = None) -> list[str]:
    """Every column of ``rows``: the record type's first (those present), then the others as they come."""
    seen = dict.fromkeys(k for r in rows for k in r)
    return [c for c in declared_columns(kind) if c in seen] + [c for c in seen if c not in declared_columns(kind)]


def is_level(v: Any) -> bool:
    """Whether ``v`` can be one value of a filter: missing, a short string, a boolean or a whole number (a
    measured fraction is continuous: it is searched, not filtered)."""
    if isinstance(v, float):
        return v.is_integer() or math.isnan(v)
    return v is None or isinstance(v, (bool, int)) or isinstance(v, str) and len(v) <= 80


def filter_columns(columns: list[str], rows: list[dict]) -> list[str]:
    """The columns a reader filters on: short and discrete, with 2 to :data:`MAX_LEVELS` values; those named like a
    dataset, model, verdict, parse state or agreement first; at most :data:`MAX_FILTERS`."""
    good = []
    for c in columns:
        values = {json.dumps(plain(r.get(c))) for r in rows if is_level(r.get(c))}
        if all(is_level(r.get(c)) for r in rows) and 2 <= len(values) <= MAX_LEVELS:
            good.append(c)
    return sorted(good, key=lambda c: (not PREFERRED.search(c), columns.index(c)))[:MAX_FILTERS]


def shared_columns(tables: dict[str, list[str]], pattern: re.Pattern) -> list[str]:
    """The columns named like ``pattern`` that two or more tables share."""
    counts: dict[str, int] = {}
    for cols in tables.values():
        for c in cols:
            counts[c] = counts.get(c, 0) + 1
    return sorted(c for c, n in counts.items() if n > 1 and pattern.search(c))


def key_columns(tables: dict[str, list[str]]) -> list[str]:
    """Id-like columns that two or more tables share: how the browser finds an item's rows elsewhere (a
    problem's steps, a verdict's transcript)."""
    return shared_columns(tables, KEY)


def context_columns(tables: dict[str, list[str]]) -> list[str]:
    """Shared columns that narrow a match on ids where both tables hold them (the same problem's steps of the
    same model and temperature), never a match by themselves."""
    return shared_columns(tables, CONTEXT)


AGREES = "agrees with people"
VERDICTS, LABELS = ("verdict",), ("label", "human_label")


def yes_no(v: Any) -> bool | None:
    """A verdict or label as True/False (``yes``/``no``, 1/0, booleans); None for anything else."""
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    return {"yes": True, "no": False, "true": True, "false": False}.get(str(v).strip().lower())


def with_agreement(rows: list[dict]) -> list[dict]:
    """``rows`` with :data:`AGREES` (the judge's yes/no verdict equals the people's label; None where either is
    missing) when they hold both a verdict and a human label column; else unchanged."""
    cols = set().union(*rows) if rows else set()
    verdict = next((c for c in VERDICTS if c in cols), None)
    label = next((c for c in LABELS if c in cols), None)
    if verdict is None or label is None:
        return rows

    def agrees(r: dict) -> bool | None:
        v, h = yes_no(r.get(verdict)), yes_no(r.get(label))
        return None if v is None or h is None else v == h
    return [{**r, AGREES: agrees(r)} for r in rows]


LISTED = 8                  # columns the list shows; an opened item shows every one
LABEL = re.compile(r"label|human|verdict|word|agree|correct|pass|parse", re.I)
SCORE = re.compile(r"score|rating|auroc|rho|mean|prob|entropy|index|novel|rank|value|share", re.I)


def short_column(c: str, rows: list[dict]) -> bool:
    """Whether every value of column ``c`` fits a list cell: a number, a boolean, missing or a short string."""
    return all(is_level(r.get(c)) or isinstance(r.get(c), float) for r in rows)


def listed_columns(columns: list[str], rows: list[dict], n: int = LISTED) -> list[str]:
    """The ``n`` columns the list shows, key columns first: ids, then the people's label and the verdict,
    then scores, then the other short columns in their order (a long text or a list is read in the opened
    item, not in a list cell)."""
    def rank(c: str) -> int:
        if KEY.search(c):
            return 0
        if LABEL.search(c):
            return 1
        if SCORE.search(c) and all(r.get(c) is None or isinstance(r.get(c), (int, float)) for r in rows):
            return 2
        return 3 if short_column(c, rows) else 4
    return sorted(columns, key=lambda c: (rank(c), columns.index(c)))[:n]


def table_payload(name: str, rows: list[dict], kind: Any = None, cut: Cut = FULL) -> dict:
    """One table as the page holds it: its columns, the columns its list shows (:func:`listed_columns`), the
    filter columns, and each row as a list of values."""
    rows = with_agreement(rows)
    cols = columns_of(rows, kind)
    return {"name": name, "record": getattr(kind, "__name__", "") if kind not in (None, dict) else "",
            "columns": cols, "listed": listed_columns(cols, rows), "filters": filter_columns(cols, rows),
            "rows": [[plain(r.get(c), cut) for c in cols] for r in rows]}


def study_payload(study: str, tables: dict[str, tuple[list[dict], Any]], links: dict | None = None,
                  cut: Cut = FULL) -> dict:
    """The page's data: ``tables`` maps a table name to (its rows, its record type); ``links`` (chapter,
    downloads) are addresses relative to the page."""
    out = [table_payload(n, rows, kind, cut) for n, (rows, kind) in tables.items() if rows]
    columns = {t["name"]: t["columns"] for t in out}
    note = "" if cut == FULL else (f"This study's rows are many: on this page a text is cut at {cut.text:,} "
                                   f"characters and a list at {cut.items} elements; the downloads hold them whole.")
    return {"study": study, "tables": out, "keys": key_columns(columns), "context": context_columns(columns),
            "links": links or {}, "note": note}


def fitted_payload(study: str, tables: dict[str, tuple[list[dict], Any]], links: dict | None = None,
                   budget: int = PAGE_BUDGET) -> dict:
    """:func:`study_payload`, with long values cut shorter (:data:`SHORT`) when the page would pass ``budget``
    bytes of data: the site stays small enough to ship, the downloads keep everything."""
    payload = study_payload(study, tables, links)
    return payload if len(embed(payload).encode()) <= budget else study_payload(study, tables, links, SHORT)


def embed(payload: dict) -> str:
    """``payload`` as JSON safe inside a ``<script>`` element (no ``</`` can close it early)."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")


def page(payload: dict) -> str:
    """The browser page of one study: the asset with the study's data in place."""
    text = ASSET.read_text()
    title = f"Items of the {payload['study']} study"
    return text.replace("<title>creval items</title>", f"<title>{title}</title>").replace(PLACEHOLDER,
                                                                                      embed(payload))


def write_page(payload: dict, folder: Path) -> Path:
    """Write ``folder/<study>.html`` and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{payload['study']}.html"
    out.write_text(page(payload))
    return out
