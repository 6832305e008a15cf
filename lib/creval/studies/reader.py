"""The Config of a study that reads other studies' records, holding their parameters by composition.

Such a study has few parameters of its own. The parameters of the studies it reads reach it in
``upstream_params``, which holds those that differ from their defaults, so its chapter's ``parameters`` cell
shows its own parameters and one (usually empty) mapping, not every upstream field; ``cfg.upstream()`` gives
each read study's own Config. A flat parameter map (a profile, ``-p key=value``) is still accepted:
:meth:`ComposedConfig.from_params` sorts each key into its place.

Two kinds of run id: :class:`ReaderConfig` (the report card, chapter 08; the comparison, 09, which read many
studies) names the read studies' run ids; :class:`DerivedConfig` (convergent and validation, which read the
divergent study's records and rerun part of it) holds the read study's identity fields by name.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from creval.core.errors import CrevalError
from creval.studies.config import BootstrapConfig, Config, plain_value
from creval.studies.registry import all_defaults, upstream_configs, upstream_keys, upstream_renames

UPSTREAM = "upstream_params"


def _nested() -> Any:
    """An identity field holding a mapping (left out of the hash: a Config stays hashable)."""
    return field(default_factory=dict, hash=False, metadata={"identity": True})


@dataclass(frozen=True)
class ComposedConfig(Config):
    """Own parameters as fields; the read studies' parameters in ``upstream_params``."""
    upstream_params: Mapping[str, Any] = _nested()   # the read studies' parameters that differ from their defaults

    @classmethod
    def flat_keys(cls) -> tuple[str, ...]:
        return tuple(k for k in cls.keys() if k != UPSTREAM)

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None, where: str = "", **overrides):
        """Own keys from ``params`` as fields; keys of the studies read (given flat, or nested under
        ``upstream_params``, which wins) into ``upstream_params``, minus those equal to their default."""
        merged = cls.with_new_names({**(params or {}), **overrides})
        nested = merged.get(UPSTREAM) or {}
        at = f" in {where}" if where else ""
        if not isinstance(nested, Mapping):
            raise CrevalError(f"parameter {UPSTREAM!r}{at} must be a mapping of parameter names to values, "
                              f"got {nested!r}", f"e.g. {UPSTREAM} = {{'divergent_limit': 5}}")
        nested = cls.with_new_names(nested)
        own, ups = set(cls.flat_keys()), upstream_keys(cls.study)
        wrong = sorted(set(nested) & own) or sorted(set(nested) - ups)
        if wrong:
            raise CrevalError(f"{UPSTREAM}{at} names {', '.join(wrong)}: not a parameter of the studies "
                              f"{cls.study} reads, only theirs belong there",
                              "give this page's own parameters directly; see params/default.yaml for the others")
        defaults = all_defaults()
        given = {**{k: merged[k] for k in ups - own if k in merged}, **nested}
        cfg = super().from_params({k: merged[k] for k in own if k in merged}, where)
        cfg = dataclasses.replace(cfg, upstream_params={k: plain_value(v) for k, v in sorted(given.items())
                                                        if plain_value(v) != defaults.get(k)})
        upstream_configs(cfg)             # type-checks every upstream value now, naming the key
        return cfg

    @classmethod
    def renames(cls) -> tuple[tuple[str, str], ...]:
        """Its own old names and those of the studies it reads."""
        return (*cls.renamed.items(), *upstream_renames(cls.study))

    def identity_fields(self, leave_out=()) -> dict:
        """As :meth:`Config.identity_fields`, the keys in ``upstream_params`` by their old names as well."""
        out = super().identity_fields(leave_out)
        if UPSTREAM in out:
            out[UPSTREAM] = {self.old_name(k): v for k, v in out[UPSTREAM].items()}
        return out

    @classmethod
    def chapter_params(cls, params: Mapping[str, Any]) -> dict:
        params = cls.with_new_names(params)
        out = {k: params[k] for k in cls.flat_keys() if k in params}
        nested = cls.from_params(params).upstream_params
        return {**out, UPSTREAM: dict(nested)} if nested else out

    def flat_params(self) -> dict:
        own = {k: plain_value(getattr(self, k)) for k in self.flat_keys()}
        return {**self.upstream_params, **own}

    def upstream(self, **overrides) -> dict[str, Config]:
        """The Config of every study read (the Study's ``reads``), rebuilt from these parameters (and
        ``overrides``)."""
        return upstream_configs(self, **overrides)


@dataclass(frozen=True)
class ReaderConfig(ComposedConfig, BootstrapConfig):
    """A study that reads many studies' records (chapters 08, 09): its run id names theirs."""

    def resolved(self) -> dict:
        """The run id of every study read (each holds its machine facts and its records' shape): this run id
        moves whenever an upstream run's does."""
        return {"upstream": {name: c.run_id for name, c in self.upstream().items()}}


@dataclass(frozen=True)
class DerivedConfig(ComposedConfig):
    """A study that reads one study's records and reruns part of that study (convergent and validation read
    the divergent study). Its run id holds the read study's identity fields by name, beside its own (see
    :meth:`identity`). A parameter of the read study is read from that study's own Config
    (``cfg.upstream()["divergent"].divergent_limit``, which convergent and validation spell
    ``cfg.divergent().divergent_limit``),
    never from this Config: a name that is no field here is an AttributeError."""
    not_read: ClassVar[tuple[str, ...]] = ()   # identity fields of the read study its records do not depend on

    def identity(self) -> dict:
        """Flat: the read study's identity fields by name (but :attr:`not_read`), then this study's own (but
        ``upstream_params``, whose values are among the former), then :meth:`resolved`. These studies once
        inherited the read study's Config and their run ids hashed exactly these keys; keeping them flat keeps
        every earlier run folder's run id (a nested ``upstream_params`` would move them all)."""
        up = {k: v for c in self.upstream().values() for k, v in c.identity_fields(self.not_read).items()}
        own = {k: v for k, v in self.identity_fields().items() if k != UPSTREAM}
        return {"study": self.study, "records_version": self.records_version, **up, **own, **self.resolved()}

    @classmethod
    def chapter_params(cls, params: Mapping[str, Any]) -> dict:
        """Own keys and ``upstream_params``, and the read studies' keys flat as well: papermill injects only
        the keys a chapter's cell declares, so a cell that still lists them flat gets them flat."""
        params = cls.with_new_names(params)
        flat = {k: params[k] for k in upstream_keys(cls.study) - set(cls.flat_keys()) if k in params}
        return {**flat, **super().chapter_params(params)}
