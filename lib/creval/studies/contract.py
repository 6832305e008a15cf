"""The study contract: one declared :class:`Study` per package, and the typed :class:`Records` of its runs.

A study is a package ``studies/<name>/`` whose ``__init__.py`` declares ``STUDY = Study(...)``: its name, its
chapter, its Config (``config.py``, record-changing fields marked :func:`~creval.studies.config.identity`),
``reads`` (the studies whose records it reads: the one place the study graph is written), the datasets it
reads, ``tables`` (one typed record per table, ``records.py``: an undeclared table is an error), ``run``
(``run.py``: every model, judge and sandbox call of the study, resumable, into ``cfg.run_dir``) and
``estimate`` (``estimate.py``: what a run will cost before any call). ``report.py`` is pure: records in,
DataFrame or Figure out. The registry (:mod:`creval.studies.registry`) discovers the packages.

A run folder is *finished* when its ``manifest.json`` says ``complete: true`` for the same run id; then
``records`` reads it and calls nothing. An interrupted run leaves the folder unfinished; the next ``run``
resumes it (finished items are kept, the call cache serves the calls already made).
"""
from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from creval.core.errors import CrevalError, ThinRecords
from creval.core.io import read_jsonl
from creval.core.runs import RunStore
from creval.datasets.base import fetch_dataset
from creval.models.capabilities import ModelPhase
from creval.studies.config import Config

NOT_TABLES = ("calls",)     # JSONL files of a run folder that are not record tables (the calls themselves)


def start(cfg: Config) -> RunStore:
    """The run store of ``cfg``'s run folder, its manifest naming the study, run id, identity and parameters."""
    store = RunStore(cfg.run_dir, {"study": cfg.study, "run_id": cfg.run_id, "identity": cfg.identity(),
                                   **cfg.to_params()})
    store.seeds.update(sampling=cfg.seed, data_shuffle=cfg.data_seed)
    return store


def finish(store: RunStore) -> Path:
    """Mark the run finished (its manifest says ``complete: true``) and return its folder."""
    store.complete = True
    store.finish()
    return store.root


def is_finished_dir(run_dir: Path, run_id: str | None = None) -> bool:
    """True when ``run_dir``'s manifest says the run completed (and, if given, is the run ``run_id``)."""
    f = Path(run_dir) / "manifest.json"
    if not f.exists():
        return False
    try:
        m = json.loads(f.read_text())
    except (OSError, ValueError):
        return False
    return bool(m.get("complete")) and (run_id is None or m.get("params", {}).get("run_id") == run_id)


def is_finished(cfg: Config) -> bool:
    return is_finished_dir(cfg.run_dir, cfg.run_id)


@dataclass(frozen=True)
class Study:
    """One study, declared once in its package's ``__init__.py`` (``STUDY = Study(...)``).

    ``tables`` maps every table the run writes to its record type (a :class:`~creval.core.records.Record`
    dataclass: the table's schema, checked on every row whenever the run folder is read). ``estimate(cfg) ->
    Estimate`` prices a run (:mod:`creval.studies.estimate`; the one way to declare it: a study without one is
    priced with a line saying so). ``values(recs, models, judge)`` and ``ideas(recs, models)`` are what the
    comparison reads from the study's records (:mod:`creval.studies.values`; left out, it reads nothing);
    ``people(task)`` gives people's answers to the prompts of one of its ideas' tasks (``problem_id, text``; None
    where it has none), set beside the models' texts.
    ``card(recs, n_boot, seed)`` is the study's rows of the report card (:mod:`creval.studies.card`;
    left out, the card grades nothing of it).
    ``phases`` are the phases that call a model (:class:`~creval.models.capabilities.ModelPhase`: a name, the model
    under test or the judge, the verbs it needs): ``creval check`` and ``creval run`` say from them which phases a
    model cannot do. A study that calls no model declares none.
    ``book=False`` keeps a study out of ``creval book`` (the worked example of docs/CONTRIBUTING.md)."""
    name: str
    chapter: str                                   # the chapter notebook, relative to the repository
    config: type[Config]
    run: Callable[[Config], Path]                  # the run (resumable): every call of the study
    tables: Mapping[str, type] = field(default_factory=dict)
    reads: tuple[str, ...] = ()                    # studies whose records this one reads (run before it)
    datasets: tuple = ()                           # the datasets it reads (datasets.base.Dataset)
    summary: str = ""                              # one line for `creval run --help`
    estimate: Callable[[Config], Any] | None = None
    values: Callable[..., list] | None = None      # per-item headline values for the comparison
    ideas: Callable[..., list] | None = None       # texts whose homogeneity the comparison measures
    people: Callable[[str], Any] | None = None     # people's answers to the prompts of one of its ideas' tasks
    card: Callable[..., list] | None = None        # the study's rows of the report card (its grading.py)
    phases: tuple[ModelPhase, ...] = ()            # its model calls: whose model, which verbs (creval check)
    book: bool = True

    @property
    def package(self) -> str:
        """The module path of the study's package (where its Config lives)."""
        return self.config.__module__.rpartition(".")[0]

    def make_config(self, params: Mapping | None = None, where: str = "") -> Config:
        return self.config.from_params(params or {}, where=where)

    def fetch(self, cfg: Config) -> None:
        """The one step that downloads: first what the studies ``cfg`` reads here fetch, then each of
        ``datasets`` that ``cfg`` reads (``cfg.reads_dataset``), through its fallback chain. Afterwards
        ``cfg.run_id``, a pure lookup, names the data the run will read."""
        if cfg.reads_upstream_here():
            for up in cfg.upstream().values():
                study = study_of(up)
                if study is not None:
                    study.fetch(up)
        for ds in self.datasets:
            if cfg.reads_dataset(ds.name):
                fetch_dataset(ds)

    def ensure(self, cfg: Config) -> Path:
        """Run the study unless its folder is finished (resumable); the folder, every table in it declared."""
        self.fetch(cfg)
        if not is_finished(cfg):
            self.run(cfg)
        self.check_tables(cfg.run_dir)
        return cfg.run_dir

    def records(self, cfg: Config) -> "Records":
        return Records(self.ensure(cfg), cfg, self.tables)

    def check_tables(self, run_dir: Path) -> None:
        """A CrevalError when the run folder holds a table the study does not declare, or a row of a typed
        table that its record type does not describe (a column it does not declare, a required one missing)."""
        extra = sorted({p.stem for p in Path(run_dir).glob("*.jsonl")} - set(self.tables) - set(NOT_TABLES))
        if extra:
            raise CrevalError(f"study {self.name} wrote table {extra[0]!r}, which it does not declare",
                              f"add {extra[0]!r} and its record type to tables= in {self.package}/__init__.py")
        for table, kind in self.tables.items():
            f = Path(run_dir) / f"{table}.jsonl"
            if kind is dict or not f.exists():
                continue
            shapes = {}                                   # one row of each distinct set of columns
            for i, row in enumerate(read_jsonl(f), 1):
                shapes.setdefault(tuple(row), (i, row))
            for i, row in shapes.values():
                why = kind.row_problem(row)
                if why:
                    raise CrevalError(f"{f} row {i}: {why} (the {self.name} study's table {table!r})",
                                      f"declare the column in {kind.__module__}.{kind.__name__}, or stop writing it")

    def estimator(self) -> Callable[[Config], Any] | None:
        """The declared ``estimate`` (None when the study declares none)."""
        return self.estimate


def study_of(cfg: Config) -> Study | None:
    """The :class:`Study` declared by the package of ``cfg``'s Config (None for a Config of no package, or one
    that declares none). That package is imported already: Python imports it before the Config's module."""
    pkg = sys.modules.get(type(cfg).__module__.rpartition(".")[0])
    study = getattr(pkg, "STUDY", None)
    return study if isinstance(study, Study) else None


class UndeclaredTable(CrevalError, AttributeError):
    """A table the study does not declare (a misspelt name would otherwise read as an empty table)."""


class Records:
    """The tables of one study run folder, read on first use as DataFrames: ``recs.steps`` or
    ``recs["steps"]`` (an empty frame for a declared table the run did not write), ``recs.rows("steps")`` as
    dicts, ``recs.typed("steps")`` as the table's record type, ``recs.manifest``, and ``recs.cfg`` (the config
    the run was made with). ``tables`` (default: the declared tables of ``cfg``'s study) are the names that
    may be read: any other is an :class:`UndeclaredTable` error. Without a config nor tables every name reads."""

    def __init__(self, root: str | Path, cfg: Config | None = None, tables: Mapping[str, type] | None = None):
        if tables is None and cfg is not None:
            study = study_of(cfg)
            tables = study.tables if study is not None else None
        self.root, self.cfg, self._declared, self._frames = Path(root), cfg, tables, {}

    def _check(self, table: str) -> None:
        if self._declared is not None and table not in self._declared:
            name = self.cfg.study if self.cfg is not None else "this"
            raise UndeclaredTable(f"the {name} study has no table {table!r}",
                                  f"read one of its declared tables: {', '.join(sorted(self._declared))}")

    def rows(self, table: str) -> list[dict]:
        self._check(table)
        return read_jsonl(self.root / f"{table}.jsonl")

    def typed(self, table: str) -> list:
        """The rows of ``table`` as its declared record type (dicts for an untyped table)."""
        kind = (self._declared or {}).get(table, dict)
        rows = self.rows(table)
        return rows if kind is dict or not dataclasses.is_dataclass(kind) else [kind.from_dict(r) for r in rows]

    def written(self, table: str, *columns: str):
        """``recs[table]`` when the run wrote rows of it holding every column named; otherwise
        :class:`~creval.core.errors.ThinRecords` saying what is missing (the report guard shows it)."""
        df = self[table]
        if not len(df):
            raise ThinRecords(f"the run wrote no {table} rows")
        lacking = [c for c in columns if c not in df]
        if lacking:
            raise ThinRecords(f"the {table} rows have no {lacking[0]!r}")
        return df

    def __getitem__(self, table: str):
        if table not in self._frames:
            import pandas as pd
            self._frames[table] = pd.DataFrame(self.rows(table))
        return self._frames[table]

    def __getattr__(self, table: str):
        if table.startswith("_"):
            raise AttributeError(table)
        return self[table]

    @property
    def tables(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.jsonl") if p.stem not in NOT_TABLES)

    @property
    def manifest(self) -> dict:
        f = self.root / "manifest.json"
        return json.loads(f.read_text()) if f.exists() else {}

    def manifest_with(self, *fields: str) -> dict:
        """The manifest when it holds every field named; otherwise :class:`~creval.core.errors.ThinRecords`."""
        m = self.manifest
        lacking = [k for k in fields if k not in m]
        if lacking:
            raise ThinRecords(f"the run's manifest has no {lacking[0]!r}")
        return m

    def __repr__(self) -> str:
        return f"Records({self.root}, tables={self.tables})"
