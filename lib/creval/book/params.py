"""Parameter files: flat ``key: value`` maps over the studies' Config defaults.

Every key must be declared by some study (:mod:`creval.studies.registry`); an unknown key or a value of
the wrong type is one clear error naming the key and the file.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from creval.core.errors import CrevalError
from creval.core.paths import params_dir
from creval.studies.registry import all_defaults, check_params


def load_params(path: str | Path, overrides: list[str] = ()) -> dict:
    """A flat parameter file plus ``key=value`` overrides (values parsed as YAML), checked against the
    studies' declared parameters. Returns only the keys given (the chapters' defaults fill the rest), each by its
    current name (an old name of a renamed key is accepted, and said once)."""
    p = Path(path)
    if not p.exists():
        profiles = ", ".join(str(f) for f in sorted(params_dir().glob("*.yaml")))
        raise CrevalError(f"parameter file {p} does not exist", f"pass --params with one of: {profiles}")
    try:
        params = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise CrevalError(f"parameter file {p} is not valid YAML: {e}", "fix its syntax") from None
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise CrevalError(f"parameter file {p} must be a flat mapping of names to values", "see params/default.yaml")
    params = check_params(params, where=str(p))
    given = {}
    for o in overrides:
        if "=" not in o:
            raise CrevalError(f"override {o!r} is not key=value", "e.g. -p model=gpt-4o")
        k, v = o.split("=", 1)
        try:
            given[k.strip()] = yaml.safe_load(v)
        except yaml.YAMLError as e:
            raise CrevalError(f"override {o!r}: the value is not valid YAML ({e})", "e.g. -p models=[a, b]") from None
    return check_params({**params, **check_params(given, where="the -p overrides")}, where=str(p))


def effective_params(params: dict) -> dict:
    """What the chapters really run with: the studies' defaults updated by ``params``."""
    return {**all_defaults(), **params}


