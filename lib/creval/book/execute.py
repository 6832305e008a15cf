"""Execute the chapters with papermill: the book's structure from ``_quarto.yml``, each chapter run in
its own kernel with the parameters it declares, its model calls streamed to a ledger file. The parameters
cell is folded here (:func:`fold_parameters`); the ``creval`` papermill engine (``book/engine.py``) calls it."""
from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path

import yaml

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.core.ledger import CallRecord, Ledger
from creval.studies.config import with_new_names
from creval.studies.registry import STUDIES, renames

ENGINE = "creval"           # book/engine.py, found through the package's papermill.engine entry point
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


_ASSIGN = re.compile(r"^(\w+)(\s*=\s*)(.*?)(\s*#.*)?$")


def merge_injected(parameters_src: str, injected_src: str) -> str:
    """The ``parameters`` cell with each value papermill injected written in place (comments kept); a value
    injected under the old name of a key the cell declares is written to that key."""
    values = {}
    for node in ast.parse(injected_src).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.get_source_segment(injected_src, node.value)
    own = {m.group(1) for m in map(_ASSIGN.match, parameters_src.splitlines()) if m}
    values = with_new_names(values, [(old, new) for old, new in renames() if new in own])
    out = []
    for line in parameters_src.splitlines():
        m = _ASSIGN.match(line)
        if m and m.group(1) in values:
            value, comment = values.pop(m.group(1)), m.group(4) or ""
            line = f"{m.group(1)}{m.group(2)}{value}"
            line = (line.ljust(len(m.group(1) + m.group(2) + m.group(3))) + comment) if comment else line
        out.append(line)
    out += [f"{k} = {v}" for k, v in values.items()]
    return "\n".join(out)


def cell_source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def fold_parameters(nb) -> bool:
    """Fold papermill's injected-parameters cell into the chapter's own parameters cell (in place), so the
    notebook shows each parameter once, with the value it runs with and its comment. True if it folded."""
    cells = nb["cells"]
    tags = [c.get("metadata", {}).get("tags", []) for c in cells]
    own = next((i for i, t in enumerate(tags) if "parameters" in t), None)
    inj = next((i for i, t in enumerate(tags) if "injected-parameters" in t), None)
    if own is None or inj is None:
        return False
    cells[own]["source"] = merge_injected(cell_source(cells[own]), cell_source(cells[inj]))
    cells[own]["metadata"]["tags"] = [*tags[own], "injected-parameters-merged"]
    del cells[inj]
    return True


def failing_cell(nb) -> tuple[int, str, str] | None:
    """(cell number counted from 1, its first source line, the error) of the first cell of an executed notebook
    that raised; None when none did."""
    for i, c in enumerate(nb["cells"], start=1):
        for o in c.get("outputs", []) if c["cell_type"] == "code" else []:
            if o.get("output_type") == "error":
                first = next((ln for ln in cell_source(c).splitlines() if ln.strip() and not ln.startswith("#")), "")
                return i, first.strip(), f"{o.get('ename')}: {o.get('evalue')}"
    return None


def chapter_study(chapter: str):
    """The study whose chapter is ``chapter``, or None."""
    return next((s for s in STUDIES.values() if Path(s.chapter).name == Path(chapter).name), None)


def chapter_parameters(chapter: str, params: dict, declared: set[str]) -> dict:
    """What papermill injects into ``chapter``: the keys its ``parameters`` cell declares, shaped by its study's
    Config (a reader's upstream keys nested under ``upstream_params``)."""
    study = chapter_study(chapter)
    given = study.config.chapter_params(params) if study is not None else params
    return {k: v for k, v in given.items() if k in declared}


def chapter_records(chapter: str, params: dict) -> str:
    """The run folder of the study behind ``chapter`` (relative to the data home), or why it is not known."""
    study = chapter_study(chapter)
    if study is None:
        return "no study's records"
    try:
        run_dir = Path(study.make_config(params).run_dir)
    except Exception as e:        # noqa: BLE001 - the note must not hide the chapter's own error
        return f"the {study.name} study's records (run folder unknown: {type(e).__name__})"
    try:
        return f"the {study.name} study's records in {run_dir.relative_to(paths.home())}"
    except ValueError:
        return f"the {study.name} study's records in {run_dir.name}"


def failure_note(executed: Path, chapter: str, params: dict, e) -> str:
    """What broke a chapter: its cell, the error, and the records the cell read; also written into the executed
    notebook's metadata (``creval.failure``) so that rendering refuses to publish it."""
    import nbformat
    note = f"{e.ename}: {e.evalue}"
    try:
        nb = nbformat.read(str(executed), as_version=4)
        cell = failing_cell(nb)
        where = f"cell {cell[0]} (`{cell[1][:80]}`)" if cell else f"cell [{e.exec_count}]"
        note = f"{where} raised {note}, reading {chapter_records(chapter, params)}"
        nb.metadata.setdefault("creval", {})["failure"] = note
        nbformat.write(nb, str(executed))
    except (OSError, ValueError, KeyError):
        pass
    return note


def execute_chapters(params: dict, out: Path, only: list[str] | None = None, progress: bool = True,
                     skip: dict[str, str] | None = None, source: Path | None = None) -> list[dict]:
    """Run each chapter notebook with papermill (cwd = repo root). Returns one status row per chapter.
    ``skip``: chapter -> why it is not executed (its study failed; the error is in the book manifest).
    ``source``: the folder holding the chapters as committed (default: the checkout)."""
    import papermill as pm  # papermill and its kernel machinery load only to execute
    from papermill.engines import papermill_engines
    from tqdm.auto import tqdm
    try:
        papermill_engines.get_engine(ENGINE)
    except pm.PapermillException:
        raise CrevalError(f"papermill has no {ENGINE!r} engine (the package's entry point is missing)",
                          "reinstall creval: `make setup` (pip install -e .)") from None
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
            pm.execute_notebook(str(src), str(dst), parameters=chapter_parameters(ch, params, declared),
                                cwd=str(paths.REPO), kernel_name="python3", engine_name=ENGINE,
                                progress_bar=progress, request_save_on_cell_execute=True,
                                ledger_file=str(ledger_file), kernel_env=KERNEL_ENV)
        except pm.PapermillExecutionError as e:
            error = failure_note(dst, ch, params, e)
        status.append({"chapter": ch, "seconds": round(time.time() - t0, 2), "error": error,
                       "usage": Ledger.summarize([CallRecord(**r) for r in read_jsonl(ledger_file)])["total"]})
    return status


