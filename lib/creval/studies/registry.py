"""Every study, its chapter and its Config; and the check that a parameter file names only declared keys."""
from __future__ import annotations

from typing import Mapping

from creval.core.errors import CrevalError
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.aut.config import AutConfig
from creval.studies.config import Config
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent.config import DivergentConfig
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.validation.config import ValidationConfig

# study name -> (chapter notebook, Config class)
STUDIES: dict[str, tuple[str, type[Config]]] = {
    "apparatus": ("chapters/01-apparatus.ipynb", ApparatusConfig),
    "divergent": ("chapters/02-divergent.ipynb", DivergentConfig),
    "convergent": ("chapters/03-convergent.ipynb", ConvergentConfig),
    "validation": ("chapters/04-validating-entropy.ipynb", ValidationConfig),
    "neocoder": ("chapters/05-neocoder.ipynb", NeoCoderConfig),
    "rethinking": ("chapters/06-rethinking-metrics.ipynb", RethinkingConfig),
    "aut": ("chapters/07-aut-agreement.ipynb", AutConfig),
}


def declared_keys() -> set[str]:
    return {k for _, cls in STUDIES.values() for k in cls.keys()}


def all_defaults() -> dict:
    """The union of every study's defaults (what ``params/default.yaml`` holds)."""
    out: dict = {}
    for _, cls in STUDIES.values():
        for k, v in cls.defaults().items():
            if k in out and out[k] != v:
                raise AssertionError(f"studies disagree on the default of {k!r}: {out[k]!r} vs {v!r}")
            out[k] = v
    return out


def check_params(params: Mapping, where: str = "the parameters") -> dict:
    """``params`` unchanged when every key is declared by some study and every value has its type."""
    unknown = sorted(set(params) - declared_keys())
    if unknown:
        raise CrevalError(f"{where}: unknown parameter {unknown[0]!r}" + (f" (and {unknown[1:]})" if unknown[1:] else ""),
                          f"no study declares it; check the spelling (declared: {', '.join(sorted(declared_keys()))})")
    for _, cls in STUDIES.values():
        cls.from_params(params, where=where)       # type errors name the key and the file
    return dict(params)
