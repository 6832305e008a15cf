"""Execute the chapters with papermill: the book's structure from ``_quarto.yml``, each chapter run in
its own kernel with the parameters it declares, its model calls streamed to a ledger file."""
from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path

import papermill as pm
import yaml
from tqdm.auto import tqdm

from creval.book.engine import merge_injected, register_engine
from creval.core import paths
from creval.core.io import read_jsonl
from creval.core.ledger import CallRecord, Ledger

__all__ = ["book_structure", "declared_parameters", "execute_chapters", "merge_injected", "notebook_title"]
KERNEL_ENV = {"TQDM_DISABLE": "1"}      # progress is shown per cell by papermill, not as noise inside the pages


def book_structure(quarto_file: Path | None = None) -> list[tuple[str | None, str]]:
    """(part title or None, file) for every entry of ``_quarto.yml``'s book chapters, in order."""
    cfg = yaml.safe_load((quarto_file or paths.REPO / "_quarto.yml").read_text())
    out: list[tuple[str | None, str]] = []
    for entry in cfg["book"]["chapters"]:
        if isinstance(entry, str):
            out.append((None, entry))
        else:
            out += [(entry["part"], c) for c in entry["chapters"]]
    return out


def notebook_title(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            m = re.search(r"^#\s+(.+)$", "".join(c["source"]), re.M)
            if m:
                return m.group(1).strip()
    return nb_path.stem


def declared_parameters(nb_path: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters``."""
    nb = json.loads(Path(nb_path).read_text())
    for c in nb["cells"]:
        if "parameters" in c.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(c["source"]))
            return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}
    return set()


def execute_chapters(params: dict, out: Path, only: list[str] | None = None, progress: bool = True,
                     skip: dict[str, str] | None = None, source: Path | None = None) -> list[dict]:
    """Run each chapter notebook with papermill (cwd = repo root). Returns one status row per chapter.
    ``skip``: chapter -> why it is not executed (its study failed; the error is in the book manifest).
    ``source``: the folder holding the chapters as committed (default: the checkout)."""
    register_engine()
    chapters = [f for _, f in book_structure() if f.endswith(".ipynb")]
    if only:
        chapters = [c for c in chapters if any(o in Path(c).stem for o in only)]
    (out / "chapters").mkdir(parents=True, exist_ok=True)
    (out / "ledger").mkdir(parents=True, exist_ok=True)
    status = []
    for ch in tqdm(chapters, desc="chapters", disable=not progress):
        if skip and ch in skip:
            status.append({"chapter": ch, "seconds": 0.0, "error": f"not executed: its study failed ({skip[ch]})",
                           "usage": Ledger.summarize([])["total"]})
            continue
        src, dst = (source or paths.REPO) / ch, out / ch
        ledger_file = out / "ledger" / f"{Path(ch).stem}.jsonl"
        ledger_file.unlink(missing_ok=True)
        t0, error = time.time(), None
        declared = declared_parameters(src)             # inject only what the chapter declares
        try:
            pm.execute_notebook(str(src), str(dst), parameters={k: v for k, v in params.items() if k in declared},
                                cwd=str(paths.REPO), kernel_name="python3", engine_name="creval",
                                progress_bar=progress, request_save_on_cell_execute=True,
                                ledger_file=str(ledger_file), kernel_env=KERNEL_ENV)
        except pm.PapermillExecutionError as e:
            error = f"{e.ename}: {e.evalue}"
        status.append({"chapter": ch, "seconds": round(time.time() - t0, 2), "error": error,
                       "usage": Ledger.summarize([CallRecord(**r) for r in read_jsonl(ledger_file)])["total"]})
    return status


