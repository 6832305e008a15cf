"""The Config of a study that reads many studies' records (the report card, chapter 08; the comparison, 09).

Such a study has few parameters of its own. The parameters of the studies it reads reach it by composition:
``upstream_params`` holds those that differ from their defaults, so its chapter's ``parameters`` cell shows
its own parameters and one (usually empty) mapping, not every upstream field. A flat parameter map (a profile,
``-p key=value``) is still accepted: :meth:`ReaderConfig.from_params` sorts each key into its place.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from creval.core.errors import CrevalError
from creval.studies.config import BootstrapConfig, plain_value
from creval.studies.registry import all_defaults, upstream_configs, upstream_keys

UPSTREAM = "upstream_params"


def _nested() -> Any:
    """An identity field holding a mapping (left out of the hash: a Config stays hashable)."""
    return field(default_factory=dict, hash=False, metadata={"identity": True})


@dataclass(frozen=True)
class ReaderConfig(BootstrapConfig):
    """Own parameters as fields; the upstream studies' parameters in ``upstream_params``."""
    upstream_params: Mapping[str, Any] = _nested()   # the read studies' parameters that differ from their defaults

    @classmethod
    def flat_keys(cls) -> tuple[str, ...]:
        return tuple(k for k in cls.keys() if k != UPSTREAM)

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None, where: str = "", **overrides):
        """Own keys from ``params`` as fields; keys of the studies read (given flat, or nested under
        ``upstream_params``, which wins) into ``upstream_params``, minus those equal to their default."""
        merged = {**(params or {}), **overrides}
        nested = merged.get(UPSTREAM) or {}
        at = f" in {where}" if where else ""
        if not isinstance(nested, Mapping):
            raise CrevalError(f"parameter {UPSTREAM!r}{at} must be a mapping of parameter names to values, "
                              f"got {nested!r}", f"e.g. {UPSTREAM} = {{'limit': 5}}")
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
    def chapter_params(cls, params: Mapping[str, Any]) -> dict:
        out = {k: params[k] for k in cls.flat_keys() if k in params}
        nested = cls.from_params(params).upstream_params
        return {**out, UPSTREAM: dict(nested)} if nested else out

    def flat_params(self) -> dict:
        own = {k: plain_value(getattr(self, k)) for k in self.flat_keys()}
        return {**self.upstream_params, **own}

    def upstream(self, **overrides) -> dict:
        """The Config of every study read (the Study's ``reads``), rebuilt from these parameters (and
        ``overrides``)."""
        return upstream_configs(self, **overrides)

    def resolved(self) -> dict:
        """The run id of every study read (each holds its machine facts and its records' shape): this run id
        moves whenever an upstream run's does."""
        return {"upstream": {name: c.run_id for name, c in self.upstream().items()}}
