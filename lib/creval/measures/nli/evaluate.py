"""Agreement of an NLI backend with human labels.

- ``sick``: SICK test, 3-way label accuracy and macro-F1; baseline = always the majority class (neutral).
- ``msrp``: MSRP test as a paraphrase test, the way clustering uses NLI: a pair is a paraphrase iff each
  sentence entails the other (strict). Also the non-strict rule (no contradiction either way, not neutral
  both ways) and the always-"paraphrase" baseline.
- ``sample``: our own 50 pairs (:mod:`creval.datasets.nli_pairs`): both of the above on one small set.

When SICK or MSRP cannot be had (see :mod:`creval.datasets.base`), :func:`evaluate_nli` measures on the
sample instead and says so: ``dataset`` is what was measured, ``requested`` what was asked, ``source``
where the pairs came from.
"""
from __future__ import annotations

import logging
import random
import time

from creval.core.errors import CrevalError
from creval.datasets import msrp, nli_pairs, sick
from creval.measures.nli.backends import NLI, Label, load_nli
from creval.measures.stats.agreement import accuracy, macro_f1

log = logging.getLogger("creval.nli")

DATASETS = ("sick", "msrp", "sample")


def _draw(rows: list, limit: int | None, seed: int) -> list:
    return random.Random(seed).sample(rows, limit) if limit and limit < len(rows) else rows


def _three_way(nli: NLI, rows: list[tuple[str, str, str]]) -> dict:
    pred = nli.classify([(a, b) for a, b, _ in rows])
    gold = [Label(g) for _, _, g in rows]
    base = [Label.NEUTRAL] * len(gold)
    return {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred, list(Label)),
            "baseline": "always neutral", "baseline_accuracy": accuracy(gold, base),
            "baseline_macro_f1": macro_f1(gold, base, list(Label)), "pairs_evaluated": len(rows),
            "predicted": {lab.value: sum(p == lab for p in pred) for lab in Label}}


def _paraphrase(nli: NLI, rows: list[tuple[str, str, int]]) -> dict:
    labs = nli.classify([(a, b) for a, b, _ in rows] + [(b, a) for a, b, _ in rows])
    fwd, bwd = labs[:len(rows)], labs[len(rows):]
    gold = [q for _, _, q in rows]
    strict = [int(f == Label.ENTAILMENT and b == Label.ENTAILMENT) for f, b in zip(fwd, bwd)]
    loose = [int(Label.CONTRADICTION not in (f, b) and not (f == b == Label.NEUTRAL)) for f, b in zip(fwd, bwd)]
    base = [1] * len(gold)
    tp = sum(1 for g, p in zip(gold, strict) if g == p == 1)
    return {"accuracy": accuracy(gold, strict), "macro_f1": macro_f1(gold, strict, [0, 1]),
            "precision": tp / max(sum(strict), 1), "recall": tp / max(sum(gold), 1),
            "accuracy_nonstrict": accuracy(gold, loose), "macro_f1_nonstrict": macro_f1(gold, loose, [0, 1]),
            "baseline": "always paraphrase", "baseline_accuracy": accuracy(gold, base),
            "baseline_macro_f1": macro_f1(gold, base, [0, 1]), "pairs_evaluated": 2 * len(rows)}


_SAID: set[str] = set()
"""The datasets whose fall-back to the sample was said already in this process."""


def evaluate_nli(nli: NLI | str, dataset: str = "sick", limit: int | None = 200, seed: int = 0) -> dict:
    """Agreement of ``nli`` with held-out labels (``limit`` pairs drawn with ``seed``; None = all).

    Returns ``nli`` (the backend that ran), ``requested_nli``, ``dataset`` (what was measured),
    ``requested`` (the dataset asked for), ``source``, ``n`` and the metrics of the module doc. On the
    sample, the paraphrase metrics are the headline (``accuracy``...) and the 3-way ones carry ``nli3_``."""
    if dataset not in DATASETS:
        raise CrevalError(f"unknown NLI evaluation dataset {dataset!r}", f"use one of {', '.join(DATASETS)}")
    if isinstance(nli, str):
        nli = load_nli(nli)
    t0 = time.perf_counter()
    measured, where = dataset, ""
    if dataset in ("sick", "msrp"):
        mod = sick if dataset == "sick" else msrp
        try:
            where = str(mod.source())
        except CrevalError as e:
            if dataset not in _SAID:                   # once a process: every backend measured falls back alike
                _SAID.add(dataset)
                log.warning("%s cannot be had (%s); measuring on the bundled sample instead", dataset, e.problem)
            measured = "sample"
    if measured == "sick":
        rows = _draw(sick.read_sick("test"), limit, seed)
        res = _three_way(nli, rows)
    elif measured == "msrp":
        rows = _draw(msrp.read_msrp("test"), limit, seed)
        res = _paraphrase(nli, rows)
    else:
        rows = _draw(nli_pairs.read_nli_sample(), limit, seed)
        where = f"sample:{nli_pairs.sample_file()}"
        three = _three_way(nli, [(a, b, lab) for a, b, lab, _ in rows])
        res = {**_paraphrase(nli, [(a, b, p) for a, b, _, p in rows]),
               **{f"nli3_{k}": v for k, v in three.items() if k != "pairs_evaluated"}}
    return {"nli": getattr(nli, "name", type(nli).__name__), "requested_nli": getattr(nli, "requested", None),
            "dataset": measured, "requested": dataset, "source": where, "n": len(rows), **res,
            "seconds": round(time.perf_counter() - t0, 3)}
