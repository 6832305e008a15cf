"""What each backend declares about itself, in one table: a new backend is one entry here (and its module).

Kept apart from ``models/registry.py`` (which loads specs and backends and runs the checks) so that a
:class:`~creval.models.spec.ModelSpec` can ask whether it is a server without importing the registry. Each entry
names, as ``module:attribute`` text resolved only when used (so nothing heavy is imported here): the backend's
class, whether it is a server (its requests go over the network, overlap and are priced per token; the others
compute on this machine) and the package it needs installed here (``None``: nothing beyond creval's own). Each
backend class owns its check, ``Backend.check(spec) -> (usable, source or what is missing)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.errors import CrevalError


@dataclass(frozen=True)
class BackendInfo:
    target: str
    server: bool
    needs: str | None


BACKENDS: dict[str, BackendInfo] = {
    "llamacpp": BackendInfo("creval.models.llamacpp:LlamaCppBackend", False, "llama_cpp"),
    "hf": BackendInfo("creval.models.hf:HFBackend", False, "transformers"),
    "openai": BackendInfo("creval.models.openai_compat:OpenAIBackend", True, None),
}


def backend_info(backend: str) -> BackendInfo:
    """The declaration of ``backend``; an unknown name is a clear error, never a ``KeyError``."""
    if backend not in BACKENDS:
        raise CrevalError(f"unknown backend {backend!r}", f"use one of {sorted(BACKENDS)}")
    return BACKENDS[backend]
