"""Run store: one folder per run with JSONL tables, per-call accounting and a manifest.

``data/runs/<run>/`` holds ``<table>.jsonl`` (records, appended and flushed row by row),
``calls.jsonl`` (one row per expensive call: made or cached, tokens, cost, tags) and ``manifest.json``
(parameters, model specs, seeds, package and git versions, timings, calls made vs served from cache,
tokens and cost). Records are what chapters display; they are never re-derived in a chapter.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from creval import __version__
from creval.core import paths
from creval.core.io import read_jsonl
from creval.core.ledger import LEDGER, Ledger, Tally

PACKAGES = ("creval", "llama_cpp_python", "transformers", "torch", "sentence-transformers", "chromadb",
            "papermill", "numpy", "scipy", "pandas", "plotly", "httpx")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    return out


def git_commit() -> str:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.REPO, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=paths.REPO,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return r.stdout.strip() + ("+dirty" if dirty else "") if r.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def accelerator() -> str:
    """Where this process's local neural models ran (``cpu``, ``cuda``...), or ``none`` if none ran."""
    dev = sys.modules.get("creval.models.device")        # set only where a local neural model was loaded
    return (dev.chosen() if dev else None) or "none"


class RunStore:
    """Tables and manifest of one run. Rows are appended durably, so a killed run loses nothing finished."""

    def __init__(self, root: str | Path, params: dict | None = None, ledger: Ledger = LEDGER):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.params = dict(params or {})
        self.ledger, self.t0 = ledger, time.time()
        self._pending: list[dict] = []       # call rows not yet in calls.jsonl
        self._lock = threading.Lock()
        self.tally = Tally(keep=False, sink=lambda rec: self._pending.append(asdict(rec)))
        self._token = ledger.attach(self.tally)   # every call made in this context (and its unit threads)
        self.models: dict[str, dict] = {}
        self.seeds: dict[str, int] = {}
        self.complete = False                # set by a study when every record of the run is written

    def path(self, table: str) -> Path:
        return self.root / f"{table}.jsonl"

    def append(self, table: str, rows: Iterable[dict]) -> None:
        with self._lock, open(self.path(table), "a") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=jsonable) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def write(self, table: str, rows: Iterable[dict]) -> None:
        tmp = self.path(table).with_suffix(".tmp")
        with open(tmp, "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=jsonable) + "\n")
        tmp.replace(self.path(table))

    def read(self, table: str) -> list[dict]:
        return read_jsonl(self.path(table))

    def frame(self, table: str):
        import pandas as pd
        return pd.DataFrame(self.read(table))

    def note_model(self, model) -> None:
        """Record a model's spec and log-prob definition in the manifest."""
        self.models[model.name] = {**model.spec.identity(), "name": model.name, "logprob_kind": model.logprob_kind}
        server = model.server() if callable(getattr(model, "server", None)) else None
        if server is not None:                      # a server: its name, version and log-prob semantics
            self.models[model.name]["server"] = server

    def manifest(self) -> dict:
        return {"creval_version": __version__, "git_commit": git_commit(), "created": self.t0,
                "finished": time.time(), "seconds": round(time.time() - self.t0, 3), "argv": sys.argv,
                "params": self.params, "seeds": self.seeds, "models": self.models,
                "packages": package_versions(), "host": platform.node(), "accelerator": accelerator(),
                "usage": self.tally.summary(), "complete": self.complete}

    def flush_calls(self) -> None:
        """Append the call rows not yet written to ``calls.jsonl``: call it with each finished item, so
        the calls of a run that is killed later stay recorded next to the rows they produced."""
        with self.tally._lock:
            rows, self._pending = self._pending, []
        self.append("calls", rows)

    def finish(self) -> dict:
        """Write ``manifest.json`` and append this run's remaining call rows to ``calls.jsonl``."""
        m = self.manifest()
        self.flush_calls()
        tmp = self.root / "manifest.json.tmp"
        tmp.write_text(json.dumps(m, indent=2, default=jsonable))
        tmp.replace(self.root / "manifest.json")
        if self._token is not None:
            self.ledger.detach(self._token)
            self._token = None
        return m

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.finish()


def jsonable(o: Any):
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)
