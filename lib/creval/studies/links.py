"""Links from a number in a chapter's sentence to the items behind it: the study's item browser
(``browse/<study>.html`` in the built site, written by :mod:`creval.book.publish`), opened on one table and
filtered to the rows the number counts.

How a chapter links a number: where its reading writes "0.85 on 40 parsed verdicts", it writes
``items("40 parsed verdicts", "convergent", "human_verdicts", {"judge": "retrieval"})`` instead, a Markdown
link; a table cell takes :func:`anchor`, the same link as HTML. The address lives in the part of the URL
after ``#``, which the page reads itself, so the link works in the built site and from a local copy with the
network off. A chapter page sits one folder below the site root (``chapters/03-convergent.html``), hence
``site=".."``. A filter's value is written as the page shows it (:func:`shown`: ``true``, ``3``, ``not
recorded``), so a boolean or whole-number column filters as a string column does. :func:`dead` lists the
links of a text that name a table, column or value the records do not have: the tests' check on every link.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any, Mapping
from urllib.parse import quote, unquote


def shown(v: Any) -> str:
    """``v`` as the browser page shows it and compares a filter with: ``not recorded`` for a missing value,
    ``true``/``false``, a whole float without its ``.0``, JSON for a list or dict (a numpy scalar as its value)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes, list, dict)):
        v = v.item()
    if v is None or isinstance(v, float) and v != v:
        return "not recorded"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return str(v)


def address(study: str, table: str | None = None, filters: dict | None = None, item: int | None = None,
            site: str = "..") -> str:
    """The link to a study's browser from a page one folder below the site root, opened on ``table``, filtered
    by ``filters`` (column -> value, written as the page shows it) and on row ``item``: how a number links to
    its items."""
    parts = ([f"t={quote(table)}"] if table else []) + [f"f.{quote(str(k))}={quote(shown(v))}"
                                                        for k, v in (filters or {}).items()]
    parts += [f"i={item}"] if item is not None else []
    return f"{site}/browse/{study}.html" + ("#" + "&".join(parts) if parts else "")


def items(text: str, study: str, table: str | None = None, filters: dict | None = None) -> str:
    """``text`` (a number and what it counts) as a Markdown link to those items in the study's browser."""
    label = str(text).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({address(study, table, filters)})"


def anchor(text: str, study: str, table: str | None = None, filters: dict | None = None) -> str:
    """:func:`items` as HTML, for a table cell (a chapter's table is HTML, where Markdown is not read)."""
    return f'<a href="{html.escape(address(study, table, filters))}">{html.escape(str(text))}</a>'


LINK = re.compile(r"browse/([\w-]+)\.html(?:#([^)\"'\s]*))?")


def targets(text: str) -> list[tuple[str, str | None, dict[str, str]]]:
    """Every browser link of ``text`` (Markdown or HTML) as ``(study, table, filters)``."""
    out = []
    for study, frag in LINK.findall(html.unescape(str(text))):
        table, filters = None, {}
        for part in filter(None, frag.split("&")):
            k, _, v = part.partition("=")
            if k == "t":
                table = unquote(v)
            elif k.startswith("f."):
                filters[unquote(k[2:])] = unquote(v)
        out.append((study, table, filters))
    return out


def dead(text: str, tables: Mapping[str, Mapping[str, list[dict]]]) -> list[str]:
    """The links of ``text`` the browsers could not follow, each with why: a study or table with no rows in
    ``tables`` (study -> table -> its rows, as the browser gets them), a filter on a column no row has, or a
    value no row shows. Empty when every link opens on at least one row."""
    bad = []
    for study, table, filters in targets(text):
        rows = list((tables.get(study) or {}).get(table or "", []))
        if not rows:
            bad.append(f"{study}: no table {table!r} with rows")
            continue
        cols = set().union(*rows)
        missing = [c for c in filters if c not in cols]
        if missing:
            bad.append(f"{study}/{table}: no column {missing[0]!r}")
        elif not any(all(shown(r.get(c)) == v for c, v in filters.items()) for r in rows):
            bad.append(f"{study}/{table}: no row with {filters}")
    return bad


def dead_in(text: str, recs) -> list[str]:
    """:func:`dead` against one study's records (``recs``: its :class:`~creval.studies.contract.Records`)."""
    def rows(table: str) -> list[dict]:
        try:
            return recs.rows(table)
        except (AttributeError, OSError):        # an undeclared table, or one the run did not write
            return []
    return dead(text, {recs.cfg.study: {t: rows(t) for t in {t for _, t, _ in targets(text)} if t}})
