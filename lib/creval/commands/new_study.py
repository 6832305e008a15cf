"""``creval new-study NAME --reads STUDY [--calls-model]``: write a working study that reads another study's records.

It writes the package ``lib/creval/studies/<NAME>/`` (config, records, run, estimate, report, ``STUDY``), a unit
test of its report, its chapter ``chapters/<NN>-<NAME>.ipynb``, a part in ``_quarto.yml`` and the preface
(``index.qmd``), then rewrites ``params/default.yaml`` and the chapters' parameters cells (``creval sync-params``).
The study reads ``--reads`` by composition (:class:`creval.studies.reader.ReaderConfig`) and counts the rows of
every table it read; with ``--calls-model`` it also asks the model under test one question per table, as units,
and declares that phase (read by ``creval check`` and ``creval run``): a start that runs and passes the tests, to
be replaced by the real measure. docs/CONTRIBUTING.md starts from it.
"""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from string import Template

from creval.book.sync import sync
from creval.core import paths
from creval.core.errors import CrevalError
from creval.studies import registry
from creval.studies.scaffold import MODEL_FILES, PHASE_IMPORT, PHASES, REPORT_TEST, TEMPLATES

NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def register(subparsers) -> None:
    p = subparsers.add_parser("new-study", help="write a new study package and its chapter (for contributors)",
                              description="Write a working study that reads another study's records: its package "
                                          "under lib/creval/studies/, its chapter, its lines in _quarto.yml and "
                                          "index.qmd, and params/default.yaml regenerated. Edit it from there "
                                          "(docs/CONTRIBUTING.md).")
    p.add_argument("name", help="the study's name: lower case letters, digits and _ (its parameters start with it)")
    p.add_argument("--reads", action="append", required=True, metavar="STUDY",
                   help="a study whose records the new one reads (repeatable)")
    p.add_argument("--title", default=None, help="the chapter's title (default: the name, capitalised)")
    p.add_argument("--calls-model", action="store_true",
                   help="the study calls the model under test: its STUDY declares that phase (phases=, edit its "
                        "name and verbs), so `creval check` and `creval run` say where it cannot run")
    p.set_defaults(func=_run)


def _run(args) -> int:
    for f in create(args.name, tuple(args.reads), args.title, calls_model=args.calls_model):
        print(f"wrote {f}")
    return 0


def create(name: str, reads: tuple[str, ...], title: str | None = None, calls_model: bool = False) -> list[str]:
    """Write the study ``name`` reading ``reads`` into this checkout (``calls_model``: it declares a phase that calls
    the model under test); the files written or changed."""
    repo = paths.REPO
    if not NAME.match(name):
        raise CrevalError(f"study name {name!r} is not a lower-case Python name",
                          "use letters, digits and _, starting with a letter (e.g. wordlen)")
    test = Path("tests/unit") / f"test_{name}_report.py"
    if name in registry.STUDIES or (repo / "lib/creval/studies" / name).exists() or (repo / test).exists():
        raise CrevalError(f"a study or package named {name!r} exists already", "choose another name")
    for up in reads:
        registry.get_study(up)                                   # an unknown study: the error lists the known ones
    title = title or name.replace("_", " ").capitalize()
    number = 1 + max((int(m.group(1)) for f in (repo / "chapters").glob("*.ipynb")
                      if (m := re.match(r"(\d+)-", f.name))), default=0)
    chapter = f"chapters/{number:02d}-{name.replace('_', '-')}.ipynb"
    written = write_package(repo / "lib/creval/studies" / name, name, reads, title, chapter, calls_model)
    (repo / test).write_text(Template(REPORT_TEST).substitute(name=name))
    (repo / chapter).write_text(json.dumps(chapter_notebook(name, reads, title), indent=1, ensure_ascii=False) + "\n")
    add_to_quarto(repo / "_quarto.yml", chapter, title)
    add_to_preface(repo / "index.qmd", number, title, summary(reads))
    registry.register(discovered(name))
    changed = sync(write=True)
    done = [str(Path("lib/creval/studies") / name / f) for f in written] + [str(test), chapter, "_quarto.yml",
                                                                          "index.qmd"]
    return done + [c for c in changed if c not in done]


def discovered(name: str) -> registry.Study:
    """The ``STUDY`` named ``name``, found the way the registry finds every study (:func:`registry.discover`,
    which imports each package): the one just written, so the rest of this run can read it."""
    importlib.invalidate_caches()            # the package's folder was made after Python last listed its parent
    found = {s.name: s for s in registry.discover()}
    if name not in found:
        raise CrevalError(f"the package written for {name!r} declares no study of that name",
                          f"check STUDY in lib/creval/studies/{name}/__init__.py")
    return found[name]


def summary(reads: tuple[str, ...]) -> str:
    return f"rows and columns of every table of the {', '.join(reads)} records (a start: replace it by your measure)"


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def template_values(name: str, reads: tuple[str, ...], title: str, chapter: str, calls_model: bool = False) -> dict:
    """What the templates are filled with."""
    return {"name": name, "cls": class_name(name), "title": title, "chapter": chapter, "summary": summary(reads),
            "reads_repr": repr(reads), "reads_list": ", ".join(reads),
            "phase_import": PHASE_IMPORT if calls_model else "", "phases": PHASES if calls_model else ""}


def write_package(folder: Path, name: str, reads: tuple[str, ...], title: str, chapter: str,
                  calls_model: bool = False) -> list[str]:
    """The study's package: one file per part of the contract (docs/CONTRIBUTING.md)."""
    values = template_values(name, reads, title, chapter, calls_model)
    folder.mkdir(parents=True)
    files = {**TEMPLATES, **MODEL_FILES} if calls_model else TEMPLATES
    for f, text in files.items():
        (folder / f).write_text(sorted_imports(Template(text).substitute(values)))
    return list(files)


def sorted_imports(text: str) -> str:
    """Each run of one-line ``from creval...`` imports in module order (where the study's name falls among them
    depends on the name: the files pass the project's import-order check whatever it is)."""
    lines, out, run = text.split("\n"), [], []
    for line in lines + [""]:
        if line.startswith("from creval.") and "(" not in line:
            run.append(line)
            continue
        out += sorted(run, key=lambda s: s.split()[1]) + [line]
        run = []
    return "\n".join(out[:-1])


def _cell(kind: str, source: str, tags: tuple[str, ...] = (), hidden: bool = False) -> dict:
    lines = source.split("\n")
    cell = {"cell_type": kind, "id": "", "metadata": {}, "source": [x + "\n" for x in lines[:-1]] + [lines[-1]]}
    if tags:
        cell["metadata"]["tags"] = list(tags)
    if hidden:
        cell["metadata"]["jupyter"] = {"source_hidden": True}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def chapter_notebook(name: str, reads: tuple[str, ...], title: str) -> dict:
    """The chapter: its title and prose, the parameters cell (filled by ``sync-params``), the setup cell and a
    table."""
    cls = class_name(name)
    cells = [
        _cell("markdown", f"# {title}\n\nThis chapter reads the records of the {', '.join(reads)} study and "
                          "counts the rows and columns of every table; replace this with what the study measures."),
        _cell("code", "", ("parameters",), hidden=True),
        _cell("code", f"from creval.book.plots import table\nfrom creval.studies.{name} import STUDY, report\n"
                      f"from creval.studies.{name}.config import {cls}Config\n"
                      f"cfg = {cls}Config.from_params(globals())\n"
                      f"recs = STUDY.records(cfg)   # runs the study first unless its records are there",
              ("hide-input",), hidden=True),
        _cell("markdown", "## The tables read"),
        _cell("code", "table(report.by_table(recs))"),
    ]
    for i, c in enumerate(cells):
        c["id"] = f"{name}-{i}"
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                        "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def add_to_quarto(path: Path, chapter: str, title: str) -> None:
    """A part of its own for ``chapter``, after the book's last chapter line."""
    lines = path.read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if re.match(r"\s+- chapters/.*\.ipynb\s*$", line))
    part = (f'    - part: "{title}"\n'
            f"      chapters:\n"
            f"        - {chapter}\n")
    path.write_text("".join(lines[:last + 1]) + part + "".join(lines[last + 1:]))


def add_to_preface(path: Path, number: int, title: str, text: str) -> None:
    """The chapter's entry after the last one of the preface's numbered list of chapters."""
    lines = path.read_text().splitlines(keepends=True)
    items = [i for i, line in enumerate(lines) if re.match(r"\d+\. \*", line)]
    if not items:
        raise CrevalError(f"{path} has no numbered list of chapters", "add the chapter's line to the preface by hand")
    end = items[-1] + 1
    while end < len(lines) and lines[end].startswith("   ") and lines[end].strip():
        end += 1
    path.write_text("".join(lines[:end]) + f"{number}. *{title}*: {text}.\n" + "".join(lines[end:]))
