"""The divergent study's run: every problem of every domain solved step by step with semantic entropy.

:func:`run` writes the study's one run folder (``cfg.run_dir``): the study's tables ``steps`` and
``problems`` (the models under test on ``divergent_domains`` at ``divergent_temperature``, ``divergent_n_samples``
samples per step), ``sweep`` (``divergent_sweep_limit`` problems of ``divergent_sweep_domain`` at each of
``divergent_temperatures``), ``nli_eval`` (entailment backends on ``divergent_nli_eval_pairs`` held-out pairs) and
``entailment`` (the backend asked for and the one that ran).

Its unit (:mod:`creval.core.units`) is one problem of one model x domain x temperature x sample size
(:func:`problem_units`): the budget answer and the steps of that problem are a chain, problems run
together, each finished one is kept in ``units/solve.jsonl`` (a sweep problem that is also a main problem
is solved once). :func:`solve_domain` runs one model x domain's problems the same way, for the validation
study, which reruns chapter 02's problems at other sample sizes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from creval.core import units
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER
from creval.domains import Problem, get_domain
from creval.measures.nli.backends import LazyNLI
from creval.measures.nli.evaluate import evaluate_nli
from creval.measures.nli.llm import llm_nli
from creval.models import registry
from creval.models import width as widths
from creval.studies import contract
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.generation import solve
from creval.studies.divergent.records import EntailmentRecord, NliEvalRecord

log = logging.getLogger("creval.studies.divergent.run")


@dataclass(frozen=True)
class Job:
    """What one unit solves: ``problem`` with ``model`` (``n`` samples per step at ``temperature``)."""
    model: str
    domain: str
    n: int
    temperature: float
    problem: Problem


def problem_units(cfg: DivergentConfig, model: str, domain: str, *, n: int | None = None,
                  temperature: float | None = None, limit: int | None = None) -> list[units.Unit]:
    """One unit per problem of the first ``limit`` of ``domain`` (the config's sizes by default), keyed
    ``model/domain/n<n>-T<t>/problem_id``."""
    n_key = "divergent_n_samples" if n is None else "samples per step"        # a caller's own size: not a key
    limit_key = "divergent_limit" if limit is None else "problems"
    n = cfg.divergent_n_samples if n is None else n
    limit = cfg.divergent_limit if limit is None else limit
    t = float(cfg.divergent_temperature if temperature is None else temperature)
    if n < 1 or limit < 0 or cfg.divergent_max_steps < 1:
        raise CrevalError(f"bad sizes: {n_key}={n}, {limit_key}={limit}, divergent_max_steps="
                          f"{cfg.divergent_max_steps}",
                          f"use {n_key} >= 1, {limit_key} >= 0, divergent_max_steps >= 1")
    problems, where = get_domain(domain).load_with_source(limit=limit, seed=cfg.data_seed)
    log.info("divergent: %d %s problems from %s", len(problems), domain, where)
    return [units.Unit(f"{registry.model_name(model)}/{domain}/n{n}-T{t:g}/{p.problem_id}", Job(model, domain, n, t, p))
            for p in problems]


def solver(cfg: DivergentConfig):
    """``work(unit) -> {"steps": rows, "problems": [row]}`` solving a :func:`problem_units` unit (paper
    section 5; :func:`creval.studies.divergent.generation.solve`); one entailment backend for all units."""
    nli = cfg.nli_runs()                  # the backend that really runs (e.g. a fallback when SICK is missing)
    backend = LazyNLI(nli)                # loaded (trained the first time, once) after a model answered

    def work(unit: units.Unit) -> dict[str, list]:
        job: Job = unit.item
        res = solve(registry.load_model(job.model), get_domain(job.domain), job.problem, nli=backend, nli_name=nli,
                    n=job.n, temperature=job.temperature, top_p=cfg.divergent_top_p, max_steps=cfg.divergent_max_steps,
                    max_step_tokens=cfg.divergent_max_step_tokens, strict=cfg.divergent_strict_entailment,
                    seed=cfg.seed)
        return {"steps": [s.to_dict() for s in res.steps], "problems": [res.problem.to_dict()]}
    return work


def solve_units(cfg: DivergentConfig, root: Path, todo: list[units.Unit], *, name: str = "solve",
                progress: bool = True) -> dict[str, dict[str, list[dict]]]:
    """Solve the problem units ``todo`` (duplicates once) in ``root``; each unit's ``{steps, problems}``
    rows by its key."""
    todo = list({u.key: u for u in todo}.values())
    judge = cfg.nli_judge()               # an LLM entailment judge (or "")
    solve = solver(cfg)

    def work(unit: units.Unit) -> dict[str, list]:
        with LEDGER.tagged(unit=unit.key):
            return {"solved": [{"unit": unit.key, **solve(unit)}]}
    rows = units.run_units(root, name, todo, work, width=widths.width(*{u.item.model for u in todo}, judge),
                           desc=f"divergent · {len(todo)} problems", progress=progress)
    return {r.pop("unit"): r for r in rows.get("solved", [])}


def solve_domain(cfg: DivergentConfig, model: str, domain: str, root: Path, *, n: int | None = None,
                 temperature: float | None = None, limit: int | None = None,
                 progress: bool = True) -> dict[str, list[dict]]:
    """The ``steps`` and ``problems`` rows of the first ``limit`` problems of ``domain`` solved by ``model``
    (``n`` samples per step at ``temperature``; the config's values by default), as units in ``root``."""
    todo = problem_units(cfg, model, domain, n=n, temperature=temperature, limit=limit)
    done = solve_units(cfg, root, todo, progress=progress)
    return {t: [r for u in todo for r in done[u.key][t]] for t in ("steps", "problems")}


def run(cfg: DivergentConfig) -> Path:
    """Every divergent record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
    store = contract.start(cfg)
    main = [(get_domain(d).source_kind(), problem_units(cfg, m, d)) for m in cfg.tested for d in cfg.divergent_domains]
    sweep = [u for t in cfg.divergent_temperatures
             for u in problem_units(cfg, cfg.model, cfg.divergent_sweep_domain, temperature=t,
                                    limit=cfg.divergent_sweep_limit)]
    done = solve_units(cfg, store.root, [u for _, us in main for u in us] + sweep)
    store.flush_calls()
    for table in ("steps", "problems"):
        store.write(table, [{**r, "data_source": source} for source, us in main for u in us
                            for r in done[u.key][table]])
    store.write("sweep", [r for u in sweep for r in done[u.key]["problems"]])
    for m in cfg.tested:
        store.note_model(registry.load_model(m))

    backend = cfg.nli_backend()
    why = getattr(backend, "fallback_reason", None)
    store.write("entailment", [EntailmentRecord(cfg.divergent_nli, backend.name,
                                                f"fallback: {why}" if why else "as requested").to_dict()])
    rows = []
    for b in (cfg.divergent_nli, llm_nli(cfg.model)):
        for dataset in ("sick", "msrp"):
            try:
                r = evaluate_nli(b, dataset=dataset, limit=cfg.divergent_nli_eval_pairs, seed=cfg.seed)
            except CrevalError as e:
                if b == cfg.divergent_nli:      # the chapter's own backend: the samples were clustered with it
                    raise
                # the comparison with the model under test as an entailment judge: a server that gives no label a
                # log-prob cannot be read; the row says so instead of failing the study
                rows.append(NliEvalRecord(b, f"not measured: {e.problem}", dataset, 0, None, None, "", None).to_dict())
                continue
            rows.append(NliEvalRecord(b, r["nli"], r["dataset"], r["n"], r["accuracy"], r["macro_f1"], r["baseline"],
                                      r["baseline_accuracy"]).to_dict())
    store.write("nli_eval", rows)
    return contract.finish(store)

