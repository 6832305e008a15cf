"""The declared sets of human judgment (:class:`creval.datasets.rated.HumanSet`): every module of
:mod:`creval.datasets` that declares a ``SET``, found by name, so adding a set is its loader's module alone
(``creval new-human-set NAME`` writes one, with its sample and its test)."""
from __future__ import annotations

import importlib
import pkgutil

import creval.datasets
from creval.core.errors import CrevalError
from creval.datasets.rated import HumanSet


def discover() -> dict[str, HumanSet]:
    """Every declared human set, by name, in the order of their modules' names."""
    found = {}
    for m in sorted(pkgutil.iter_modules(creval.datasets.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"creval.datasets.{m.name}")
        hs = getattr(mod, "SET", None)
        if isinstance(hs, HumanSet):
            found[hs.name] = hs
    return found


SETS: dict[str, HumanSet] = discover()


def chosen(names: tuple[str, ...]) -> list[str]:
    """The sets a run reads: those named, or every declared one when none is (the default)."""
    unknown = [n for n in names if n not in SETS]
    if unknown:
        raise CrevalError(f"humansets_sets: no declared human set {', '.join(unknown)} (declared: "
                          f"{', '.join(SETS)})", "name declared sets, or give [] for all of them")
    return list(names) or list(SETS)
