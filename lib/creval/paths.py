"""Where things live. Every location can be moved with an environment variable.

- ``CREVAL_HOME``  root of caches, trained models and runs (default: ``<repo>/data``)
- ``CREVAL_CACHE`` the call cache database (default: ``$CREVAL_HOME/cache/calls.sqlite``)
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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


def params_dir() -> Path:
    return REPO / "params"
