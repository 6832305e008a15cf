"""Human validation of the judges on MacGyver ``benchmark_results`` (Tian et al. 2024) annotations.

Ground truth. Each benchmarked solution carries one human annotation; we map it to two binary labels:

| annotation                     | feasibility | effectiveness |
|--------------------------------|-------------|---------------|
| correct_efficient              | True        | True          |
| correct_inefficient            | True        | False         |
| wrong_partial_correct          | False       | False         |
| wrong_entire_wrong_solution    | False       | False         |
| wrong_fail_solvability_status  | False       | False         |
| correct_unsolvable             | excluded by default (``include_unsolvable=True``: True / False) |

``wrong_fail_solvability_status`` (a plan for an impossible problem, or "impossible" for a solvable one)
offers no working plan, so it is not feasible. ``correct_unsolvable`` answers "this cannot be done"
correctly; there is no plan whose feasibility or effectiveness a judge could rate, so by default such
rows are left out of the sample. Safety has no human label in this data and is not validated here.

Problem texts come from ``problem_solution_pair.xlsx`` (columns ``ID``, ``Problem``), read with openpyxl.
Data folder: ``$CREVAL_MACGYVER_DIR``, else ``<repo>/../shared/data/macgyver/data``, else the tiny
illustrative sample ``data/samples/macgyver_human_sample.jsonl`` (written for this project, NOT real
annotations: it only lets the pipeline run without the data).

The metrics of judges against these labels (accuracy, AUARC, kappa, coverage) are
:func:`creval.measures.stats.agreement`.
"""
from __future__ import annotations

import json
import os
import random
import re
from functools import lru_cache
from pathlib import Path

from creval.core import paths
from creval.core.io import read_xlsx_rows
from creval.core.errors import CrevalError

FEASIBLE = {"correct_efficient": True, "correct_inefficient": True, "correct_unsolvable": True,
            "wrong_partial_correct": False, "wrong_entire_wrong_solution": False,
            "wrong_fail_solvability_status": False}
EFFECTIVE = {"correct_efficient": True}
SAMPLE_FILE = "macgyver_human_sample.jsonl"


def data_dir() -> Path | None:
    env = os.environ.get("CREVAL_MACGYVER_DIR")
    root = paths.dataset_dir("CREVAL_MACGYVER_DIR", "macgyver")
    for c in (root, root / "data"):
        if (c / "benchmark_results_flat.jsonl").exists() or (c / "benchmark_results.json").exists():
            return c
    if env:
        raise CrevalError(f"CREVAL_MACGYVER_DIR={env} has no benchmark_results_flat.jsonl",
                          "point it at the MacGyver data folder or unset it to use the bundled sample")
    return None


def labels_for(annotation: str) -> dict:
    return {"feasibility": FEASIBLE.get(annotation, False), "effectiveness": EFFECTIVE.get(annotation, False)}


def clean(text: str) -> str:
    text = re.sub(r"<br\s*/?>", "\n", str(text or ""), flags=re.I).replace("\r", "")
    return re.sub(r"\n\s*\n+", "\n", text).strip()


@lru_cache(maxsize=2)
def problem_texts(folder: str) -> dict[str, str]:
    f = Path(folder) / "problem_solution_pair.xlsx"
    if not f.exists():
        raise CrevalError(f"{f} is missing", "copy problem_solution_pair.xlsx next to benchmark_results")
    rows = read_xlsx_rows(f)
    if rows and not {"ID", "Problem"} <= set(rows[0]):
        raise CrevalError(f"{f} has no ID/Problem columns", "use MacGyver's problem_solution_pair.xlsx")
    return {str(r["ID"]): clean(r["Problem"]) for r in rows if r.get("ID") is not None}


def load_annotations(folder: Path | None = None, include_unsolvable: bool = False) -> tuple[list[dict], str]:
    """All usable rows ``{pair_id, problem_id, solver, annotation, problem, solution, labels}`` and the source."""
    folder = folder if folder is not None else data_dir()
    if folder is None:
        src = paths.samples_dir() / SAMPLE_FILE
        raw = [json.loads(l) for l in src.read_text().splitlines() if l.strip()]
        source = f"bundled illustrative sample {src.name} (NOT real annotations)"
        texts = {str(r["problem_id"]): r["problem"] for r in raw}
    else:
        f = Path(folder) / "benchmark_results_flat.jsonl"
        raw = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
        texts = problem_texts(str(folder))
        source = str(f)
    rows = []
    for i, r in enumerate(raw):
        ann = r.get("annotation")
        if ann not in FEASIBLE or (ann == "correct_unsolvable" and not include_unsolvable):
            continue
        pid = str(r["problem_id"])
        if pid not in texts or not str(r.get("solution") or "").strip():
            continue
        rows.append({"pair_id": f"{pid}::{r['model']}::{i}", "problem_id": pid, "solver": r["model"],
                     "annotation": ann, "problem": texts[pid], "solution": clean(r["solution"]),
                     "labels": labels_for(ann)})
    return rows, source


def sample_pairs(n: int, seed: int = 0, folder: Path | None = None, include_unsolvable: bool = False) -> list[dict]:
    """A fixed random sample of ``n`` human-labelled pairs (same ``seed`` -> same pairs)."""
    rows, source = load_annotations(folder, include_unsolvable)
    rng = random.Random(seed)
    picked = rng.sample(rows, min(n, len(rows)))
    for r in picked:
        r["source"] = source
    return picked
