"""Where things live. Every location can be moved with an environment variable.

- ``CREVAL_HOME``  root of caches, trained models and runs (default: ``<repo>/data``)
- ``CREVAL_CACHE`` the call cache database (default: ``$CREVAL_HOME/cache/calls.sqlite``)
- ``CREVAL_SHARED_DATA`` the staged datasets folder (default: ``<repo>/../shared/data`` when it exists;
  ``none`` or a folder that does not exist hides it, e.g. to test the fresh-machine fallbacks)
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def home() -> Path:
    return Path(os.environ.get("CREVAL_HOME", REPO / "data"))


def cache_file() -> Path:
    return Path(os.environ.get("CREVAL_CACHE", home() / "cache" / "calls.sqlite"))


def artifacts_dir() -> Path:
    """Models creval trains itself (e.g. the NLI cross-encoder)."""
    return home() / "artifacts"


def samples_dir() -> Path:
    """Small hand-written dataset samples shipped with the repo."""
    return REPO / "data" / "samples"


def shared_data_dir() -> Path | None:
    """The staged copy of the public datasets beside the checkout (``<repo>/../shared/data``), or
    ``$CREVAL_SHARED_DATA``; None when it is absent or hidden (``CREVAL_SHARED_DATA=none``)."""
    env = os.environ.get("CREVAL_SHARED_DATA")
    if env is not None and env.strip().lower() in ("none", "off", "0"):
        return None
    d = Path(env).expanduser() if env else REPO.parent / "shared" / "data"
    return d if d.is_dir() else None


def downloads_dir() -> Path:
    """Datasets downloaded from their public source (one folder per dataset)."""
    return home() / "datasets"


def params_dir() -> Path:
    return REPO / "params"


def home_relative(path: str) -> str:
    """``path`` relative to the data home (``CREVAL_HOME``) when it lies inside it: pages show no machine's
    absolute paths."""
    try:
        return str(Path(path).resolve().relative_to(home().resolve()))
    except ValueError:
        return str(path)
