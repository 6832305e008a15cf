"""Links from a number in a chapter's sentence to the items behind it: the study's item browser
(``browse/<study>.html`` in the built site, written by :mod:`creval.book.publish`), opened on one table and
filtered to the rows the number counts.

How a chapter links a number: where its reading writes "0.85 on 40 parsed verdicts", it writes
``items("40 parsed verdicts", "convergent", "human_verdicts", {"judge": "retrieval"})`` instead, a Markdown
link. The address lives in the part of the URL after ``#``, which the page reads itself, so the link works
in the built site and from a local copy with the network off. A chapter page sits one folder below the site
root (``chapters/03-convergent.html``), hence ``site=".."``. Pure: strings in, a string out.
"""
from __future__ import annotations

from urllib.parse import quote


def address(study: str, table: str | None = None, filters: dict | None = None, item: int | None = None,
            site: str = "..") -> str:
    """The link to a study's browser from a page one folder below the site root, opened on ``table``, filtered
    by ``filters`` (column -> value as the page shows it) and on row ``item``: how a number links to its items."""
    parts = ([f"t={quote(table)}"] if table else []) + [f"f.{quote(str(k))}={quote(str(v))}"
                                                        for k, v in (filters or {}).items()]
    parts += [f"i={item}"] if item is not None else []
    return f"{site}/browse/{study}.html" + ("#" + "&".join(parts) if parts else "")


def items(text: str, study: str, table: str | None = None, filters: dict | None = None) -> str:
    """``text`` (a number and what it counts) as a Markdown link to those items in the study's browser."""
    label = str(text).replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({address(study, table, filters)})"
