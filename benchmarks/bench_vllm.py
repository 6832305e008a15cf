"""Engines side by side: each study on llama.cpp in-process and on a local vLLM server (CPU build), the same
SmolLM2-135M-Instruct weights (Q4_1 GGUF in-process; dequantized to bf16 for vLLM).

Arms, each with an empty call cache and run root (the studies a study reads run first, untimed):
- ``llamacpp``: the embedded model in-process (the unit runner runs local models at width 1);
- ``vllm-1``: the vLLM server with the spec's in-flight budget at 1;
- ``vllm-32a``, ``vllm-32b``: the same at 32, twice.
Printed per study and arm: wall time, calls made, requests in flight (mean over the timed run, sampled from
vLLM's ``/metrics`` every 0.25 s: running + waiting; 1 for llama.cpp), the model's tokens (prompt + completion)
per second of wall time, and the study's headline numbers (the means of the measures the comparison chapter
reads, :func:`creval.studies.compare.values.study_values`). Then the batch non-invariance: the spread of each
headline between the two width-32 runs and between a width-32 run and the width-1 run, in the measure's units.

``--local-widths 1 8``: instead, the "1.7x" of the convergent chat phase on llama.cpp (issue 34): the convergent
study in-process with the unit runner forced to each width, its chat phase's seconds against the bound this
machine's measured speed allows (``x_limit``), the prompt tokens llama.cpp really prefilled (after its prefix
reuse) against those sent, and the seconds calls waited for the local-compute lock; ``--cprofile FILE`` keeps a
cProfile of each width.

Usage: nice .venv/bin/python benchmarks/bench_vllm.py [--studies aut divergent] [--arms llamacpp vllm-1 ...]
       [--profile smoke|default] [--json out.json]   (needs `make vllm`)
       nice .venv/bin/python benchmarks/bench_vllm.py --local-widths 1 8 [-p limit=1 ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ARMS = ("llamacpp", "vllm-1", "vllm-32a", "vllm-32b")
HEADLINE_STUDIES = ("divergent", "convergent", "neocoder", "rethinking", "aut")
SMOKE_EXTRA = ["divergent_nli=minilm-cosine", "divergent_temperatures=[1.0]"]


class InFlight:
    """Samples vLLM's Prometheus gauges (requests running + waiting) in a thread; ``mean`` over the samples."""

    def __init__(self, url: str | None, every: float = 0.25):
        self.url, self.every, self.samples = url, every, []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def _read(self) -> float:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/metrics", timeout=2) as r:
            text = r.read().decode()
        return sum(float(m.group(2)) for m in re.finditer(r"^vllm:num_requests_(running|waiting)\{[^}]*\} (\S+)",
                                                          text, re.M))

    def tokens(self) -> float:
        """Prompt + generated tokens the server processed so far (its counters)."""
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/metrics", timeout=2) as r:
            text = r.read().decode()
        return sum(float(m.group(2)) for m in re.finditer(r"^vllm:(prompt_tokens|generation_tokens)_total\{[^}]*\} "
                                                          r"(\S+)", text, re.M))

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self._read())
            except OSError:
                pass
            self._stop.wait(self.every)

    def __enter__(self):
        if self.url:
            self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()

    @property
    def mean(self) -> float:
        busy = [s for s in self.samples if s > 0]
        return statistics.mean(busy) if busy else (0.0 if self.url else 1.0)


def headlines(study: str, cfg) -> dict[str, float]:
    """The mean of each headline measure of a finished run (empty for a study the comparison does not read)."""
    if study not in HEADLINE_STUDIES:
        return {}
    from creval.models.registry import model_name
    from creval.studies.compare.values import study_values
    from creval.studies.registry import STUDIES
    recs = STUDIES[study].records(cfg)
    judge = model_name(cfg.judge_model) if getattr(cfg, "judge_model", "") else ""
    rows = study_values(study, recs, [model_name(m) for m in cfg.tested], judge)
    by: dict[str, list[float]] = {}
    for r in rows:
        if r["value"] == r["value"]:                  # NaN: not computed
            by.setdefault(r["measure"], []).append(r["value"])
    return {k: statistics.mean(v) for k, v in sorted(by.items())}


def run_arm(study: str, arm: str, profile: str, spec_dir: Path, url: str, home: Path) -> dict:
    from creval.book.params import effective_params, load_params
    from creval.book.studies import run_study
    from creval.core.paths import REPO
    from creval.models import vllm_local
    from creval.studies.registry import STUDIES, in_order
    os.environ["CREVAL_CACHE"] = str(home / "calls.sqlite")
    if arm == "llamacpp":
        model = "smollm2-135m"
    else:
        width = 1 if arm == "vllm-1" else 32
        (spec_dir / f"{vllm_local.SERVED}.yaml").write_text(
            vllm_local.spec_yaml(url).replace("concurrency: 32", f"concurrency: {width}"))
        model = vllm_local.SERVED
    params = effective_params(load_params(REPO / f"params/{profile}.yaml",
                                          [f"run_root={home / 'runs'}", f"model={model}", f"judge_model={model}"]
                                          + (SMOKE_EXTRA if profile == "smoke" else [])))
    for up in in_order([study])[:-1]:
        run_study(up, params)
    probe = InFlight(None if arm == "llamacpp" else url)
    before = probe.tokens() if probe.url else 0.0
    t0 = time.perf_counter()
    with probe:
        row = run_study(STUDIES[study], params)
    wall = time.perf_counter() - t0
    u = row["usage"]
    tokens = (probe.tokens() - before) if probe.url else u["made_input_tokens"] + u["made_output_tokens"]
    cfg = STUDIES[study].make_config(params)
    return {"study": study, "arm": arm, "wall_s": round(wall, 1), "calls": u["calls_made"],
            "in_flight_mean": round(probe.mean, 1), "tokens": int(tokens), "tokens_per_s": round(tokens / wall, 1),
            "error": row["error"], "headline": headlines(study, cfg) if not row["error"] else {}}


def local_width_arm(width: int, profile: str, overrides: list[str], home: Path, cprofile: str | None) -> dict:
    """The convergent study on llama.cpp in-process with the unit runner at ``width`` (see the module doc)."""
    import cProfile

    from creval.book.params import effective_params, load_params
    from creval.book.studies import run_study, slowest_phases
    from creval.core import cache as cache_mod
    from creval.core.paths import REPO
    from creval.models import llamacpp
    from creval.models import width as units
    from creval.studies.registry import STUDIES, in_order
    os.environ["CREVAL_CACHE"] = str(home / "calls.sqlite")
    params = effective_params(load_params(REPO / f"params/{profile}.yaml", [f"run_root={home / 'runs'}"] + overrides))
    for up in in_order(["convergent"])[:-1]:
        run_study(up, params)
    fed = {"sent": 0, "prefilled": 0}
    reuse = llamacpp.LlamaCppBackend._reuse_prefix

    def counting(self, usable):
        keep = reuse(self, usable)
        fed["sent"] += len(usable) + 1
        fed["prefilled"] += len(usable) + 1 - keep
        return keep
    lock, waited = cache_mod.LOCAL_COMPUTE, {"s": 0.0}

    class TimedLock:
        def __enter__(self):
            t = time.perf_counter()
            lock.acquire()
            waited["s"] += time.perf_counter() - t

        def __exit__(self, *exc):
            lock.release()

        def __getattr__(self, name):
            return getattr(lock, name)
    inside = {"chat_s": 0.0}
    chat = llamacpp.LlamaCppBackend.chat

    def timed_chat(self, reqs):
        t = time.perf_counter()
        try:
            return chat(self, reqs)
        finally:
            inside["chat_s"] += time.perf_counter() - t
    llamacpp.LlamaCppBackend._reuse_prefix = counting
    llamacpp.LlamaCppBackend.chat = timed_chat
    old_width, old_lock = units.width, cache_mod.LOCAL_COMPUTE
    units.width = lambda *m: width
    cache_mod.LOCAL_COMPUTE = TimedLock()
    prof = cProfile.Profile() if cprofile else None
    t0 = time.perf_counter()
    try:
        if prof:
            prof.enable()
        row = run_study(STUDIES["convergent"], params)
    finally:
        if prof:
            prof.disable()
            prof.dump_stats(f"{cprofile}.w{width}")
        llamacpp.LlamaCppBackend._reuse_prefix, llamacpp.LlamaCppBackend.chat = reuse, chat
        units.width, cache_mod.LOCAL_COMPUTE = old_width, old_lock
    wall = time.perf_counter() - t0
    phase = [p for p in slowest_phases([row], 20) if p["phase"].startswith("chat:")]
    return {"width": width, "wall_s": round(wall, 1), "error": row["error"], "chat": phase[:1],
            "llamacpp_chat_s": round(inside["chat_s"], 1),
            "tokens_sent": fed["sent"], "tokens_prefilled": fed["prefilled"], "lock_wait_s": round(waited["s"], 1)}


def spreads(rows: list[dict]) -> list[dict]:
    """Per study and headline measure: |32a - 32b| and |32a - 1| (batch non-invariance, in the measure's units)."""
    out = []
    for study in dict.fromkeys(r["study"] for r in rows):
        by = {r["arm"]: r["headline"] for r in rows if r["study"] == study}
        if not {"vllm-1", "vllm-32a", "vllm-32b"} <= set(by):
            continue
        for m in by["vllm-32a"]:
            a, b, one = by["vllm-32a"].get(m), by["vllm-32b"].get(m), by["vllm-1"].get(m)
            out.append({"study": study, "measure": m, "w32a": a, "w32b": b, "w1": one,
                        "spread_32_32": None if b is None else abs(a - b),
                        "spread_32_1": None if one is None else abs(a - one)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--studies", nargs="*", default=["apparatus", "divergent", "convergent", "rethinking", "aut"])
    ap.add_argument("--arms", nargs="*", default=list(ARMS), choices=ARMS)
    ap.add_argument("--profile", default="smoke", choices=["smoke", "default"])
    ap.add_argument("--json", help="write the rows here too")
    ap.add_argument("--local-widths", nargs="*", type=int, help="profile convergent on llama.cpp at these widths")
    ap.add_argument("-p", action="append", default=[], metavar="KEY=VALUE", help="parameter override (profiles)")
    ap.add_argument("--cprofile", help="with --local-widths: write cProfile stats to FILE.w<width>")
    a = ap.parse_args()
    if a.local_widths:
        for w in a.local_widths:
            home = Path(tempfile.mkdtemp(prefix=f"bench-local-w{w}-"))
            print(json.dumps(local_width_arm(w, a.profile, a.p, home, a.cprofile)), flush=True)
        return 0
    from creval.models import vllm_local
    server = None
    if any(x != "llamacpp" for x in a.arms):
        why = vllm_local.unavailable()
        if why:
            print(f"bench_vllm: {why}", file=sys.stderr)
            return 1
        server = vllm_local.serve(Path(tempfile.mkdtemp(prefix="bench-vllm-log-")))
    spec_dir = Path(tempfile.mkdtemp(prefix="bench-vllm-specs-"))
    os.environ["CREVAL_MODELS"] = str(spec_dir)
    rows = []
    try:
        for study in a.studies:
            for arm in a.arms:
                home = Path(tempfile.mkdtemp(prefix=f"bench-vllm-{study}-{arm}-"))
                r = run_arm(study, arm, a.profile, spec_dir, server.url if server else "", home)
                rows.append(r)
                print(json.dumps(r), flush=True)
    finally:
        if server is not None:
            server.stop()
    print("\n| study | arm | wall s | calls | in flight (mean) | tokens/s |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['study']} | {r['arm']} | {r['wall_s']} | {r['calls']} | {r['in_flight_mean']} | "
              f"{r['tokens_per_s']} |" + (f" FAILED {r['error']}" if r["error"] else ""))
    sp = spreads(rows)
    if sp:
        print("\n| study | measure | width 32 (a) | width 32 (b) | width 1 | spread 32-32 | spread 32-1 |\n"
              "|---|---|---|---|---|---|---|")
        fmt = (lambda v: "-" if v is None else f"{v:.4g}")
        for s in sp:
            print(f"| {s['study']} | {s['measure']} | {fmt(s['w32a'])} | {fmt(s['w32b'])} | {fmt(s['w1'])} | "
                  f"{fmt(s['spread_32_32'])} | {fmt(s['spread_32_1'])} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "spreads": sp}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
