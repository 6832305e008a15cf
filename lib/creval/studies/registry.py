"""Every study: its name, chapter, Config, and the studies whose records it reads; and the check that a
parameter file names only declared keys.

Adding a study is one package ``studies/<name>/`` (see :mod:`creval.studies.contract`), one chapter and one
line in :data:`STUDIES`. ``run`` and ``records`` are imported lazily from ``creval.studies.<name>.run``, so
reading the registry loads no model library.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from creval.core.errors import CrevalError
from creval.datasets.base import downloading
from creval.studies import contract
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.aut.config import AutConfig
from creval.studies.compare.config import CompareConfig
from creval.studies.config import Config
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent.config import DivergentConfig
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.validation.config import ValidationConfig


@dataclass(frozen=True)
class Study:
    name: str
    chapter: str                      # the chapter notebook, relative to the repository
    config: type[Config]
    reads: tuple[str, ...] = ()       # studies whose records this one reads (run before it)
    summary: str = ""                 # one line for `creval run --help`
    package: str = ""                 # where its run.py lives (default creval.studies.<name>)

    def _module(self):
        return importlib.import_module(f"{self.package or 'creval.studies.' + self.name}.run")

    def make_config(self, params: Mapping | None = None, where: str = "") -> Config:
        return self.config.from_params(params or {}, where=where)

    def fetch(self, cfg: Config) -> None:
        """Download what the study's data lookups find missing (the one step that may download): afterwards
        ``cfg.run_id``, a pure lookup, names the data the run will read."""
        with downloading():
            cfg.resolved()

    def run(self, cfg: Config) -> Path:
        """Run the study (resumable; a finished run folder is left as it is)."""
        self.fetch(cfg)
        return cfg.run_dir if contract.is_finished(cfg) else self._module().run(cfg)

    def records(self, cfg: Config):
        return self._module().records(cfg)


STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("apparatus", "chapters/01-apparatus.ipynb", ApparatusConfig,
          summary="sample next steps of one problem and record every token's log-prob"),
    Study("divergent", "chapters/02-divergent.ipynb", DivergentConfig,
          summary="semantic entropy of step-wise generation (Tan et al.), a temperature sweep, entailment backends"),
    Study("convergent", "chapters/03-convergent.ipynb", ConvergentConfig, reads=("divergent",),
          summary="the retrieval-based multi-agent judge and its baselines, on model solutions and human labels"),
    Study("validation", "chapters/04-validating-entropy.ipynb", ValidationConfig, reads=("divergent",),
          summary="semantic entropy against diversity, a pairwise novelty judge and human ratings"),
    Study("neocoder", "chapters/05-neocoder.ipynb", NeoCoderConfig,
          summary="denial prompting and NeoGauge on Codeforces, every program in the sandbox (Lu et al.)"),
    Study("rethinking", "chapters/06-rethinking-metrics.ipynb", RethinkingConfig,
          summary="creativity index, perplexity, syntactic templates and rubric judges against people (Lu et al.)"),
    Study("aut", "chapters/07-aut-agreement.ipynb", AutConfig,
          summary="LLM agreement on Alternative Uses Test scoring and ranking (Rabeyah et al.)"),
    Study("reportcard", "chapters/08-report-card.ipynb", ReportCardConfig,
          reads=("convergent", "validation", "rethinking", "aut"),
          summary="which measures to trust: every check against people beside its trivial baseline"),
    Study("compare", "chapters/09-compare.ipynb", CompareConfig,
          reads=("divergent", "convergent", "neocoder", "rethinking", "aut"),
          summary="every model on every headline measure, paired differences, homogeneity of ideas, cost"),
)}

# keys that once existed: an old parameter file gets an error naming the new key
RETIRED = {"neocoder_model": "model (the model under test, in every study)",
           "novelty_model": "judge_model (the LLM behind every judge)"}


def register(study: Study) -> Study:
    """Add a study defined outside this package (a plugin, or a test's toy study) to :data:`STUDIES`."""
    if study.name in STUDIES and STUDIES[study.name] != study:
        raise CrevalError(f"a study named {study.name!r} is registered already", "choose another name")
    STUDIES[study.name] = study
    return study


def get_study(name: str) -> Study:
    if name not in STUDIES:
        raise CrevalError(f"unknown study {name!r}", f"choose one of: {', '.join(STUDIES)}")
    return STUDIES[name]


def in_order(names=None, params: Mapping | None = None) -> list[Study]:
    """The studies named (default: all) and every study they read, upstream first. With ``params``, a study
    whose Config reads finished runs elsewhere (``reads_upstream_here`` false) pulls in nothing upstream."""
    want, out = list(STUDIES) if names is None else list(names), []

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


def declared_keys() -> set[str]:
    return {k for s in STUDIES.values() for k in s.config.keys()}


def all_defaults() -> dict:
    """The union of every study's defaults (what ``params/default.yaml`` holds)."""
    out: dict = {}
    for s in STUDIES.values():
        for k, v in s.config.defaults().items():
            if k in out and out[k] != v:
                raise AssertionError(f"studies disagree on the default of {k!r}: {out[k]!r} vs {v!r}")
            out[k] = v
    return out


def check_params(params: Mapping, where: str = "the parameters") -> dict:
    """``params`` unchanged when every key is declared by some study and every value has its type."""
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
