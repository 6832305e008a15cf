"""Batched vs sequential sampling: 10 samples of 40 tokens from one ~150-token prompt.

- llamacpp (default local model): one batched decode of 10 sequences sharing the prompt's KV cache vs
  10 separate generations, each continuing a copy of the once-evaluated prompt (same sampler, same seeds).
- hf (SmolLM2 through transformers): one ``generate(num_return_sequences=10)`` vs 10 ``generate`` calls
  each reusing a copy of the prompt's KV cache.
Prints the median of REPEATS runs (the cache is bypassed: backends are called directly).
Usage: python benchmarks/bench_sampling.py [--repeats 3] [--skip-hf]
"""
from __future__ import annotations

import argparse
import copy
import statistics
import time

import numpy as np

from creval.models.registry import get_spec, load_backend
from creval.models.requests import derive_seed

PROMPT = ("You are in a small kitchen after a storm. The power is out, the fridge is warming up, and you have "
          "a cooler, two bags of ice that are melting, a roll of aluminium foil, three bath towels, a box of "
          "salt, a plastic tarp, a hammer and a flashlight with weak batteries. Your neighbour brought over a "
          "tray of fresh fish that must stay cold until tomorrow evening, when the shop reopens. There is no "
          "car and the nearest open store is far away. Describe, step by step, how you would keep the fish "
          "cold and safe to eat for the next thirty hours using only these items. Give the first step only.")
N, TOKENS = 10, 40


def _check(samples):
    assert len(samples) == N
    for lps in samples:
        assert len(lps) >= 1 and all(np.isfinite(lps)) and max(lps) <= 1e-6


def bench_llamacpp(repeats: int, threads: int):
    spec = get_spec("smollm2-135m")
    spec.threads = threads
    b = load_backend(spec)
    prompt = b.tokenize(b.render([{"role": "user", "content": PROMPT}]))
    seeds = [derive_seed(0, i) for i in range(N)]

    def batched():
        b._held = []                                   # no prefix reuse between repetitions: evaluate the prompt
        return [s.token_logprobs for s in b._generate(prompt, seeds, 1.0, 0.9, TOKENS, ())]

    def sequential():
        b._held = []
        first, out = b._prefill(prompt), []
        for sd in seeds:
            b.lc.llama_memory_seq_rm(b.mem, 1, -1, -1)
            b.lc.llama_memory_seq_cp(b.mem, 0, 1, -1, -1)
            out += [s.token_logprobs for s in b._continue(first, len(prompt), [sd], [1], 1.0, 0.9, TOKENS, ())]
        return out

    return len(prompt), _time(batched, sequential, repeats)


def bench_hf(repeats: int):
    import torch
    b = load_backend(get_spec("smollm2-135m-hf"))
    ids = b._encode([{"role": "user", "content": PROMPT}])
    kw = dict(do_sample=True, temperature=1.0, top_p=0.9, top_k=0, max_new_tokens=TOKENS, min_new_tokens=TOKENS,
              output_logits=True, return_dict_in_generate=True, pad_token_id=b.tok.pad_token_id)

    def logprobs(out, n_prompt):
        lp = torch.stack(out.logits, 1).float().log_softmax(-1)
        new = out.sequences[:, n_prompt:][:, :lp.shape[1]]
        return lp.gather(-1, new[..., None]).squeeze(-1).tolist()

    def batched():
        torch.manual_seed(0)
        with torch.no_grad():
            return logprobs(b.lm.generate(ids, num_return_sequences=N, **kw), ids.shape[1])

    def sequential():
        torch.manual_seed(0)
        with torch.no_grad():
            pre = b.lm(ids[:, :-1], use_cache=True).past_key_values     # the prompt, evaluated once
            out = []
            for _ in range(N):
                out += logprobs(b.lm.generate(ids, past_key_values=copy.deepcopy(pre), **kw), ids.shape[1])
        return out

    return ids.shape[1], _time(batched, sequential, repeats)


def _time(batched, sequential, repeats):
    tb, ts = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        _check(batched())
        tb.append(time.perf_counter() - t)
        t = time.perf_counter()
        _check(sequential())
        ts.append(time.perf_counter() - t)
    return statistics.median(tb), statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--threads", type=int, default=2,
                    help="llama.cpp threads (default 2: the cores of the reference machine)")
    args = ap.parse_args()
    rows = [(f"llamacpp smollm2-135m {args.threads}t", *bench_llamacpp(args.repeats, args.threads))]
    if not args.skip_hf:
        rows.append(("hf smollm2-135m (float32)", *bench_hf(args.repeats)))
    print(f"{N} samples x {TOKENS} tokens, median of {args.repeats}")
    print(f"{'backend':28} {'prompt tok':>10} {'batched s':>10} {'sequential s':>13} {'ratio':>6}")
    for name, n_prompt, (tb, ts) in rows:
        print(f"{name:28} {n_prompt:>10} {tb:>10.2f} {ts:>13.2f} {ts / tb:>6.2f}x")


if __name__ == "__main__":
    main()
