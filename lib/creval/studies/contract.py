"""The study contract: what every study's ``run`` and ``records`` share.

A study is a package ``studies/<name>/`` with ``config.py`` (a :class:`~creval.studies.config.Config` whose
record-changing fields are marked :func:`~creval.studies.config.identity`), ``run.py`` (``run(cfg) -> Path``:
every model, judge and sandbox call of the study, resumable, into ``cfg.run_dir``; and
``records(cfg) -> Records``: that folder's tables, running only what is missing), ``records.py`` (typed
records) and ``report.py`` (pure: records in, DataFrame or Figure out).

A run folder is *finished* when its ``manifest.json`` says ``complete: true`` for the same run id; then
``records`` reads it and calls nothing. An interrupted run leaves the folder unfinished; the next ``run``
resumes it (finished items are kept, the call cache serves the calls already made).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from creval.core.io import read_jsonl
from creval.core.runs import RunStore
from creval.studies.config import Config


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


def ensure(cfg: Config, run: Callable[[Config], Path]) -> Path:
    """``cfg``'s run folder, running the study first unless a finished run is already there."""
    if not is_finished(cfg):
        run(cfg)
    return cfg.run_dir


class Records:
    """The tables of one study run folder, read on first use as DataFrames: ``recs.steps`` or
    ``recs["steps"]`` (an empty frame for a table the run did not write), ``recs.rows("steps")`` as dicts,
    ``recs.manifest``, and ``recs.cfg`` (the config the run was made with)."""

    def __init__(self, root: str | Path, cfg: Config | None = None):
        self.root, self.cfg, self._frames = Path(root), cfg, {}

    def rows(self, table: str) -> list[dict]:
        return read_jsonl(self.root / f"{table}.jsonl")

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
        return sorted(p.stem for p in self.root.glob("*.jsonl") if p.stem != "calls")

    @property
    def manifest(self) -> dict:
        f = self.root / "manifest.json"
        return json.loads(f.read_text()) if f.exists() else {}

    def __repr__(self) -> str:
        return f"Records({self.root}, tables={self.tables})"


def read(cfg: Config, run: Callable[[Config], Path]) -> Records:
    """``cfg``'s records, running the study first unless a finished run is there (the body of every
    study's ``records``)."""
    return Records(ensure(cfg, run), cfg)
