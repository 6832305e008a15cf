"""The divergent study's run: every problem of every domain solved step by step with semantic entropy.

:func:`run` writes the study's one run folder (``cfg.run_dir``): one resumable *unit* per model x domain x
temperature under ``units/`` (its own ``steps.jsonl``, ``problems.jsonl``, ``calls.jsonl``), then the study's
tables at the top: ``steps`` and ``problems`` (the models under test on ``domains`` at ``temperature``),
``sweep`` (``sweep_limit`` problems of ``sweep_domain`` at each of ``temperatures``), ``nli_eval``
(entailment backends on held-out pairs) and ``entailment`` (the backend asked for and the one that ran).
A unit whose problems are all in ``problems.jsonl`` is read back; a problem interrupted mid-way is
recomputed from the call cache. :func:`solve_domain` is the unit, public for the validation study, which
reruns chapter 02's problems at other sample sizes.
"""
from __future__ import annotations

import logging
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.core.runs import RunStore
from creval.domains import get_domain
from creval.measures.nli.backends import resolved_name
from creval.studies import contract
from creval.studies.divergent.config import DivergentConfig

log = logging.getLogger("creval.studies.divergent.run")


def unit_dir(cfg: DivergentConfig, root: Path, model: str, domain: str, n: int, temperature: float) -> Path:
    from creval.models.registry import model_name
    return root / "units" / model_name(model) / domain / f"n{n}-T{float(temperature):g}"


def solve_domain(cfg: DivergentConfig, model: str, domain: str, out: Path, *, n: int | None = None,
                 temperature: float | None = None, limit: int | None = None, progress: bool = True) -> list[str]:
    """Solve the first ``limit`` problems of ``domain`` with ``model`` (``n`` samples per step at
    ``temperature``; the config's values by default) into the unit folder ``out``; the ids of those problems.
    Finished problems are kept; the rows of a problem interrupted mid-way are dropped and recomputed."""
    from tqdm.auto import tqdm

    from creval.measures.nli.backends import LazyNLI
    from creval.models.registry import load_model
    from creval.studies.divergent.generation import solve

    n = cfg.n_samples if n is None else n
    limit = cfg.limit if limit is None else limit
    t = float(cfg.temperature if temperature is None else temperature)
    if n < 1 or limit < 0 or cfg.max_steps < 1:
        raise CrevalError(f"bad sizes n={n}, limit={limit}, max_steps={cfg.max_steps}",
                          "use n_samples >= 1, limit >= 0, max_steps >= 1")
    dom = get_domain(domain)
    nli = resolved_name(cfg.nli)          # the backend that really runs (e.g. a fallback when SICK is missing)
    problems, where = dom.load_with_source(limit=limit, seed=cfg.data_seed)
    store = RunStore(out, {"model": model, "domain": dom.name, "limit": limit, "n": n, "temperature": t,
                           "top_p": cfg.top_p, "max_steps": cfg.max_steps, "max_step_tokens": cfg.max_step_tokens,
                           "nli": nli, "strict": cfg.strict_entailment, "seed": cfg.seed,
                           "data_seed": cfg.data_seed, "data_source": where})
    store.seeds.update(sampling=cfg.seed, data_shuffle=cfg.data_seed)
    done = {r["problem_id"] for r in store.read("problems")}
    steps = store.read("steps")
    kept = [r for r in steps if r["problem_id"] in done]
    if len(kept) != len(steps):
        store.write("steps", kept)
    todo = [p for p in problems if p.problem_id not in done]
    if todo:
        m = load_model(model)
        store.note_model(m)
        backend = LazyNLI(nli)            # loaded (trained, the first time) after the model has answered once
        for p in tqdm(todo, desc=f"divergent · {m.name} · {dom.name} · T={t:g}", unit="problem",
                      disable=not progress):
            res = solve(m, dom, p, nli=backend, nli_name=nli, n=n, temperature=t, top_p=cfg.top_p,
                        max_steps=cfg.max_steps, max_step_tokens=cfg.max_step_tokens,
                        strict=cfg.strict_entailment, seed=cfg.seed)
            store.append("steps", res.steps)
            store.append("problems", [res.problem])   # written last: a problem counts as done only now
            store.flush_calls()
        store.finish()
    log.info("divergent unit %s: %d problems (%d new) from %s", out, len(problems), len(todo), where)
    return [p.problem_id for p in problems]


def unit_rows(out: Path, keep: list[str], **extra) -> tuple[list[dict], list[dict]]:
    """``(steps, problems)`` rows of a unit folder, only the problems in ``keep`` (in that order)."""
    order = {p: i for i, p in enumerate(keep)}
    steps = [{**r, **extra} for r in read_jsonl(out / "steps.jsonl") if r["problem_id"] in order]
    probs = sorted((r for r in read_jsonl(out / "problems.jsonl") if r["problem_id"] in order),
                   key=lambda r: order[r["problem_id"]])
    return steps, [{**r, **extra} for r in probs]


def run(cfg: DivergentConfig) -> Path:
    """Every divergent record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
    from creval.measures.nli.backends import load_nli
    from creval.measures.nli.evaluate import evaluate_nli
    from creval.models.registry import load_model

    store = contract.start(cfg)
    root = store.root
    steps, probs, sweep = [], [], []
    for m in cfg.tested:
        for d in cfg.domains:
            out = unit_dir(cfg, root, m, d, cfg.n_samples, cfg.temperature)
            keep = solve_domain(cfg, m, d, out)
            source = get_domain(d).source_kind()
            s, p = unit_rows(out, keep, data_source=source)
            steps += s
            probs += p
        store.note_model(load_model(m))
    for t in cfg.temperatures:
        out = unit_dir(cfg, root, cfg.model, cfg.sweep_domain, cfg.n_samples, t)
        keep = solve_domain(cfg, cfg.model, cfg.sweep_domain, out, temperature=t, limit=cfg.sweep_limit)
        sweep += unit_rows(out, keep)[1]
    store.write("steps", steps)
    store.write("problems", probs)
    store.write("sweep", sweep)

    backend = load_nli(cfg.nli)
    why = getattr(backend, "fallback_reason", None)
    store.write("entailment", [{"requested": cfg.nli, "ran": backend.name,
                                "why": f"fallback: {why}" if why else "as requested"}])
    rows = []
    for b in (cfg.nli, f"llm:{cfg.model}"):
        for dataset in ("sick", "msrp"):
            r = evaluate_nli(b, dataset=dataset, limit=cfg.nli_eval_pairs, seed=cfg.seed)
            rows.append({"backend": b, "ran": r["nli"], "dataset": r["dataset"], "pairs": r["n"],
                         "accuracy": r["accuracy"], "macro F1": r["macro_f1"], "baseline": r["baseline"],
                         "baseline accuracy": r["baseline_accuracy"], "seconds": r["seconds"]})
    store.write("nli_eval", rows)
    return contract.finish(store)


def records(cfg: DivergentConfig) -> contract.Records:
    """The divergent tables of ``cfg`` (``steps``, ``problems``, ``sweep``, ``nli_eval``, ``entailment``),
    running only what is missing."""
    return contract.read(cfg, run)


def load_records(path: str | Path):
    """``(steps_df, problems_df)`` of one run or unit folder, or of every unit folder found below ``path``
    (for reading runs by hand)."""
    import pandas as pd
    path = Path(path)
    folders = [path] if (path / "problems.jsonl").exists() else sorted(
        p.parent for p in path.rglob("problems.jsonl"))
    steps, probs = [], []
    for f in folders:
        run_name = str(f.relative_to(path)) if f != path else "."
        steps += [{**r, "run": run_name} for r in read_jsonl(f / "steps.jsonl")]
        probs += [{**r, "run": run_name} for r in read_jsonl(f / "problems.jsonl")]
    return pd.DataFrame(steps), pd.DataFrame(probs)
