"""The convergent study's run (chapter 03): every judge call behind the chapter, into ``cfg.run_dir``.

It reads chapter 02's solutions (the ``problems`` table of
:func:`creval.studies.divergent.run.records` for ``cfg.divergent()``; the divergent study runs first only if
its folder is not finished, and is never rerun here) and judges with ``judge_model`` (the LLM behind every
judge). Each judge run is a resumable sub-folder of the run folder (:func:`creval.judges.runner.run_judge`:
its own ``verdicts.jsonl``, ``transcripts.jsonl``, ``calls.jsonl`` and, for the retrieval judge,
``fragments/``):

- ``bench/<model>/<domain>/``: ``bench_judge`` on the solutions of every model under test on every domain
  (paper Tables 3-5, Fig. 7);
- ``human/<judge>/``: each of ``judges`` on ``human_pairs`` MacGyver pairs with human labels, drawn with
  ``data_seed`` (the same pairs for every judge; Tables 2 and 15);
- ``sweep/T<T>/``: the retrieval judge on the same pairs at each early-exit threshold of
  ``confidence_thresholds`` (Fig. 12).

The tables at the top, which the report reads:

- ``bench_verdicts``: one row per solution x criterion, with the solution's ``model``, ``domain`` and
  ``mean_semantic_entropy``;
- ``human_pairs``: the labelled pairs (pair id, solver, annotation, ``labels``);
- ``human_verdicts``: one row per judge x pair x criterion, with the human ``label``;
- ``transcripts``: every judge's discussion of each human-labelled pair and criterion;
- ``sweep``: one row per threshold ``T`` x pair x criterion, with ``T`` and ``label``;
- ``sweep_calls``: per ``T``, the pairs judged and the judge calls made and served from the call cache
  while its folder was written (the later thresholds reuse the first round of the earlier ones);
- ``labels_source``: one line saying where the human labels came from.

An interrupted run resumes: a judge folder keeps its finished pairs, the call cache serves every call
already made, and the tables are rewritten from the folders.
"""
from __future__ import annotations

import logging
from pathlib import Path

from creval.studies import contract
from creval.studies.convergent.config import ConvergentConfig

log = logging.getLogger("creval.studies.convergent.run")

LABELLED = ("feasibility", "effectiveness")     # the MacGyver criteria with human labels


def validation_criteria(domain: str = "macgyver") -> list:
    """The domain's criteria that have human labels (feasibility, effectiveness)."""
    from creval.domains import get_domain
    from creval.judges.base import crit_name
    return [c for c in get_domain(domain).criteria if crit_name(c).lower() in LABELLED]


def human_pairs(cfg: ConvergentConfig) -> list[dict]:
    """``human_pairs`` labelled MacGyver pairs drawn with ``data_seed`` (the same pairs for every judge)."""
    from creval.datasets import macgyver
    return macgyver.sample_pairs(cfg.human_pairs, seed=cfg.data_seed)


def labels_line() -> str:
    """Where the human labels of the judge validation come from (or that they are the bundled sample)."""
    from creval.datasets import macgyver
    from creval.datasets.base import provenance
    return provenance(macgyver.DATASET, macgyver.source(), "Human labels of the judged pairs (MacGyver benchmark)")


def _judge(cfg: ConvergentConfig, name: str, model, rows: list[dict], criteria, out: Path, **overrides):
    """``run_judge`` of ``name`` with the config's judge settings (its own share of them) into ``out``."""
    from creval.judges.registry import judge_settings
    from creval.judges.runner import run_judge
    settings = judge_settings(name, {**cfg.judge_params(), **overrides})
    return run_judge(name, model, rows, criteria, out, progress=True, **settings)


def _labelled(rows: list[dict], labels: dict[str, dict], **extra) -> list[dict]:
    """The verdict ``rows`` of labelled pairs, each with its human ``label`` (and ``extra`` columns)."""
    return [{**r, **extra, "label": labels[r["pair_id"]][r["criterion"].lower()]}
            for r in rows if r["pair_id"] in labels]


def judge_solutions(cfg: ConvergentConfig, model, problems) -> list[dict]:
    """``bench_judge`` on every solution of ``problems`` (chapter 02's table), one folder per model x domain;
    the verdict rows with the solution's ``model`` and ``domain``."""
    from creval.domains import get_domain
    from creval.models.registry import model_name
    out = []
    if not len(problems):
        return out
    for (m, domain), g in problems.groupby(["model", "domain"], sort=False):
        folder = cfg.run_dir / "bench" / model_name(str(m)) / str(domain)
        st = _judge(cfg, cfg.bench_judge, model, g.to_dict("records"), get_domain(domain).criteria, folder)
        out += [{**r, "model": m, "domain": domain} for r in st.read("verdicts")]
    return out


def validate_judges(cfg: ConvergentConfig, model, pairs: list[dict]) -> tuple[list[dict], list[dict]]:
    """Each of ``judges`` on the same labelled pairs: ``(verdict rows with labels, transcript rows)``."""
    labels = {p["pair_id"]: {k.lower(): v for k, v in p["labels"].items()} for p in pairs}
    crits, verdicts, transcripts = validation_criteria(), [], []
    for j in cfg.judges:
        st = _judge(cfg, j, model, pairs, crits, cfg.run_dir / "human" / j)
        verdicts += _labelled(st.read("verdicts"), labels)
        transcripts += [t for t in st.read("transcripts") if t["pair_id"] in labels]
    return verdicts, transcripts


def threshold_sweep(cfg: ConvergentConfig, model, pairs: list[dict]) -> tuple[list[dict], list[dict]]:
    """The retrieval judge at each early-exit threshold T on the labelled pairs: ``(verdict rows with T and
    label, one row per T with the calls made and served from the cache)``.

    Every T reuses the cached turns of the others (the first round is the same for all T), so the sweep costs
    little more than its most expensive T; the calls are counted from each folder's ``calls.jsonl``."""
    labels = {p["pair_id"]: {k.lower(): v for k, v in p["labels"].items()} for p in pairs}
    crits, verdicts, calls = validation_criteria(), [], []
    for t in cfg.confidence_thresholds:
        st = _judge(cfg, "retrieval", model, pairs, crits, cfg.run_dir / "sweep" / f"T{float(t):g}",
                    threshold=float(t))
        verdicts += _labelled(st.read("verdicts"), labels, T=float(t))
        chat = [c for c in st.read("calls") if c.get("kind") == "chat"]
        calls.append({"T": float(t), "pairs": len(pairs), "calls made": sum(not c["cached"] for c in chat),
                      "calls cached": sum(bool(c["cached"]) for c in chat)})
    return verdicts, calls


def run(cfg: ConvergentConfig) -> Path:
    """Every convergent record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
    from creval.models.registry import load_model
    from creval.studies.divergent.run import records as divergent_records

    problems = divergent_records(cfg.divergent()).problems        # chapter 02's solutions, never rerun here
    store = contract.start(cfg)
    judge = load_model(cfg.judge_model)
    store.note_model(judge)
    for m in cfg.tested:                                          # the models whose solutions are judged
        store.note_model(load_model(m))

    store.write("bench_verdicts", judge_solutions(cfg, judge, problems))
    store.flush_calls()

    pairs = human_pairs(cfg)
    store.write("labels_source", [{"line": labels_line()}])
    store.write("human_pairs", [{k: p.get(k) for k in ("pair_id", "problem_id", "solver", "annotation", "labels",
                                                        "source")} for p in pairs])
    verdicts, transcripts = validate_judges(cfg, judge, pairs)
    store.write("human_verdicts", verdicts)
    store.write("transcripts", transcripts)
    store.flush_calls()

    sweep, calls = threshold_sweep(cfg, judge, pairs)
    store.write("sweep", sweep)
    store.write("sweep_calls", calls)
    log.info("convergent %s: %d bench verdicts, %d human verdicts, %d sweep verdicts", cfg.run_dir,
             len(store.read("bench_verdicts")), len(verdicts), len(sweep))
    return contract.finish(store)


def records(cfg: ConvergentConfig) -> contract.Records:
    """The convergent tables of ``cfg`` (see the module doc), running only what is missing."""
    return contract.read(cfg, run)
