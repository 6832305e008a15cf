"""The convergent study's run (chapter 03): every judge call behind the chapter, into ``cfg.run_dir``.

It reads chapter 02's solutions (the ``problems`` table of
the divergent study's records for ``cfg.divergent()``; the divergent study runs first only if
its folder is not finished, and is never rerun here) and judges with ``judge_model`` (the LLM behind every
judge). The work is one set of units (:func:`creval.core.units.run_units`, ``units/judged.jsonl``,
resumable, run together up to the judge model's in-flight budget), each a pair judged on all its criteria
(:func:`creval.judges.runner.judge_pair`):

- each of ``judges`` x each of ``human_pairs`` MacGyver pairs with human labels, drawn with ``data_seed``
  (the same pairs for every judge; Tables 2 and 15); the retrieval judge's unit of a pair then judges it at
  each early-exit threshold of ``confidence_thresholds`` in turn (Fig. 12): each T reuses the cached turns of
  the validation and of the thresholds before it, within the unit, so the sweep's calls made and cached per T
  are the same whatever runs beside it (a sweep unit per pair when the retrieval judge is not among
  ``judges``);
- ``bench_judge`` x each solution of every model under test on every domain (paper Tables 3-5, Fig. 7).

A retrieval judge keeps its fragments in ``bench/<model>/<domain>/fragments``, ``human/retrieval/fragments`` or
``sweep/T<T>/fragments`` (one ChromaDB collection per pair). The tables, which the report reads:

- ``bench_verdicts``: one row per solution x criterion, with the solution's ``model``, ``domain`` and
  ``mean_semantic_entropy``;
- ``human_pairs``: the labelled pairs (pair id, solver, annotation, ``labels``);
- ``human_verdicts``: one row per judge x pair x criterion, with the human ``label``;
- ``transcripts``: every judge's discussion of each human-labelled pair and criterion;
- ``sweep``: one row per threshold ``T`` x pair x criterion, with ``T`` and ``label``;
- ``sweep_calls``: per ``T``, the pairs judged and the judge (chat) calls made and served from the call
  cache at that T (summed over the pairs' units: the later thresholds reuse the first round of the earlier
  ones);
- ``labels_source``: one line saying where the human labels came from.

An interrupted run resumes: finished units are kept, the call cache serves every call already made, and the
tables are rewritten from the units.
"""
from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

from creval.core import units
from creval.core.ledger import LEDGER
from creval.datasets import macgyver
from creval.datasets.base import provenance
from creval.domains import get_domain
from creval.judges.base import crit_name
from creval.judges.registry import judge_settings, make_judge
from creval.judges.runner import judge_pair, pair_of
from creval.models import registry
from creval.models import width as widths
from creval.studies import contract
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.registry import upstream_records

log = logging.getLogger("creval.studies.convergent.run")

LABELLED = ("feasibility", "effectiveness")     # the MacGyver criteria with human labels


def validation_criteria(domain: str = "macgyver") -> list:
    """The domain's criteria that have human labels (feasibility, effectiveness)."""
    return [c for c in get_domain(domain).criteria if crit_name(c).lower() in LABELLED]


def human_pairs(cfg: ConvergentConfig) -> list[dict]:
    """``human_pairs`` labelled MacGyver pairs drawn with ``data_seed`` (the same pairs for every judge)."""
    return macgyver.sample_pairs(cfg.convergent_human_pairs, seed=cfg.data_seed)


def labels_line() -> str:
    """Where the human labels of the judge validation come from (or that they are the bundled sample)."""
    return provenance(macgyver.DATASET, macgyver.source(), "Human labels of the judged pairs (MacGyver benchmark)")


def _judge(cfg: ConvergentConfig, name: str, model, folder: Path, **overrides):
    """The judge ``name`` with the config's judge settings (its own share of them), fragments in ``folder``."""
    settings = judge_settings(name, {**cfg.judge_params(), **overrides})
    return make_judge(name, model, store_dir=folder / "fragments", **settings)


def pair_labels(pairs: list[dict]) -> dict[str, dict]:
    """``{pair_id: {criterion (lower case): label}}``."""
    return {p["pair_id"]: {k.lower(): v for k, v in p["labels"].items()} for p in pairs}


def _labelled(rows: list[dict], labels: dict[str, dict], **extra) -> list[dict]:
    """The verdict ``rows`` of labelled pairs, each with its human ``label`` (and ``extra`` columns)."""
    return [{**r, **extra, "label": labels[r["pair_id"]][r["criterion"].lower()]}
            for r in rows if r["pair_id"] in labels]


def _bench(judge, row: dict, criteria, model, domain) -> dict[str, list]:
    """One solution's ``bench_verdicts`` rows (with its ``model`` and ``domain``)."""
    return {"bench_verdicts": [{**r, "model": model, "domain": domain}
                               for r in judge_pair(judge, row, criteria)["verdicts"]]}


def bench_units(cfg: ConvergentConfig, model, problems) -> list[units.Unit]:
    """``bench_judge`` on every solution of ``problems`` (chapter 02's table): one unit per solution, one
    fragment folder per model x domain."""
    out = []
    if not len(problems):
        return out
    for (m, domain), g in problems.groupby(["model", "domain"], sort=False):
        folder = Path("bench") / registry.model_name(str(m)) / str(domain)
        judge = _judge(cfg, cfg.convergent_bench_judge, model, cfg.run_dir / folder)
        crits = get_domain(domain).criteria
        out += [units.Unit(f"{folder.as_posix()}/{pair_of(row)[0]}", partial(_bench, judge, row, crits, m, domain))
                for row in g.to_dict("records")]
    return out


def _validate(judge, pair: dict, labels: dict) -> dict[str, list]:
    """One judge on one labelled pair: its ``human_verdicts`` (with labels) and ``transcripts`` rows."""
    t = judge_pair(judge, pair, validation_criteria())
    return {"human_verdicts": _labelled(t["verdicts"], labels), "transcripts": t["transcripts"]}


def validation_units(cfg: ConvergentConfig, model, pairs: list[dict]) -> list[units.Unit]:
    """Each of ``judges`` on each labelled pair (the same pairs for every judge): one unit per judge x pair.
    The retrieval judge's unit of a pair goes on with the sweep's thresholds on it (each T reuses the cached
    turns of its validation and of the thresholds before it); without the retrieval judge among ``judges``
    each pair's sweep is a unit of its own."""
    labels, sweep = pair_labels(pairs), sweep_judges(cfg, model)
    out = []
    for j in cfg.convergent_judges:
        judge = _judge(cfg, j, model, cfg.run_dir / "human" / j)
        for p in pairs:
            works = [partial(_validate, judge, p, labels)]
            if j == "retrieval":
                works.append(partial(_sweep, sweep, p, labels))
            out.append(units.Unit(f"human/{j}/{p['pair_id']}", partial(_chain, *works)))
    if "retrieval" not in cfg.convergent_judges:
        out += [units.Unit(f"sweep/{p['pair_id']}", partial(_sweep, sweep, p, labels)) for p in pairs]
    return out


def _chain(*works) -> dict[str, list]:
    """The tables of ``works`` done one after the other."""
    out: dict[str, list] = {}
    for work in works:
        for table, rows in work().items():
            out.setdefault(table, []).extend(rows)
    return out


def _sweep(judges: dict[float, object], pair: dict, labels: dict) -> dict[str, list]:
    """The retrieval judge on one labelled pair at each threshold in turn: ``sweep`` rows (with T and label)
    and per T the chat calls made and served from the cache (``sweep_usage``)."""
    rows, usage = [], []
    for t, judge in judges.items():
        with LEDGER.collect() as tally:
            rows += _labelled(judge_pair(judge, pair, validation_criteria())["verdicts"], labels, T=t)
        chat = [r for r in tally.records if r.kind == "chat"]
        usage.append({"T": t, "calls_made": sum(not r.cached for r in chat),
                      "calls_cached": sum(r.cached for r in chat)})
    return {"sweep": rows, "sweep_usage": usage}


def sweep_judges(cfg: ConvergentConfig, model) -> dict[float, object]:
    """The retrieval judge at every early-exit threshold T, in order (fragments in ``sweep/T<T>/``)."""
    return {float(t): _judge(cfg, "retrieval", model, cfg.run_dir / "sweep" / f"T{float(t):g}", threshold=float(t))
            for t in cfg.convergent_confidence_thresholds}


def sweep_tables(cfg: ConvergentConfig, rows: list[dict], usage: list[dict], pairs: int) -> tuple[list, list]:
    """``sweep`` ordered by T (then pair and criterion) and ``sweep_calls``: per T the pairs and the calls
    made and cached, summed over the units."""
    ts = [float(t) for t in cfg.convergent_confidence_thresholds]
    calls = [{"T": t, "pairs": pairs, **{k: sum(u[k] for u in usage if u["T"] == t)
                                          for k in ("calls_made", "calls_cached")}} for t in ts]
    return sorted(rows, key=lambda r: ts.index(r["T"])), calls


def _work(u: units.Unit) -> dict[str, list]:
    """A unit's work: its item is the judging of its pair, bound to the judge and the pair."""
    return u.item()


def run(cfg: ConvergentConfig) -> Path:
    """Every convergent record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""

    problems = upstream_records(cfg)["divergent"].problems       # chapter 02's solutions, never rerun here
    store = contract.start(cfg)
    judge = registry.load_model(cfg.judge_model)
    store.note_model(judge)
    for m in cfg.tested:                                          # the models whose solutions are judged
        store.note_model(registry.load_model(m))
    width = widths.width(cfg.judge_model)                          # the only model this study calls
    pairs = human_pairs(cfg)
    store.write("labels_source", [{"line": labels_line()}])
    store.write("human_pairs", [{k: p.get(k) for k in ("pair_id", "problem_id", "solver", "annotation", "labels",
                                                        "source")} for p in pairs])
    tables = units.run_units(cfg.run_dir, "judged", validation_units(cfg, judge, pairs) +
                             bench_units(cfg, judge, problems), _work, width=width, desc="convergent")
    for table in ("human_verdicts", "transcripts", "bench_verdicts"):
        store.write(table, tables.get(table, []))
    sweep, calls = sweep_tables(cfg, tables.get("sweep", []), tables.get("sweep_usage", []), len(pairs))
    store.write("sweep", sweep)
    store.write("sweep_calls", calls)
    log.info("convergent %s: %d bench verdicts, %d human verdicts, %d sweep verdicts", cfg.run_dir,
             len(tables.get("bench_verdicts", [])), len(tables.get("human_verdicts", [])), len(sweep))
    return contract.finish(store)
