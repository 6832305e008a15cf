"""Benchmark: ``creval grade``'s cheap measures on 500 real passages, each measure timed, with a fresh call cache
(nothing is read back). Perplexity's tokens/s is set beside the model's own prefill speed measured in the same run
(:func:`creval.models.throughput.measure`) and beside the naive scoring path on the first ``--naive`` texts (the
backend before issue 42's fix: one thread per core whatever the load, one per-token log-softmax in Python).

The passages are cut from the TTCW stories of the staged data (``../shared/data``), or, without it, made of the
bundled sample stories. Their ratings are random (the rule is timed, its words mean nothing here).

    python benchmarks/bench_grade.py [--n 500] [--words 200] [--naive 20] [--ppl N] [--command]

``--command`` times the command itself instead: ``creval grade`` on the same passages in a child process, its
peak resident memory (each process's own peak, and the whole tree's summed memory sampled every 0.2 s).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time

TMP = tempfile.mkdtemp(prefix="creval-bench-grade-")
os.environ["CREVAL_CACHE"] = os.path.join(TMP, "calls.sqlite")

import numpy as np  # noqa: E402

from creval.core import paths  # noqa: E402


def passages(n: int, words: int) -> list[dict]:
    """``n`` passages of ``words`` words: whole-word cuts of the TTCW stories (then the same cuts shifted by half
    a passage), or of the bundled sample stories strung together when the staged data is absent."""
    shared = paths.shared_data_dir()
    src = shared / "ttcw_art_or_artifice" / "ttcw_short_stories.json" if shared else None
    if src and src.is_file():
        stories = [(s["story_id"], s["plot"], s["content"].split()) for s in json.loads(src.read_text())
                   if not s["content"].startswith("http")]
    else:
        with open(paths.samples_dir() / "grade" / "stories.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        stories = [(f"sample_{k}", rows[k]["prompt"], " ".join(r["text"] for r in rows[k:] + rows[:k]).split())
                   for k in range(0, len(rows), 3)]
    out: list[dict] = []
    for shift in range(0, words, max(1, words // 2)):
        for sid, plot, w in stories:
            for a in range(shift, len(w) - words + 1, words):
                out.append({"id": f"{sid}-{a}", "prompt": plot, "author": sid.split("_")[-1],
                            "text": " ".join(w[a:a + words])})
                if len(out) == n:
                    return out
    return out


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3]) if os.path.exists("/proc/loadavg") else "?"


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    got = fn()
    return got, time.perf_counter() - t, time.process_time() - c


def naive_score(backend, tokens: list[int], start: int) -> list[float]:
    """The scoring loop before the fix: every position's logits copied out and its log-softmax taken alone."""
    backend._reuse_prefix([])
    feed, out = tokens[:-1], []
    for c0 in range(0, len(feed), 512):
        chunk = feed[c0:c0 + 512]
        backend._decode([(t, c0 + i, [0], c0 + i >= start - 1) for i, t in enumerate(chunk)])
        for i in range(len(chunk)):
            if c0 + i >= start - 1:
                x = backend._logits(i).astype(np.float64)
                m = x.max()
                out.append(float(x[tokens[c0 + i + 1]] - m - np.log(np.exp(x - m).sum())))
    backend._held = []
    return out


def scoring_paths(model: str, texts: list[str]) -> dict:
    """Tokens/s of the fixed path and of the naive one (one thread per core) on the same texts, and whether
    their log-probs agree bit for bit; plus the model's own prefill speed."""
    from creval.models import throughput
    from creval.models.llamacpp import LlamaCppBackend
    from creval.models.registry import get_spec
    from creval.models.requests import LoglikelihoodRequest
    spec = get_spec(model)
    fast = LlamaCppBackend(spec)
    own = throughput.measure(fast, decode_tokens=16, streams=2, repeats=3)["prefill_tps"]
    got, s_fast, _ = timed(lambda: fast.loglikelihood([LoglikelihoodRequest(t) for t in texts]))
    threads = fast.threads
    fast.close()
    os.environ["CREVAL_THREADS"] = str(os.cpu_count() or 1)
    try:
        slow = LlamaCppBackend(spec)
    finally:
        os.environ.pop("CREVAL_THREADS")
    seqs = [[slow.begin] + slow.tokenize(t, special=False) for t in texts]
    ref, s_slow, _ = timed(lambda: [naive_score(slow, s, 1) for s in seqs])
    slow.close()
    n = sum(len(s) - 1 for s in seqs)
    return {"own_prefill": own, "fast_tps": n / s_fast, "naive_tps": n / s_slow, "threads": threads,
            "naive_threads": os.cpu_count(), "tokens": n,
            "identical": all(list(g.token_logprobs) == r for g, r in zip(got, ref))}


def tree_rss(pid: int) -> int:
    """Resident MB of ``pid`` and every process under it, read from /proc (0 once it has ended)."""
    from creval.sandbox.runner import children
    todo, total = [pid], 0
    while todo:
        p = todo.pop()
        todo += children(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total >> 20


def command_peak(path: str, model: str) -> None:
    """Run ``creval grade`` on ``path`` as a user would (a fresh call cache) and print its wall time and peaks."""
    import resource
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "creval", "grade", path, "--labels", "rating", "--id", "id", "--group", "prompt",
           "--author", "author", "--model", model, "--quiet", "--out", os.path.join(TMP, "card")]
    env = {**os.environ, "CREVAL_CACHE": os.path.join(TMP, "command-calls.sqlite")}
    t, peak = time.perf_counter(), 0
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while child.poll() is None:
        peak = max(peak, tree_rss(child.pid))
        time.sleep(0.2)
    wall = time.perf_counter() - t
    err = child.stderr.read()
    own = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"creval grade: exit {child.returncode} in {wall:.0f} s (load {load()}); peak resident memory: the "
          f"largest process {own:.0f} MB, the process tree summed (sampled every 0.2 s) {peak} MB")
    if child.returncode:
        print(err[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500, help="passages")
    ap.add_argument("--words", type=int, default=200, help="words a passage")
    ap.add_argument("--naive", type=int, default=20, help="texts scored both ways (0: skip)")
    ap.add_argument("--ppl", type=int, default=None, help="score only the first PPL texts' perplexity")
    ap.add_argument("--command", action="store_true", help="time `creval grade` itself and its peak memory")
    ap.add_argument("--model", default=None, help="perplexity model (default: creval grade's, scoring_model())")
    a = ap.parse_args()
    from creval.core.table import read_table
    from creval.grade import grading as G
    from creval.measures import pertext as P
    from creval.models.registry import load_model
    a.model = G.scoring_model(a.model)
    rows = passages(a.n, a.words)
    rng = np.random.default_rng(0)
    path = os.path.join(TMP, "passages.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, ["id", "prompt", "author", "text", "rating"])
        w.writeheader()
        w.writerows({**r, "rating": int(rng.integers(1, 6))} for r in rows)
    if a.command:
        print(f"{len(rows)} passages of {a.words} words; load average at start {load()} on {os.cpu_count()} cores")
        return command_peak(path, a.model)
    table = read_table(path, id="id")
    print(f"perplexity under {a.model}")
    print(f"{len(table)} passages of {a.words} words; load average at start {load()} on {os.cpu_count()} cores")
    lines, cols = [], {}
    for group in ("ci", "templates", "diversity", "prompt", "lexical"):
        opt = G.GradeOptions(labels="rating", id="id", group="prompt", author="author", measures=[group],
                             model=a.model)
        got, wall, cpu = timed(lambda: G.measure_table(table, opt))
        cols.update(got)
        lines.append((group, wall, cpu, load()))
        print(f"  {group}: {wall:.1f} s wall, {cpu:.1f} s CPU (load {load()})", flush=True)
    k = len(table) if a.ppl is None else min(a.ppl, len(table))
    from creval.models.width import width
    wide = width(a.model, scoring=True)
    recs, wall, cpu = timed(lambda: P.perplexity_each(load_model(a.model), table.texts[:k], width=wide))
    if k == len(table):
        cols.update(ppl=np.array([r.ppl for r in recs]), bits_per_byte=np.array([r.bits_per_byte for r in recs]))
    n_tok = sum(r.n_tokens for r in recs)
    lines.append((f"perplexity, {k} texts (model load included)", wall, cpu, load()))
    print(f"  perplexity: {wall:.1f} s wall, {cpu:.1f} s CPU (load {load()})", flush=True)
    y = table.numbers("rating")
    _, wall, cpu = timed(lambda: G.grade(cols, y, author=table.column("author"), group=table.column("prompt")))
    lines.append(("the rule", wall, cpu, load()))
    total = sum(x[1] for x in lines)
    ppl = lines[-2]
    print("\n| phase | wall s | CPU s | load after |\n|---|---|---|---|")
    for name, wall, cpu, ld in lines:
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {ld} |")
    print(f"| total | {total:.1f} | {sum(x[2] for x in lines):.1f} | |")
    if n_tok:
        print(f"\nperplexity: {n_tok} tokens, {n_tok / ppl[1]:.0f} tokens/s wall, {n_tok / ppl[2]:.0f} per CPU-second")
    if 0 < k < len(table):
        share = sum(len(t.encode()) for t in table.texts) / sum(len(t.encode()) for t in table.texts[:k])
        print(f"all {len(table)} texts at that rate (by their bytes): about {ppl[1] * share:.0f} s wall, "
              f"{ppl[2] * share:.0f} s CPU; the rule ran without the perplexity columns")
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory (max resident set): this process {own:.0f} MB, its largest child {kids:.0f} MB")
    if a.naive:
        s = scoring_paths(G.SCORING_MODELS[-1], table.texts[:a.naive])      # the llama.cpp build, both paths
        print(f"same run, first {a.naive} texts ({s['tokens']} tokens): fixed path {s['fast_tps']:.0f} tokens/s "
              f"({s['threads']} thread(s)), naive {s['naive_tps']:.0f} tokens/s ({s['naive_threads']} threads), "
              f"{s['fast_tps'] / s['naive_tps']:.2f}x, log-probs identical: {s['identical']}; the model's own "
              f"prefill here {s['own_prefill']:.0f} tokens/s (load {load()})")


if __name__ == "__main__":
    main()
