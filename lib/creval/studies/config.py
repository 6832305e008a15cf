"""One typed Config per study: the single home of every parameter default.

Each study declares its parameters as fields of a frozen dataclass deriving from :class:`Config`.
``params/default.yaml`` is exactly the union of these defaults, each chapter's ``parameters`` cell
repeats them, and ``params/*.yaml`` may only name declared keys (tests hold all three to this).
A key shared by several studies means the same thing in all of them (the parameter files are flat).

``run_root`` is resolved against the data home (``CREVAL_HOME``, default ``<repo>/data``) unless it is
absolute, so a JupyterLab kernel started in ``chapters/`` finds the same runs as ``creval book``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from creval.core import paths
from creval.core.errors import CrevalError


def _check(name: str, kind: Any, value: Any, where: str) -> Any:
    """``value`` converted to the field's declared type, or a CrevalError naming the key."""
    origin = typing.get_origin(kind)
    bad = CrevalError(f"parameter {name!r}{where} must be {getattr(kind, '__name__', kind)}, got {value!r}",
                      f"give {name} a value of that type (see params/default.yaml)")
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise bad
        (item,) = {a for a in typing.get_args(kind) if a is not Ellipsis}
        return tuple(_check(name, item, v, where) for v in value)
    if kind is bool:
        if not isinstance(value, bool):
            raise bad
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise bad
        return value
    return value


@dataclass(frozen=True)
class Config:
    """Parameters every study shares."""
    run_root: str = "runs/default"           # run records: relative to the data home (CREVAL_HOME) or absolute
    model: str = "smollm2-135m"              # the model whose creativity is measured
    models: tuple[str, ...] = ("smollm2-135m",)   # models compared side by side in tables
    seed: int = 0                            # sampling seed (sample i of a call uses a seed derived from it)
    data_seed: int = 42                      # shuffle of a dataset before its first `limit` items (paper: 42)

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict:
        return {f.name: _plain(f.default) for f in dataclasses.fields(cls)}

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None, where: str = "", **overrides):
        """The study's config from a flat parameter map: declared keys are taken and type-checked, the
        others ignored (they belong to other studies; :func:`creval.studies.registry.check_params`
        rejects keys that no study declares)."""
        merged = {**(params or {}), **overrides}
        hints = typing.get_type_hints(cls)
        where = f" in {where}" if where else ""
        values = {k: _check(k, hints[k], merged[k], where) for k in cls.keys() if k in merged}
        return cls(**values)

    def to_params(self) -> dict:
        return {k: _plain(getattr(self, k)) for k in self.keys()}

    @property
    def run_path(self) -> Path:
        """``run_root`` resolved: absolute as given, relative against :func:`creval.core.paths.home`."""
        p = Path(self.run_root).expanduser()
        return p if p.is_absolute() else paths.home() / p


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def run_id(identity: Mapping[str, Any], n: int = 10) -> str:
    """A short content hash naming a run folder: runs with other parameters sit side by side."""
    blob = json.dumps({k: _plain(v) for k, v in sorted(identity.items())}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]
