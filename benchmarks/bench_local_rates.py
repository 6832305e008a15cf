"""Benchmark: the rates of the work this machine does itself, with no model call (the estimate's LOCAL_RATES,
``creval.studies.estimate.timing``): MiniLM cross-encoder entailment pairs, MiniLM sentence embeddings, spaCy
POS tagging, and programs in the bubblewrap jail. Caches are bypassed (a throw-away cache file), so the times are
real compute. Run it on a quiet machine and copy the figures into LOCAL_RATES.

    python benchmarks/bench_local_rates.py [--n 512]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ["CREVAL_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="creval-bench-"), "calls.sqlite")

from creval.datasets import macgyver  # noqa: E402


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512, help="items of each kind")
    a = ap.parse_args()
    texts = [r["solution"].split(". ")[0] for r in macgyver.load_problems()[0] if r["solution"]][:a.n]
    pairs = list(zip(texts, texts[1:] + texts[:1]))
    words = sum(len(t.split()) for t in texts)

    from creval.measures.nli.backends import load_nli
    nli = load_nli("minilm-sick")
    nli.logits(pairs[:8])                                       # load the weights before timing
    s = timed(lambda: nli.logits(pairs))
    print(f"entailment ({nli.name}): {len(pairs) / s:,.0f} pairs/s")

    from creval.models.embeddings import Embedder
    emb = Embedder()
    emb.encode(texts[:8])
    s = timed(lambda: emb.encode([t + " " for t in texts]))   # new strings: nothing memoised
    print(f"embedding: {len(texts) / s:,.0f} texts/s")

    from creval.measures.templates import pos_tag
    pos_tag(texts[:4])
    s = timed(lambda: pos_tag([t + " ." for t in texts]))
    print(f"tagging: {words / s:,.0f} words/s")

    from creval.sandbox import program_unit, run_units
    k = max(8, a.n // 16)
    units = [program_unit(f"print(int(input()) + {i})", ["1"]) for i in range(k)]
    s = timed(lambda: run_units(units))
    print(f"sandbox: {k / s:,.1f} programs/s ({k} programs, one test case each)")


if __name__ == "__main__":
    main()
