"""BookMIA (``swj0419/BookMIA``, Shi et al. 2024): book excerpts whose first and last sentence become the
starter and ending of the bookmia (creative writing) domain.

Found through :mod:`creval.datasets.base` (env ``CREVAL_BOOKMIA_DIR``; not staged in ``../shared``). The
download reads up to 300 rows from the Hugging Face datasets-server API (no fixed file, so no pinned
sha256). The bundled sample (``data/samples/bookmia/bookmia.jsonl``) is 5 starter/ending pairs written
for this project. Problem id: ``bookmia-<book_id>-<snippet_id>``.
"""
from __future__ import annotations

from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import download_rows, read_any
from creval.core.text import split_sentences
from creval.datasets.base import Dataset, Source, resolve, table_file

DATASET = Dataset(
    name="bookmia", env="CREVAL_BOOKMIA_DIR", shared="bookmia",
    files={"rows": ("bookmia.jsonl", "BookMIA.jsonl", "bookmia.json", "rows.json")},
    required=("rows",),
    fetch=lambda dest: download_rows("swj0419/BookMIA", "train", dest / "rows.json"),
    file_ok=True,
    how="set CREVAL_BOOKMIA_DIR to a file or folder of BookMIA rows (JSON/JSONL with snippet, or starter and ending)")


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)


def domain_rows(given: str | Path | None = None) -> tuple[list[dict], Source]:
    """Starter/ending pairs as fields ``id, starter, ending, book``: given directly, or the first and last
    sentence of a BookMIA ``snippet`` (snippets of fewer than 3 sentences are skipped)."""
    src = source(given, allow_download=True)
    f = table_file(DATASET, src, "rows")
    rows = read_any(f)
    if rows and not ({"starter", "ending"} <= set(rows[0]) or "snippet" in rows[0]):
        raise CrevalError(f"{f}: BookMIA rows need 'snippet' or both 'starter' and 'ending'",
                          f"found fields {sorted(rows[0])}")
    out = []
    for i, r in enumerate(rows):
        if r.get("starter") and r.get("ending"):
            starter, ending = str(r["starter"]).strip(), str(r["ending"]).strip()
        else:
            sents = split_sentences(r.get("snippet") or "")
            if len(sents) < 3:
                continue
            starter, ending = sents[0], sents[-1]
        pid = f"bookmia-{r.get('book_id', 'x')}-{r.get('snippet_id', i)}".replace(" ", "_")
        out.append({"id": pid, "starter": starter, "ending": ending, "book": r.get("book", "")})
    return out, Source(src.kind, f)
