"""A local model kept busy: the transformers backend with many units in flight against one unit at a time.

Runs on any machine with the packaged models (no download): ``smollm2-135m-hf`` (SmolLM2-135M-Instruct through
transformers) and, when installed, the bundled MiniLM embedder. Each phase runs the same units twice through
the real unit runner (:func:`creval.core.units.run_units`), each time with an empty cache: ``width=1`` (the
serial path) and the width a study keeps in flight (16 units on a CPU, 64 on a GPU: requests gathered across
units; ``--widths`` tries others). Per phase it prints the wall times, the
batching ratio (serial wall / batched wall), forward passes, requests per batch, tokens/s against
``creval throughput``'s figures (measured here first), whether the deterministic records agree, and on a GPU
its busy share sampled every 0.2 s through NVML (``nvidia-ml-py``) or ``nvidia-smi``. On a machine without a
GPU it says so and reports the CPU figures. Phases:

1. ``sample``: each unit draws ``--n`` samples (T=1, top-p 0.9) of its own problem, as a divergent step does;
2. ``chat``: each unit asks one greedy reply;
3. ``choice`` and ``loglikelihood``: each unit scores its answers / text;
4. ``embed``: each unit embeds its texts (MiniLM, when installed).

Usage (under 8 minutes on a GPU at the defaults; on 2 CPU cores use the smaller ``--units 16 --tokens 24``):
    .venv/bin/python benchmarks/bench_gpu.py [--units 64] [--n 10] [--tokens 64] [--skip-serial]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from creval.core.cache import CallCache
from creval.core.units import Unit, run_units
from creval.models import heavy, throughput
from creval.models.cached import Model
from creval.models.registry import get_spec, load_backend
from creval.models.width import local_width

MODEL = "smollm2-135m-hf"
TOPICS = ["a paperclip", "a brick", "a shoe", "a spoon", "a rope", "a candle", "a bucket", "a newspaper",
          "a ladder", "a mirror", "a balloon", "a magnet", "a towel", "a cork", "a funnel", "a kite"]


def prompt(i: int) -> list[dict]:
    return [{"role": "user", "content": f"Problem {i}: name one unusual use for {TOPICS[i % len(TOPICS)]}, in one "
                                        "sentence."}]


class BusySampler:
    """The GPU's busy share (percent of time a kernel ran), sampled every ``every`` seconds in a thread."""

    def __init__(self, every: float = 0.2):
        self.every, self.samples, self._stop = every, [], threading.Event()
        self.read = self._nvml() or self._smi()

    def _nvml(self):
        try:
            import pynvml
            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            return lambda: float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except Exception:       # noqa: BLE001 - no NVML: try nvidia-smi
            return None

    def _smi(self):
        if not shutil.which("nvidia-smi"):
            return None

        def read():
            out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=5).stdout
            return float(out.split()[0])
        return read

    def __enter__(self):
        def loop():
            while not self._stop.wait(self.every):
                self.samples.append(self.read())
        if self.read:
            self.thread = threading.Thread(target=loop, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()

    def summary(self) -> str:
        if not self.samples:
            return "n/a"
        return f"{sum(self.samples) / len(self.samples):.0f}% mean, {max(self.samples):.0f}% max"


def phases(args) -> dict:
    """``{phase: work(model, unit) -> (rows, output tokens)}``."""
    def sample(m, u):
        got = m.sample(prompt(u.item), args.n, temperature=1.0, top_p=0.9, max_tokens=args.tokens, seed=u.item)
        return [{"text": s.text, "sum": sum(s.token_logprobs)} for s in got], sum(s.n_tokens for s in got)

    def chat(m, u):
        c = m.chat(prompt(u.item), max_tokens=args.tokens)
        return [{"text": c.text}], c.output_tokens

    def choice(m, u):
        s = m.choice_logprobs(prompt(u.item), ["Yes", "No", "Maybe"])
        return [dict(s.logprobs)], 0

    def loglikelihood(m, u):
        r = m.loglikelihood(f"You could use {TOPICS[u.item % len(TOPICS)]} as a doorstop number {u.item}.")
        return [{"sum": r.sum_logprob}], 0
    return {"sample": sample, "chat": chat, "choice": choice, "loglikelihood": loglikelihood}


def agreement(a: list[dict], b: list[dict]) -> str:
    """How far two runs' records are apart: texts equal or not, and the largest difference of a number."""
    texts = all(x.get("text") == y.get("text") for x, y in zip(a, b))
    nums = [abs(x[k] - y[k]) for x, y in zip(a, b) for k in x if isinstance(x[k], float) and k in y]
    return f"texts equal: {texts}" + (f", numbers within {max(nums):.1e}" if nums else "")


def run_phase(backend, work, n_units: int, width: int, root: Path) -> dict:
    model = Model(backend, CallCache(root / "cache.sqlite"))
    tokens = [0]
    before = (backend.calls.forward, backend.gather.tally.batches, sum(backend.gather.tally.requests))

    def unit_work(u):
        rows, n = work(model, u)
        tokens[0] += n
        return {"rows": rows}
    t0 = time.perf_counter()
    with BusySampler() as busy:
        rows = run_units(root, "bench", [Unit(f"u{i}", i) for i in range(n_units)], unit_work, width=width,
                         progress=False)["rows"]
    wall = time.perf_counter() - t0
    batches = backend.gather.tally.batches - before[1]
    return {"wall": wall, "forward": backend.calls.forward - before[0], "tokens": tokens[0], "rows": rows,
            "per_batch": (sum(backend.gather.tally.requests) - before[2]) / max(batches, 1), "busy": busy.summary()}


def embed_phase(n_units: int, width: int, root: Path) -> dict:
    """Each unit embeds its 16 texts (the bundled MiniLM), with a cache of its own in ``root``."""
    saved, os.environ["CREVAL_CACHE"] = os.environ.get("CREVAL_CACHE"), str(root / "embed.sqlite")
    try:
        from creval.models.embeddings import Embedder, _gatherer
        Embedder().encode(["warm up"])          # loads the model
        tally = _gatherer("all-MiniLM-L6-v2", 64).tally
        before = tally.batches
        t0 = time.perf_counter()
        run_units(root, "embed", [Unit(f"e{i}", i) for i in range(n_units)],
                  lambda u: {"n": [len(Embedder().encode([f"{t} number {u.item}.{k}" for k, t in enumerate(TOPICS)]))]},
                  width=width, progress=False)
        return {"wall": time.perf_counter() - t0, "batches": tally.batches - before}
    except Exception as e:      # noqa: BLE001 - the bundled embedder is optional here
        return {"skipped": f"{type(e).__name__}: {e}"}
    finally:
        if saved is None:
            os.environ.pop("CREVAL_CACHE", None)
        else:
            os.environ["CREVAL_CACHE"] = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--n", type=int, default=10, help="samples per unit in the sample phase")
    ap.add_argument("--tokens", type=int, default=64, help="max new tokens per sample or reply")
    ap.add_argument("--skip-serial", action="store_true", help="only the batched runs (faster)")
    ap.add_argument("--skip-throughput", action="store_true",
                    help="compare with the figures `creval throughput` stored before (none: not compared)")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--widths", default="", help="units in flight of the batched runs, comma-separated (default: "
                    "what a study would keep in flight on this device, 16 on a CPU, 64 on a GPU)")
    args = ap.parse_args()
    torch = heavy.torch()
    if args.threads:
        torch.set_num_threads(args.threads)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    print(f"device: {gpu or 'no GPU (torch sees no CUDA device): CPU figures only'}; "
          f"torch {torch.__version__}, {time.strftime('%Y-%m-%d')}")
    t0 = time.perf_counter()
    backend = load_backend(get_spec(MODEL))
    print(f"{MODEL} loaded in {time.perf_counter() - t0:.1f} s ({backend.quantisation} on {backend.device})")
    figures = (throughput.load(MODEL) if args.skip_throughput else
               throughput.measure(backend, streams=32 if gpu else 8, repeats=2)) or {}
    print("creval throughput:", json.dumps({k: figures.get(k) for k in ("prefill_tps", "decode_tps",
                                                                        "batched_decode_tps", "streams")}))
    widths = [int(w) for w in args.widths.split(",") if w] or [local_width(backend.device)]
    report = {}
    for (name, work), width in [(p, w) for p in phases(args).items() for w in widths]:
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            batched = run_phase(backend, work, args.units, width, Path(a))
            serial = None if args.skip_serial or width != widths[0] else run_phase(backend, work, args.units, 1,
                                                                                   Path(b))
        line = (f"{name:>13}: {width} in flight {batched['wall']:.1f} s, {batched['forward']} forwards, "
                f"{batched['per_batch']:.1f} requests/batch")
        if batched["tokens"]:
            ref = figures.get("batched_decode_tps" if name == "sample" else "decode_tps")
            line += f", {batched['tokens'] / batched['wall']:.1f} tokens/s (throughput's figure {ref})"
        if gpu:
            line += f", GPU busy {batched['busy']}"
        if serial:
            same = f", {agreement(serial['rows'], batched['rows'])}"
            fewer = serial["forward"] / max(batched["forward"], 1)
            line += (f" | serial {serial['wall']:.1f} s, {serial['forward']} forwards | ratio "
                     f"{serial['wall'] / batched['wall']:.2f}x wall, {fewer:.1f}x fewer forwards{same}")
        print(line, flush=True)
        report[f"{name}@{width}"] = {k: v for k, v in batched.items() if k != "rows"}
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        emb = embed_phase(args.units, widths[-1], Path(a))
        if "wall" in emb:
            ser = embed_phase(args.units, 1, Path(b)) if not args.skip_serial else None
            print(f"{'embed':>13}: batched {emb['wall']:.2f} s in {emb['batches']} batches"
                  + (f" | serial {ser['wall']:.2f} s in {ser['batches']} batches" if ser else ""))
        else:
            print(f"{'embed':>13}: skipped ({emb['skipped']})")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
