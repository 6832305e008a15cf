"""Divergent creativity runs: every problem of a domain solved step by step with semantic entropy.

``run_divergent(model, domain, limit, n, out)`` writes one run folder (``creval.core.runs.RunStore``):
``steps.jsonl`` and ``problems.jsonl`` (typed records, :mod:`creval.studies.divergent.records`), plus
``manifest.json`` and ``calls.jsonl``. It is resumable: problems already in ``problems.jsonl`` are
skipped, step rows of a problem that never finished are dropped and recomputed (the call cache makes
the recomputation free). ``load_records(path)`` reads one run folder, or every run folder below a
root, into two pandas DataFrames.

:func:`records` is how every chapter gets divergent results: for a :class:`GenerationConfig` it runs
only what is missing, in folders named by the run's identity
(``<run_root>/divergent/<model>/<domain>/<run id>``), and returns the records. Downstream studies
(convergent, validation) call it with the same config and so read chapter 02's runs.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.core.runs import RunStore
from creval.domains import get_domain
from creval.measures.nli.backends import resolved_name
from creval.studies.config import run_id
from creval.studies.divergent.config import GenerationConfig

log = logging.getLogger("creval.studies.divergent.run")


# parameters that change the records: resuming a folder with other values would mix two experiments
_IDENTITY = ("model", "domain", "n", "temperature", "top_p", "max_steps", "max_step_tokens", "nli", "strict", "seed",
             "data_seed", "data")


def run_divergent(model: str, domain: str, limit: int, n: int, out: str | Path, temperature: float = 1.0,
                  top_p: float = 0.9, max_steps: int = 5, max_step_tokens: int = 48, nli: str = "minilm-sick",
                  strict: bool = True, seed: int = 0, source: str | Path | None = None, data_seed: int | None = None,
                  progress: bool = True) -> RunStore:
    """Solve ``limit`` problems of ``domain`` with ``model`` drawing ``n`` samples per step; see module doc."""
    from tqdm.auto import tqdm

    from creval.measures.nli.backends import load_nli
    from creval.studies.divergent.generation import solve
    from creval.models.registry import load_model

    if n < 1 or limit < 0 or max_steps < 1:
        raise CrevalError(f"bad sizes n={n}, limit={limit}, max_steps={max_steps}",
                          "use n >= 1, limit >= 0, max_steps >= 1")
    dom = get_domain(domain)
    nli = resolved_name(nli)              # the backend that really runs (e.g. a fallback when SICK is missing)
    params = {"model": model, "domain": dom.name, "limit": limit, "n": n, "temperature": temperature, "top_p": top_p,
              "max_steps": max_steps, "max_step_tokens": max_step_tokens, "nli": nli, "strict": strict, "seed": seed,
              "data_seed": dom.default_seed if data_seed is None else data_seed,
              "data": dom.source_kind(source)}   # sample problems never mix with the real dataset's
    out = Path(out)
    old = out / "manifest.json"
    if old.exists():
        prev = json.loads(old.read_text()).get("params", {})
        diff = {k: (prev.get(k), params[k]) for k in _IDENTITY if k in prev and prev.get(k) != params[k]}
        if diff:
            raise CrevalError(f"{out} holds a run with other parameters {diff} (old, new)",
                              "use another --out folder, or delete that one")
    problems, where = dom.load_with_source(limit=limit, source=source, seed=data_seed)
    params["data_source"] = where
    store = RunStore(out, params)
    store.selected = [p.problem_id for p in problems]   # the problems of this call, in data order
    store.seeds["sampling"] = seed
    store.seeds["data_shuffle"] = dom.default_seed if data_seed is None else data_seed

    done = {r["problem_id"] for r in store.read("problems")}
    steps = store.read("steps")
    kept = [r for r in steps if r["problem_id"] in done]
    if len(kept) != len(steps):   # rows of a problem interrupted mid-way: recomputed (from cache) below
        store.write("steps", kept)
    todo = [p for p in problems if p.problem_id not in done]

    m = load_model(model)
    store.note_model(m)
    nli_backend = load_nli(nli) if todo else None
    for p in tqdm(todo, desc=f"{dom.name} · {m.name}", unit="problem", disable=not progress):
        res = solve(m, dom, p, nli=nli_backend, nli_name=nli, n=n, temperature=temperature, top_p=top_p,
                    max_steps=max_steps, max_step_tokens=max_step_tokens, strict=strict, seed=seed)
        store.append("steps", res.steps)
        store.append("problems", [res.problem])   # written last: a problem counts as done only now
        store.flush_calls()
    store.finish()
    log.info("divergent run in %s: %d problems (%d new) from %s", out, len(problems), len(todo), where)
    return store


def run_dir(cfg: GenerationConfig, model: str, domain: str, n: int | None = None,
            temperature: float | None = None) -> Path:
    """The folder of one divergent run, named by its identity (other parameters, other folder)."""
    ident = cfg.identity(model, domain, n, temperature)
    ident["nli"] = resolved_name(cfg.nli)
    ident["data"] = get_domain(domain).source_kind()
    return cfg.run_path / "divergent" / model / domain / run_id(ident)


def records(cfg: GenerationConfig, *, models=None, domains=None, n: int | None = None,
            temperature: float | None = None, limit: int | None = None, progress: bool = True):
    """``(steps_df, problems_df)`` for every model x domain at ``cfg``'s settings (``models``, ``domains``,
    ``n``, ``temperature`` and ``limit`` override the config's), running only what is missing. Only the
    first ``limit`` problems of the data order are returned, even when the folder holds more."""
    import pandas as pd
    steps, probs = [], []
    for m in (cfg.models if models is None else models):
        for d in (cfg.domains if domains is None else domains):
            out = run_dir(cfg, m, d, n, temperature)
            t = cfg.temperature if temperature is None else temperature
            store = run_divergent(m, d, cfg.limit if limit is None else limit, cfg.n_samples if n is None else n,
                                  out, temperature=float(t), top_p=cfg.top_p, max_steps=cfg.max_steps,
                                  max_step_tokens=cfg.max_step_tokens, nli=cfg.nli, strict=cfg.strict_entailment,
                                  seed=cfg.seed, data_seed=cfg.data_seed, progress=progress)
            s, p = load_records(out)
            keep = set(store.selected)
            if len(p):
                p = p[p["problem_id"].isin(keep)].assign(data_source=store.params["data_source"])
                s = s[s["problem_id"].isin(keep)] if len(s) else s
            steps.append(s)
            probs.append(p)
    return pd.concat(steps, ignore_index=True), pd.concat(probs, ignore_index=True)


def load_records(path: str | Path):
    """``(steps_df, problems_df)`` of one run folder, or of every run folder found below ``path``."""
    import pandas as pd
    path = Path(path)
    folders = [path] if (path / "problems.jsonl").exists() else sorted(
        p.parent for p in path.rglob("problems.jsonl"))
    steps, probs = [], []
    for f in folders:
        run = str(f.relative_to(path)) if f != path else "."
        steps += [{**r, "run": run} for r in read_jsonl(f / "steps.jsonl")]
        probs += [{**r, "run": run} for r in read_jsonl(f / "problems.jsonl")]
    return pd.DataFrame(steps), pd.DataFrame(probs)
