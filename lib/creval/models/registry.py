"""Model registry: a model name maps to a small YAML spec ``<name>.yaml`` in the folders of ``CREVAL_MODELS``
(``os.pathsep``-separated: the user's own specs, searched first) and then ``params/models/``. A path to a
spec file works wherever a name does; the model is then named by the spec's ``name`` or the file's stem.

``load_model("smollm2-135m")`` returns a cached :class:`~creval.models.cached.Model`. Backends are
imported lazily, so using the OpenAI backend never imports torch or llama.cpp.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Sequence

import yaml

from creval.core import paths
from creval.core.errors import CrevalError
from creval.models import capabilities
from creval.models.backends import BACKENDS, BackendInfo, backend_info
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.heavy import Loaded
from creval.models.spec import ModelSpec
from creval.models.weights import locate_weights, package_dir  # noqa: F401 - re-exported


def models_dir() -> Path:
    return paths.params_dir() / "models"


def spec_dirs() -> list[Path]:
    """Where specs are looked up, first match wins: ``CREVAL_MODELS`` folders, then ``params/models``."""
    extra = [Path(d).expanduser() for d in os.environ.get("CREVAL_MODELS", "").split(os.pathsep) if d.strip()]
    return [*extra, models_dir()]


def read_spec(path: Path) -> ModelSpec:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CrevalError(f"model spec {path} is not valid YAML: {e}", "fix the file's syntax") from None
    if not isinstance(data, dict) or "backend" not in data:
        raise CrevalError(f"model spec {path} must be a mapping with at least 'backend'", "see params/models/*.yaml")
    data.setdefault("name", path.stem)
    known = set(ModelSpec.__dataclass_fields__)
    unknown = set(data) - known
    if unknown:
        raise CrevalError(f"model spec {path} has unknown fields {sorted(unknown)}", f"allowed: {sorted(known)}")
    if data["backend"] not in BACKENDS:
        raise CrevalError(f"model spec {path}: unknown backend {data['backend']!r}", f"use one of {sorted(BACKENDS)}")
    return checked_numbers(ModelSpec(**data), path)


def checked_numbers(spec: ModelSpec, path) -> ModelSpec:
    """A spec whose numbers make sense, or one clear error (``concurrency: -3`` would run one request at a time
    without a word)."""
    for f, least in (("concurrency", 1), ("context", 1), ("reasoning_room", 0)):
        v = getattr(spec, f)
        if not isinstance(v, int) or isinstance(v, bool) or v < least:
            raise CrevalError(f"model spec {path}: {f} must be a whole number >= {least}, not {v!r}",
                              f"e.g. {f}: {ModelSpec.__dataclass_fields__[f].default or least}")
    return spec


_FROM_FILES: dict[str, Path] = {}       # name -> spec file, for specs given by path in this process


def all_specs() -> dict[str, ModelSpec]:
    out: dict[str, ModelSpec] = {}
    for d in reversed(spec_dirs()):          # earlier folders win
        out.update({p.stem: read_spec(p) for p in sorted(d.glob("*.yaml"))})
    return dict(sorted(out.items()))


def get_spec(name: str) -> ModelSpec:
    """The spec of a registered name, of a spec file's path, or of a name a spec file given earlier in this
    process goes by (records and the ledger name a model by its spec's ``name``)."""
    p = Path(name).expanduser()
    if p.suffix in (".yaml", ".yml"):
        if not p.exists():
            raise CrevalError(f"model spec {p} does not exist",
                              "give the path of a YAML model spec, or a registered name")
        spec = read_spec(p)
        _FROM_FILES[spec.name] = p
        return spec
    for d in spec_dirs():
        if (d / f"{name}.yaml").exists():
            return read_spec(d / f"{name}.yaml")
    if name in _FROM_FILES and _FROM_FILES[name].exists():
        return read_spec(_FROM_FILES[name])
    names = ", ".join(sorted(all_specs()))
    raise CrevalError(f"unknown model {name!r}", f"use one of: {names}; or add {name}.yaml to params/models/ "
                                                 "or to a folder named in CREVAL_MODELS")


def check(spec: ModelSpec) -> tuple[bool, str]:
    """Is this model usable here? Returns (usable, what is missing or where it comes from): the backend's own
    ``check`` (each backend class owns it; importing a backend's module imports nothing heavy)."""
    try:
        return backend_class(spec).check(spec)
    except CrevalError as e:
        return False, e.fix or e.problem


def reachable(url: str, timeout: float = 1.5) -> tuple[bool, str]:
    """Whether something accepts a TCP connection at ``url``'s host and port (no request is sent, so no key)."""
    import socket

    import httpx
    u = httpx.URL(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.host, port), timeout=timeout):
            return True, f"{url} (answering)"
    except OSError as e:
        why = "nothing listening" if isinstance(e, ConnectionRefusedError) else (
            "name not resolved (offline?)" if isinstance(e, socket.gaierror) else type(e).__name__)
        return False, f"start the server at {url} or fix base_url ({why})"


def backend_class(spec: ModelSpec) -> type[BackendBase]:
    """The class of ``spec``'s backend (its module imported; nothing heavy is)."""
    return backend_class_named(spec.backend)


def backend_class_named(backend: str) -> type[BackendBase]:
    """The class a name of ``models/backends.py``'s table resolves to."""
    mod, cls = backend_info(backend).target.split(":")
    return getattr(importlib.import_module(mod), cls)


__all__ = ["BACKENDS", "BackendInfo", "backend_info", "check", "get_spec", "load_model", "refusal_of", "run_notes"]


def refusal_of(name: str, verb: str) -> str | None:
    """:func:`creval.models.capabilities.refusal` for a registered model name (None where the name is not a known
    spec: the caller's own error says so)."""
    try:
        return capabilities.refusal(get_spec(name), verb)
    except CrevalError:
        return None


def run_notes(study: str, phases: Sequence[capabilities.ModelPhase], params: dict) -> list[str]:
    """Before a run: one line per phase of ``study`` (its declared ``phases``) that a model of ``params``
    (``model``/``models`` under test, ``judge_model`` as judge) cannot do, as its spec says (``creval check`` fills
    in what a spec does not say)."""
    roles = {"model": [params.get("model"), *(params.get("models") or [])], "judge": [params.get("judge_model")]}
    out = []
    for p in phases:
        for name in dict.fromkeys(n for n in roles[p.role] if isinstance(n, str) and n):
            whys = [refusal_of(name, v) for v in p.verbs]
            if all(whys):
                out.append(f"{study}: {p.name} cannot run on {name}: {whys[0]}")
    return out


def logprob_kind_of(cls, spec: ModelSpec) -> str:
    """The log-prob kind a backend class reports for ``spec`` (a server's depends on what its spec says)."""
    return cls.logprob_kind_for(spec)


def load_backend(spec: ModelSpec):
    ok, why = check(spec)
    if not ok:
        raise CrevalError(f"model {spec.name} is not usable here", why)
    return backend_class(spec)(spec)


class LazyBackend:
    """Loads the real backend on its first call, so a fully cached run never loads model weights."""

    def __init__(self, spec: ModelSpec):
        self.spec = spec
        cls = backend_class(spec)
        self.LOGPROB_KIND = logprob_kind_of(cls, spec)
        self.CONCURRENT = cls.CONCURRENT
        self.CALL_LOCK = cls.CALL_LOCK     # read before loading (models/cached.py)
        self._backend = None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        spec = self.spec                # units run in threads: the weights are loaded once
        return getattr(LOADED.get(repr(spec), lambda: load_backend(spec)), name)


LOADED = Loaded()
"""The backends (model weights) loaded in this process, by spec (``LOADED.reset()`` forgets them)."""


def load_model(name: str, cache=None):
    """The cached :class:`Model` for a registered name (loaded once per process)."""
    spec = get_spec(name)
    ok, why = check(spec)
    if not ok:
        raise CrevalError(f"model {spec.name} is not usable here", why)
    return Model(LazyBackend(spec), cache)


def model_name(name_or_path: str) -> str:
    """The name a model goes by in records and folder names: a registered name as it is, a spec file by
    its spec's ``name`` (or its file stem)."""
    return get_spec(name_or_path).name if str(name_or_path).endswith((".yaml", ".yml")) else str(name_or_path)
