"""Where things live. Every location can be moved with an environment variable.

- ``CREVAL_HOME``  root of caches, trained models and runs (default: ``<repo>/data``)
- ``CREVAL_CACHE`` the call cache database (default: ``$CREVAL_HOME/cache/calls.sqlite``)
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def home() -> Path:
    return Path(os.environ.get("CREVAL_HOME", REPO / "data"))


def cache_file() -> Path:
    return Path(os.environ.get("CREVAL_CACHE", home() / "cache" / "calls.sqlite"))


def runs_dir() -> Path:
    return home() / "runs"


def artifacts_dir() -> Path:
    """Models creval trains itself (e.g. the NLI cross-encoder)."""
    return home() / "artifacts"


def samples_dir() -> Path:
    """Small hand-written dataset samples shipped with the repo."""
    return REPO / "data" / "samples"


def dataset_dir(env: str, shared_rel: str) -> Path:
    """A local dataset folder: ``$<env>`` when set, else the staged copy at ``<repo>/../shared/data/<shared_rel>``
    (which may not exist: callers check and fall back to a bundled sample or raise a clear error)."""
    return Path(os.environ.get(env) or REPO.parent / "shared" / "data" / shared_rel)


def params_dir() -> Path:
    return REPO / "params"
