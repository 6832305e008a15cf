"""Every study, discovered: each package ``studies/<name>/`` that declares ``STUDY`` (a
:class:`~creval.studies.contract.Study`) is one, found the way ``cli.py`` finds its commands; and the check that a
parameter file names only declared keys.

Adding a study is its package (see :mod:`creval.studies.contract`), its chapter and its line in ``_quarto.yml``:
nothing here names a study. The order of :data:`STUDIES` (the book's order) is the chapters' order with every
study after the studies it reads.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import MutableMapping
from typing import Iterator, Mapping

from creval.core.errors import CrevalError
from creval.models import registry as models_registry
from creval.studies import config
from creval.studies.config import Config
from creval.studies.contract import Records, Study

__all__ = ["RETIRED", "STUDIES", "Study", "all_defaults", "check_params", "declared_keys", "discover", "get_study",
           "in_order", "misnamed_keys", "model_phases", "register", "renames", "run_notes", "upstream_configs",
           "upstream_keys", "upstream_records", "upstream_renames", "with_new_names"]


def discover(package: str = "creval.studies") -> list[Study]:
    """The ``STUDY`` of every subpackage of ``package`` that declares one (``estimate/`` and the like do not),
    and of every package named in ``CREVAL_STUDIES`` (comma-separated: studies kept outside creval)."""
    pkg = importlib.import_module(package)
    names = [f"{package}.{m.name}" for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)
             if m.ispkg]
    found = [s for s in (getattr(importlib.import_module(n), "STUDY", None) for n in names) if isinstance(s, Study)]
    return ordered(found + [plugin(n) for n in plugins()])


def plugins() -> list[str]:
    """The packages named in ``CREVAL_STUDIES`` (each must be importable and declare ``STUDY``)."""
    return [p.strip() for p in os.environ.get("CREVAL_STUDIES", "").split(",") if p.strip()]


def plugin(name: str) -> Study:
    """The ``STUDY`` of the package ``name`` (named in ``CREVAL_STUDIES``)."""
    try:
        study = getattr(importlib.import_module(name), "STUDY", None)
    except ImportError as e:
        raise CrevalError(f"CREVAL_STUDIES names {name!r}, which does not import ({e})",
                          "put the folder holding it on PYTHONPATH, or take it out of CREVAL_STUDIES") from e
    if not isinstance(study, Study):
        raise CrevalError(f"CREVAL_STUDIES names {name!r}, which declares no STUDY",
                          f"declare STUDY = Study(...) in {name}/__init__.py")
    return study


def ordered(studies: list[Study]) -> list[Study]:
    """``studies`` by chapter, each moved after the studies it reads (a study reading an unknown one: an error)."""
    by_name = {s.name: s for s in sorted(studies, key=lambda s: (s.chapter, s.name))}
    out: list[Study] = []

    def add(s: Study, path: tuple[str, ...] = ()) -> None:
        if s in out:
            return
        if s.name in path:
            raise CrevalError(f"studies read each other in a circle: {' -> '.join(path + (s.name,))}",
                              "remove one of those names from a Study's reads")
        for up in s.reads:
            if up not in by_name:
                raise CrevalError(f"study {s.name} reads {up!r}, which no package declares",
                                  f"declare STUDY in studies/{up}/__init__.py or fix {s.name}'s reads")
            add(by_name[up], path + (s.name,))
        out.append(s)
    for s in by_name.values():
        add(s)
    return out


class _Registry(MutableMapping):
    """``{name: Study}``, filled by :func:`discover` the first time it is read (reading the registry at import
    time would import every study package while one of them may be importing it)."""

    def __init__(self):
        self._studies: dict[str, Study] | None = None

    def _all(self) -> dict[str, Study]:
        if self._studies is None:
            self._studies = {s.name: s for s in discover()}
        return self._studies

    def __getitem__(self, name: str) -> Study:
        return self._all()[name]

    def __setitem__(self, name: str, study: Study) -> None:
        self._all()[name] = study

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


STUDIES: MutableMapping[str, Study] = _Registry()

# keys that once existed: an old parameter file gets an error naming the new key
RETIRED = {"neocoder_model": "model (the model under test, in every study)",
           "novelty_model": "judge_model (the LLM behind every judge)"}


def register(study: Study) -> Study:
    """Add a study defined outside ``creval.studies`` (a plugin, or a test's toy study) to :data:`STUDIES`."""
    if study.name in STUDIES and STUDIES[study.name] != study:
        raise CrevalError(f"a study named {study.name!r} is registered already", "choose another name")
    STUDIES[study.name] = study
    return study


def get_study(name: str) -> Study:
    if name not in STUDIES:
        raise CrevalError(f"unknown study {name!r}", f"choose one of: {', '.join(STUDIES)}")
    return STUDIES[name]


def in_order(names=None, params: Mapping | None = None) -> list[Study]:
    """The studies named (default: all those in the book) and every study they read, upstream first. With
    ``params``, a study whose Config reads finished runs elsewhere (``reads_upstream_here`` false) pulls in
    nothing upstream."""
    want = [n for n, s in STUDIES.items() if s.book] if names is None else list(names)
    out: list[Study] = []

    def add(n: str) -> None:
        s = get_study(n)
        if params is None or s.make_config(params).reads_upstream_here():
            for up in s.reads:
                add(up)
        if s not in out:
            out.append(s)
    for n in want:
        add(n)
    return out


def upstream_configs(cfg: Config, **overrides) -> dict[str, Config]:
    """The Config of every study ``cfg``'s study reads (its ``reads``, in order), rebuilt from ``cfg``'s
    parameters (and ``overrides``)."""
    p = {**cfg.flat_params(), **overrides}
    return {name: get_study(name).config.from_params(p) for name in get_study(cfg.study).reads}


def upstream_keys(study: str) -> set[str]:
    """Every flat parameter of the studies ``study`` reads, and of the studies they read (a study that reads
    by composition passes those on)."""
    return {k for name in get_study(study).reads for k in {*get_study(name).config.flat_keys(), *upstream_keys(name)}}


def misnamed_keys(study: str) -> list[str]:
    """The keys of ``study`` that break the naming rule (:mod:`creval.studies.config`): each own key starts with
    its Config's ``prefix`` or is a key of a study it ``shares`` keys with, or is one every study has."""
    cfg = get_study(study).config
    shared = {k for name in cfg.shares for k in get_study(name).config.keys()}
    return [k for k in cfg.keys() if k not in config.SHARED_KEYS and k not in shared and not k.startswith(cfg.prefix)]


def upstream_renames(study: str) -> tuple[tuple[str, str], ...]:
    """(old, new) for every renamed key of the studies ``study`` reads (and of the studies they read)."""
    return tuple(dict.fromkeys(r for name in get_study(study).reads
                               for r in (*get_study(name).config.renamed.items(), *upstream_renames(name))))


def renames() -> tuple[tuple[str, str], ...]:
    """(old, new) for every renamed key of every study (an old name may have become a key of several)."""
    return tuple(dict.fromkeys(r for s in STUDIES.values() for r in s.config.renamed.items()))


def with_new_names(params: Mapping) -> dict:
    """``params`` with every study's old key names given as the new ones (said once on stderr)."""
    return config.with_new_names(params, renames())


def upstream_records(cfg: Config) -> dict[str, Records]:
    """The records of every study ``cfg``'s study reads (each run first only if its folder is not finished)."""
    return {name: get_study(name).records(c) for name, c in upstream_configs(cfg).items()}


def model_phases() -> dict[str, tuple]:
    """``{study: its phases}`` for every study that calls a model (``Study.phases``), in the book's order: what
    ``creval check`` judges a model against (:func:`creval.models.capabilities.phase_table`)."""
    return {name: s.phases for name, s in STUDIES.items() if s.phases}


def run_notes(study: str, params: Mapping) -> list[str]:
    """Before a run of ``study``: which of its phases the models of ``params`` cannot do, as their specs say
    (:func:`creval.models.registry.run_notes` over the study's declared phases)."""
    return models_registry.run_notes(study, get_study(study).phases, dict(params))


def declared_keys() -> set[str]:
    return {k for s in STUDIES.values() for k in s.config.flat_keys()}


def all_defaults() -> dict:
    """The union of every study's defaults (what ``params/default.yaml`` holds)."""
    out: dict = {}
    for s in STUDIES.values():
        for k, v in s.config.defaults().items():
            if k not in s.config.flat_keys():
                continue
            if k in out and out[k] != v:
                raise AssertionError(f"studies disagree on the default of {k!r}: {out[k]!r} vs {v!r}")
            out[k] = v
    return out


def check_params(params: Mapping, where: str = "the parameters") -> dict:
    """``params`` when every key is declared by some study and every value has its type, each old name of a
    renamed key given as its new name (said once on stderr)."""
    params = with_new_names(params)
    retired = sorted(set(params) & set(RETIRED))
    if retired:
        raise CrevalError(f"{where}: parameter {retired[0]!r} was retired",
                          f"use {RETIRED[retired[0]]} instead")
    unknown = sorted(set(params) - declared_keys())
    if unknown:
        raise CrevalError(f"{where}: unknown parameter {unknown[0]!r}"
                          + (f" (and {unknown[1:]})" if unknown[1:] else ""),
                          f"no study declares it; check the spelling (declared: {', '.join(sorted(declared_keys()))})")
    for s in STUDIES.values():
        s.config.from_params(params, where=where)       # type errors name the key and the file
    return dict(params)
