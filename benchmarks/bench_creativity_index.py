"""Speed of the creativity index: our vectorised index lookups against a DJ-Search-style loop, same run.

1. Index build: every MacGyver solution we have (verified, benchmark, crowd), by problem, L = 1..12.
2. CI (mean of uniq_L, L = 5..7, leave-own-problem-out) of N MacGyver verified solutions (default 1,000):
   - fast: :func:`creval.measures.creativity_index.creativity_index_many` (one sorted lookup per L for the
     whole batch);
   - naive: the peers' DJ Search exact loop (two pointers, ONE query of the same local index per window;
     the algorithm of ``dj_search_exact.py`` minus its network calls and sleeps), then CI from its spans.
   Values must be identical; the ratio of texts/s is printed (target >= 20x).
3. POS tagging (spaCy small English, loaded once per process, cache bypassed): words per second.

Usage:  nice -n 10 .venv/bin/python benchmarks/bench_creativity_index.py [--n 1000] [--no-pos]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from creval.datasets import macgyver
from creval.measures import creativity_index as C
from creval.measures.ngram_index import NgramIndex, word_tokenize


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000, help="MacGyver solutions scored")
    ap.add_argument("--lo", type=int, default=5)
    ap.add_argument("--hi", type=int, default=7)
    ap.add_argument("--no-pos", action="store_true", help="skip the POS-tagging timing")
    a = ap.parse_args()

    docs = macgyver.solution_pool()
    t0 = time.perf_counter()
    idx = NgramIndex.build(docs, range(1, 13), "macgyver-pool")
    build = time.perf_counter() - t0
    print(f"index: {idx.n_docs} docs, {idx.n_tokens} words, {len(idx.groups)} problems, L = 1..12: "
          f"built in {build:.2f} s (sha256 {idx.corpus_hash[:16]})")

    rows = [r for r in macgyver.load_problems()[0] if r["solution"]][:a.n]
    texts, groups = [r["solution"] for r in rows], [r["problem_id"] for r in rows]
    Ls = C.l_range(a.lo, a.hi)

    t0 = time.perf_counter()
    fast = C.creativity_index_many(texts, idx, Ls, "mean", groups)
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    naive, queries = [], 0
    for text, g in zip(texts, groups):
        toks = word_tokenize(text)
        spans = C.dj_search_spans(toks, idx, a.lo, a.hi, g)
        naive.append(C.ci_from_spans(spans, len(toks), Ls, "mean"))
    t_naive = time.perf_counter() - t0
    for text in texts:      # count the loop's queries (not timed): one per window step
        queries += 2 * max(len(word_tokenize(text)) - a.lo + 1, 0)

    fv = np.array([r.ci for r in fast])
    same = np.array_equal(fv, np.array(naive))
    n = len(texts)
    print(f"CI of {n} solutions (L = {a.lo}..{a.hi}, mean, leave-own-problem-out): mean {fv.mean():.4f}")
    print(f"  fast (batched lookups):  {t_fast:.3f} s = {n / t_fast:,.0f} texts/s")
    print(f"  DJ-Search-style loop:    {t_naive:.3f} s = {n / t_naive:,.0f} texts/s"
          f" (~{queries:,} window queries at most)")
    print(f"  ratio: {t_naive / t_fast:.1f}x   identical values: {same} (max |diff| {np.abs(fv - naive).max():.2e})")

    if not a.no_pos:
        from creval.measures import templates as T
        t0 = time.perf_counter()
        T.pipeline()
        load = time.perf_counter() - t0
        sample = texts[:300]
        words = sum(len(t.split()) for t in sample)
        t0 = time.perf_counter()
        T._tag_batch(sample)
        dt = time.perf_counter() - t0
        print(f"POS tagging ({T.SPACY_MODEL}): model loaded once in {load:.2f} s; {words:,} words in {dt:.2f} s "
              f"= {words / dt:,.0f} words/s")


if __name__ == "__main__":
    main()
