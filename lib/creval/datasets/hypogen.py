"""HypoGen (``UniverseTBD/hypogen-dr1``, O'Neill et al. 2025): bit/flip research ideas for the hypogen domain.

Found through :mod:`creval.datasets.base` (env ``CREVAL_HYPOGEN_DIR``; staged ``hypogen/`` holds only 5 real
rows in ``hypogen_dr1_samples/samples.json``). The download reads up to 300 train rows from the Hugging Face
datasets-server API; that answer is not a fixed file, so it has no pinned sha256. The bundled sample
(``data/samples/hypogen/samples.json``) is 5 items written for this project in the dataset's fields.
Problem id: ``hypogen-<paper_id>``.
"""
from __future__ import annotations

from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import download_rows, read_any
from creval.datasets.base import Dataset, Source, resolve, table_file

DATASET = Dataset(
    name="hypogen", env="CREVAL_HYPOGEN_DIR", shared="hypogen",
    files={"rows": ("samples.json", "hypogen_dr1_samples/samples.json", "rows.json", "hypogen.json",
                    "hypogen.jsonl", "train.jsonl")},
    required=("rows",),
    fetch=lambda dest: download_rows("UniverseTBD/hypogen-dr1", "train", dest / "rows.json"),
    file_ok=True,
    how="set CREVAL_HYPOGEN_DIR to a file or folder of hypogen-dr1 rows (JSON/JSONL with bit, flip)")


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)


def domain_rows(given: str | Path | None = None) -> tuple[list[dict], Source]:
    """HypoGen items as fields ``id, bit, flip, title, hidden_chain_of_reasoning`` (the dataset's own chain
    of reasoning is kept aside, never shown)."""
    src = source(given, allow_download=True)
    f = table_file(DATASET, src, "rows")
    rows = read_any(f)
    if rows and not {"bit", "flip"} <= set(rows[0]):
        raise CrevalError(f"{f}: HypoGen rows need 'bit' and 'flip' fields", f"found fields {sorted(rows[0])}")
    return [{"id": f"hypogen-{r.get('paper_id', i)}", "bit": str(r["bit"]).strip(), "flip": str(r["flip"]).strip(),
             "title": r.get("title", ""), "hidden_chain_of_reasoning": r.get("chain_of_reasoning", "")}
            for i, r in enumerate(rows) if r.get("bit") and r.get("flip")], Source(src.kind, f)
