"""Speed of AUT judging: batched against one call at a time, measured in the same run.

1. llama.cpp (in-process): the first turns of one object's four settings (comprehensive and segmented,
   scoring and forward/reversed ranking: 12 lists of 18 uses from 2 generators x 3 levels x 3 uses) answered
   by ``LlamaCppBackend.chat`` with batched decoding against the same requests one at a time
   (``backend.batched = False``). Greedy decoding: the share of identical replies is printed.
2. An OpenAI-compatible endpoint on 127.0.0.1 that answers every request after a fixed delay (standing in for
   an API's latency): the same requests with ``concurrency: 8`` against ``concurrency: 1``.

The cache is bypassed (backends are called directly). Usage:
    nice -n 10 .venv/bin/python benchmarks/bench_aut.py [--model smollm2-135m] [--threads 2] [--delay 0.25]
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd

from creval.judges.aut import ListJob, list_messages
from creval.models.requests import ChatRequest
from creval.models.spec import ModelSpec
from creval.studies.aut.config import AutConfig
from creval.studies.aut.run import list_plan

USES = {  # (generator, level) -> three uses of a fork, written for this benchmark
    ("g1", "common"): ["eat pasta", "stir coffee", "whisk an egg"],
    ("g1", "creative"): ["comb a doll's hair", "poke holes in dough", "hold a recipe card"],
    ("g1", "highly_creative"): ["tune a ukulele string", "etch lines in clay tiles", "rake a zen sand garden"],
    ("g2", "common"): ["serve salad", "pick up meat", "mash potatoes"],
    ("g2", "creative"): ["scratch your back", "mark a page", "draw wavy lines in frosting"],
    ("g2", "highly_creative"): ["hang tiny planters", "make a lockpick", "prop a phone for video calls"],
}


def requests(max_tokens: int | None = None) -> list[ChatRequest]:
    rows = []
    for (g, lvl), texts in USES.items():
        code = {"common": 1, "creative": 2, "highly_creative": 3}[lvl]
        rows += [{"au_id": f"{g}-{lvl}-{i}", "object": "fork", "generator": g, "level": lvl, "level_code": code,
                  "text": t} for i, t in enumerate(texts)]
    plan = list_plan(pd.DataFrame(rows), AutConfig(models=("g1", "g2"), aut_things=("fork",)))
    jobs = [ListJob(p["method"], "fork", [u["text"] for u in p["items"]]) for p in plan]
    from creval.judges.aut import _max_tokens
    return [ChatRequest(tuple(list_messages(j.method, j.obj, j.texts)), 0.0,
                        max_tokens or _max_tokens(j.method, len(j.texts)), 0) for j in jobs]


def bench_llamacpp(model: str, threads: int, max_tokens: int | None) -> float:
    from creval.models.llamacpp import LlamaCppBackend
    from creval.models.registry import get_spec
    spec = get_spec(model)
    spec.threads = threads
    b = LlamaCppBackend(spec)
    reqs = requests(max_tokens)
    b.chat(reqs[:1])                                   # warm-up (weights paged in)
    b.batched = False
    t0 = time.perf_counter()
    seq = b.chat(reqs)
    t_seq = time.perf_counter() - t0
    b.batched = True
    t0 = time.perf_counter()
    bat = b.chat(reqs)
    t_bat = time.perf_counter() - t0
    same = sum(a.text == c.text for a, c in zip(seq, bat)) / len(reqs)
    toks = sum(c.output_tokens for c in bat)
    print(f"llama.cpp {model}, {threads} threads, {len(reqs)} lists of one object's four settings "
          f"({toks} output tokens): one at a time {t_seq:.2f} s, batched {t_bat:.2f} s -> {t_seq / t_bat:.2f}x; "
          f"identical replies {same:.0%}")
    return t_seq / t_bat


class _Delayed(BaseHTTPRequestHandler):
    delay = 0.25

    def do_POST(self):   # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        time.sleep(self.delay)
        n = str(body.get("messages", [{}])[-1].get("content", "")).count("\n[")
        text = "\n".join(f"[{i}] {1 + i % 5}" for i in range(1, n + 1))
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 100, "completion_tokens": 20}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


def bench_server(delay: float, concurrency: int, copies: int) -> float:
    from creval.models.openai_compat import OpenAIBackend
    _Delayed.delay = delay
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Delayed)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    reqs = requests() * copies
    times, outs = {}, {}
    for c in (1, concurrency):
        b = OpenAIBackend(ModelSpec(name="delayed", backend="openai", model="delayed", base_url=url, concurrency=c))
        t0 = time.perf_counter()
        outs[c] = [x.text for x in b.chat(reqs)]
        times[c] = time.perf_counter() - t0
    srv.shutdown()
    ratio = times[1] / times[concurrency]
    print(f"OpenAI-compatible endpoint on 127.0.0.1 answering after {delay:.2f} s, {len(reqs)} requests: "
          f"concurrency 1 {times[1]:.2f} s, concurrency {concurrency} {times[concurrency]:.2f} s -> {ratio:.2f}x; "
          f"same replies {outs[1] == outs[concurrency]}")
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=None, help="cap the reply length (default: the judge's)")
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--copies", type=int, default=4, help="the 12 requests repeated (server part)")
    ap.add_argument("--skip-llamacpp", action="store_true")
    a = ap.parse_args()
    r1 = None if a.skip_llamacpp else bench_llamacpp(a.model, a.threads, a.max_tokens)
    r2 = bench_server(a.delay, a.concurrency, a.copies)
    print(f"ratios: llama.cpp batched/sequential {r1 and round(r1, 2)} (target >= 1.5); "
          f"server concurrency {a.concurrency}/1 {r2:.2f} (target >= 5)")


if __name__ == "__main__":
    main()
