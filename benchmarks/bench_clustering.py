"""Benchmark: batched, memoised clustering (``cluster``) against the papers' one-pair-per-call way
(``cluster_naive``) on one step's 10 samples, for the minilm-sick cross-encoder and an LLM judge.

All runs must give identical cluster ids; ``cluster(prefetch="all")`` (every pair of distinct texts in
one call) is shown as the other end of the batching trade-off. The NLI cache is bypassed (a throw-away cache file,
and the backends are called without it), so the times are real model time.

    python benchmarks/bench_clustering.py [--llm smollm2-135m] [--no-llm] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ["CREVAL_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="creval-bench-"), "calls.sqlite")

from creval.measures.clustering import CountingNLI, cluster, cluster_naive  # noqa: E402
from creval.measures.nli.backends import LLMNLI, load_nli  # noqa: E402

# Ten next-step samples for one MacGyver-style step (spilled water, a towel, a bucket, a sponge...).
# Small models repeat themselves: four samples are the same sentence, two more differ only in spacing.
REALISTIC = [
    "Use the towel to soak up the water.",
    "Use the towel to soak up the water.",
    "Wring the towel out into the bucket.",
    "Use the towel to soak up the water.",
    "Press the sponge onto the wet spot to absorb the water.",
    "Use the  towel to soak up the water. ",
    "Wring the towel out into the bucket.",
    "Use the towel to soak up the water.",
    "Lay the newspaper over the puddle so it absorbs the rest.",
    "Use the towel to soak up the water.",
]
DISTINCT = [
    "Use the towel to soak up the water.",
    "Wring the towel out into the bucket.",
    "Press the sponge onto the wet spot to absorb the water.",
    "Lay the newspaper over the puddle so it absorbs the rest.",
    "Open the window so the floor dries faster.",
    "Tie the plastic bag around the leaking pipe.",
    "Sweep the water towards the drain with the broom.",
    "Place the bucket under the drip to catch it.",
    "Turn off the main water valve under the sink.",
    "Dry the last damp patch with the hair dryer.",
]


class _UncachedModel:
    """Calls a Model's backend directly so the model's own call cache is bypassed too."""

    def __init__(self, model):
        self.model, self.name = model, model.name

    def choice_logprobs_many(self, items):
        from creval.models.requests import ChoiceRequest
        return self.model.backend.choice_logprobs([ChoiceRequest(tuple(m), tuple(c)) for m, c in items])


def _time(fn, texts, nli, repeat):
    times, ids, counter = [], None, None
    for _ in range(repeat):
        counter = CountingNLI(nli)
        t0 = time.perf_counter()
        ids = fn(texts, counter)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), ids, counter


def bench(name, nli, repeat, rows, samples=("realistic", "distinct"), with_prefetch_all=True):
    nli.use_cache = False
    nli.classify([("warm up", "warm up the model")])
    for label, texts in (("realistic", REALISTIC), ("distinct", DISTINCT)):
        if label not in samples:
            continue
        for strict in (True, False):
            t_fast, ids_fast, c_fast = _time(lambda t, n: cluster(t, n, strict=strict), texts, nli, repeat)
            t_slow, ids_slow, c_slow = _time(lambda t, n: cluster_naive(t, n, strict=strict), texts, nli, repeat)
            if with_prefetch_all:
                t_all, ids_all, c_all = _time(lambda t, n: cluster(t, n, strict=strict, prefetch="all"), texts, nli,
                                              repeat)
            else:  # a backend that answers pairs one by one gains nothing from asking every pair up front
                t_all, ids_all, c_all = float("nan"), ids_fast, CountingNLI(nli)
            assert ids_fast == ids_slow == ids_all, (name, label, strict, ids_fast, ids_slow, ids_all)
            rows.append((name, label, "strict" if strict else "loose", max(ids_fast) + 1, c_slow.pairs, c_slow.calls,
                         t_slow, c_fast.pairs, c_fast.calls, t_fast, t_slow / max(t_fast, 1e-9),
                         f"{c_all.pairs}/{c_all.calls}", t_all))
            print(f"  {name} {label} {rows[-1][2]}: naive {c_slow.pairs} pairs {t_slow:.3f}s"
                  f" -> cluster {c_fast.pairs} pairs"
                  f" in {c_fast.calls} calls {t_fast:.3f}s ({rows[-1][10]:.1f}x);"
                  f" prefetch=all {t_all:.3f}s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llm", default="smollm2-135m", help="registered model for the LLM backend")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--no-cross-encoder", action="store_true")
    ap.add_argument("--samples", default="realistic,distinct", help="comma list: realistic, distinct")
    ap.add_argument("--repeat", type=int, default=3, help="repeats for the cross-encoder (median)")
    args = ap.parse_args()
    rows: list[tuple] = []
    samples = tuple(args.samples.split(","))
    if not args.no_cross_encoder:
        bench("minilm-sick", load_nli("minilm-sick"), args.repeat, rows, samples)
    if not args.no_llm:
        try:
            from creval.models.registry import load_model
            model = load_model(args.llm)
        except Exception as e:  # the LLM backend or its weights may be missing here
            print(f"  LLM backend skipped: {type(e).__name__}: {e}")
        else:
            bench(f"llm:{args.llm}", LLMNLI(_UncachedModel(model), use_cache=False), 1, rows, samples,
                  with_prefetch_all=False)
    head = ("backend", "samples", "rule", "classes", "naive pairs", "naive calls", "naive s",
            "cluster pairs", "cluster calls", "cluster s", "speed-up", "prefetch=all pairs/calls", "prefetch=all s")
    print()
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for r in rows:
        print(" | ".join(f"{x:.1f}x" if i == 10 else f"{x:.3f}" if isinstance(x, float) else str(x)
                         for i, x in enumerate(r)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
