"""One typed Config per study: the single home of every parameter default, and of the run id.

Each study declares its parameters as fields of a frozen dataclass deriving from :class:`Config`.
``params/default.yaml`` is exactly the union of these defaults, each chapter's ``parameters`` cell
repeats them, and ``params/*.yaml`` may only name declared keys (tests hold all three to this).
A key shared by several studies means the same thing in all of them (the parameter files are flat).

Fields that change a study's records are declared with :func:`identity` (field metadata); the run id is a
hash of those fields alone (each as it resolves on this machine, see :meth:`Config.resolved`), so two
configs differing only in presentation (``n_boot``, ``run_root``) share one run folder, and any change of an
identity field gives a new one. A study that reads another study's records holds that study's parameters by
composition (:mod:`creval.studies.reader`): ``cfg.upstream()`` rebuilds the read studies' own Configs.

One naming rule for the keys (the parameter files are flat, so a name must say whose it is): a study's own key
starts with its :attr:`Config.prefix` (the study's name and ``_`` unless it declares another), or is a key of a
study it names in :attr:`Config.shares` (the same parameter, meaning the same in both), or is one of the keys
every study has (:data:`SHARED_KEYS`). A renamed key keeps its old name as an alias (:attr:`Config.renamed`):
a parameter map may still give it, once said on stderr, and the run id hashes the old name, so a rename moves
no run folder.

``run_root`` is resolved against the data home (``CREVAL_HOME``, default ``<repo>/data``) unless it is
absolute, so a JupyterLab kernel started in ``chapters/`` finds the same runs as ``creval book``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable, Mapping

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


_SAID: set[tuple[str, str]] = set()


def say_renamed(old: str, new: str) -> None:
    """Say on stderr, once per process, that parameter ``old`` is now ``new``."""
    if (old, new) not in _SAID:
        _SAID.add((old, new))
        print(f"creval: parameter {old!r} is now {new!r} (the old name still works; see CHANGELOG)", file=sys.stderr)


def with_new_names(params: Mapping[str, Any], renamed: Iterable[tuple[str, str]]) -> dict:
    """``params`` with each old name of ``renamed`` (pairs old, new) given under its new name instead (when
    both are given, the new name's value wins); each old name used is said once (:func:`say_renamed`)."""
    out, old_used = dict(params), set()
    for old, new in renamed:
        if old in params:
            say_renamed(old, new)
            if new not in params:
                out[new] = params[old]
            old_used.add(old)
    for old in old_used:
        out.pop(old, None)
    return out


def identity(default: Any) -> Any:
    """A Config field whose value changes the study's records: it enters the run id."""
    return field(default=default, metadata={"identity": True})


@dataclass(frozen=True)
class Config:
    """Parameters every study shares. ``model``/``models`` are the models under test in every study."""
    study: ClassVar[str] = ""                # the registry name of the study this Config belongs to
    prefix: ClassVar[str] = ""               # every own key starts with it: the study's name and "_" unless declared
    shares: ClassVar[tuple[str, ...]] = ()   # studies whose keys this one also declares, with the same meaning
    renamed: ClassVar[Mapping[str, str]] = {}   # old key -> new key: the old name is still accepted (an alias)
    records_version: ClassVar[int] = 2       # the shape of the study's records: raise it when a table's columns
                                             # change, so a finished run folder of the old shape is not read back
    run_root: str = "runs/default"           # run records: relative to the data home (CREVAL_HOME) or absolute
    model: str = identity("smollm2-135m")    # the model whose creativity is measured
    models: tuple[str, ...] = identity(())   # further models measured beside `model` (tables compare them)
    seed: int = identity(0)                  # sampling seed (sample i of a call uses a seed derived from it)
    data_seed: int = identity(42)            # shuffle of a dataset before a study takes its first items (paper: 42)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "prefix" not in vars(cls) and vars(cls).get("study"):
            cls.prefix = f"{cls.study}_"

    @classmethod
    def renames(cls) -> tuple[tuple[str, str], ...]:
        """(old, new) for every key a parameter map may still give under its old name."""
        return tuple(cls.renamed.items())

    @classmethod
    def old_name(cls, key: str) -> str:
        """The name ``key`` had before the renaming (itself when it was not renamed): run ids hash it."""
        return {new: old for old, new in cls.renames()}.get(key, key)

    @classmethod
    def with_new_names(cls, params: Mapping[str, Any]) -> dict:
        """``params`` with the old names of this Config's keys (and of the studies it reads) made new."""
        return with_new_names(params, cls.renames())

    @property
    def tested(self) -> tuple[str, ...]:
        """The models under test: ``model`` first, then the other ``models`` (each once)."""
        return tuple(dict.fromkeys((self.model, *self.models)))

    @classmethod
    def identity_keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("identity"))

    def reads_upstream_here(self) -> bool:
        """Whether the studies this one reads must run in this run root first (``Study.reads``); False for a
        study that reads finished runs elsewhere (compare over ``compare_roots``)."""
        return True

    def upstream(self, **overrides) -> dict[str, "Config"]:
        """The Config of every study this one reads, by name (a reader's, :mod:`creval.studies.reader`; none
        here)."""
        return {}

    def reads_dataset(self, name: str) -> bool:
        """Whether a run of this config reads its study's declared dataset ``name``: the study's fetch step
        downloads only those (every declared one, unless a Config narrows it)."""
        return True

    def resolved(self) -> dict:
        """Facts of this machine that change the records, added to the identity: override to name e.g.
        the entailment backend that really runs, or whether a dataset is the real one or our sample. A pure
        lookup: it never downloads (the study's fetch step does, before the run id is named)."""
        return {}

    def identity_fields(self, leave_out: Iterable[str] = ()) -> dict:
        """The identity fields and their values, as plain values (unresolved), but those in ``leave_out``. A
        renamed field goes by its old name, so that its run ids do not move."""
        return {self.old_name(k): plain_value(getattr(self, k)) for k in self.identity_keys() if k not in leave_out}

    def identity(self) -> dict:
        """What makes two runs of this study the same experiment: the identity fields, resolved."""
        return {"study": self.study, "records_version": self.records_version, **self.identity_fields(),
                **self.resolved()}

    @property
    def run_id(self) -> str:
        return run_id(self.identity())

    @property
    def run_dir(self) -> Path:
        """The study's one run folder: ``<run_root>/<study>/<run id>``."""
        return self.run_path / self.study / self.run_id

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def flat_keys(cls) -> tuple[str, ...]:
        """The keys a flat parameter file may give this study (all of them, but for a reader's nested one)."""
        return cls.keys()

    @classmethod
    def defaults(cls) -> dict:
        return {f.name: plain_value(f.default if f.default is not dataclasses.MISSING else f.default_factory())
                for f in dataclasses.fields(cls)}

    @classmethod
    def chapter_params(cls, params: Mapping[str, Any]) -> dict:
        """What the chapter is handed from a flat parameter map: the keys it declares that ``params`` gives
        (an old name given as its new one)."""
        params = cls.with_new_names(params)
        return {k: params[k] for k in cls.keys() if k in params}

    def flat_params(self) -> dict:
        """These parameters as one flat map (the shape of a parameter file)."""
        return self.to_params()

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None, where: str = "", **overrides):
        """The study's config from a flat parameter map: declared keys are taken and type-checked, the
        others ignored (they belong to other studies; :func:`creval.studies.registry.check_params`
        rejects keys that no study declares). An old name of a key (:attr:`renamed`) is taken as the new one."""
        merged = cls.with_new_names({**(params or {}), **overrides})
        hints = typing.get_type_hints(cls)
        where = f" in {where}" if where else ""
        values = {k: _check(k, hints[k], merged[k], where) for k in cls.keys() if k in merged}
        return cls(**values)

    def to_params(self) -> dict:
        return {k: plain_value(getattr(self, k)) for k in self.keys()}

    @property
    def run_path(self) -> Path:
        """``run_root`` resolved: absolute as given, relative against :func:`creval.core.paths.home`."""
        p = Path(self.run_root).expanduser()
        return p if p.is_absolute() else paths.home() / p


def plain_value(v: Any) -> Any:
    """``v`` as JSON and YAML write it: tuples as lists, mappings with sorted keys."""
    if isinstance(v, Mapping):
        return {k: plain_value(x) for k, x in sorted(v.items())}
    return list(v) if isinstance(v, tuple) else v


def run_id(identity: Mapping[str, Any], n: int = 10) -> str:
    """A short content hash naming a run folder: runs with other parameters sit side by side."""
    blob = json.dumps({k: plain_value(v) for k, v in sorted(identity.items())}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]


@dataclass(frozen=True)
class JudgeConfig(Config):
    """A study with an LLM judge: ``judge_model`` is the LLM behind every judge in every study."""
    judge_model: str = identity("smollm2-135m")   # the LLM that judges (every judge of every study)


@dataclass(frozen=True)
class BootstrapConfig(Config):
    """A study whose reports give bootstrap intervals (a report setting: it does not change the records)."""
    n_boot: int = 1000                       # bootstrap resamples for confidence intervals


def boot_settings(recs) -> tuple[int, int]:
    """A report's bootstrap settings, ``(n_boot, seed)``, from its records' config (every study that reports an
    interval declares :class:`BootstrapConfig`); the defaults for records read without a config."""
    cfg = getattr(recs, "cfg", None)
    return (cfg.n_boot, cfg.seed) if cfg is not None else (BootstrapConfig.n_boot, Config.seed)


# the keys every study may have without a prefix (a reader's upstream_params besides)
SHARED_KEYS = frozenset({*JudgeConfig.keys(), *BootstrapConfig.keys(), "upstream_params"})
