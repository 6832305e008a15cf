"""Local engines batched across units against one request at a time: the real phases of a study, side by side in
one run.

Each mode runs in its own process (fresh data home and call cache, so every call is computed), one after the other,
and the pair is repeated ``--rounds`` times alternating which goes first (a shared machine's load drifts):

- ``--engine llamacpp`` (the embedded default, CPU): gathering on (``CREVAL_LLAMACPP_GATHER=1``: the units in
  flight decode together) against off (``=0``: one unit, one request at a time);
- ``--engine hf`` (transformers; on a GPU): the continuous-batching engine (``CREVAL_HF_ENGINE=continuous``) against
  the padded batches (``=padded``) and against one request at a time (``=padded`` with gathering off:
  ``CREVAL_HF_GATHER=0``), with the GPU's busy share sampled through NVML or ``nvidia-smi`` (bench_gpu.py's sampler).

Phases (every ``run_units`` call of the run is timed: wall, calls made, tokens in and out, requests per batch):

- ``aut``: the AUT study at its defaults (generation chats, then the judges' chats);
- ``convergent``: the convergent study's human-pair validation, ``--pairs`` labelled pairs x its five judges
  (zero-shot, few-shot, CoT, ChatEval, retrieval: the discussions);
- ``divergent``: the divergent study at its defaults (samples of each step, then entailment);
- ``chats``: a fixed set of ``--chats`` judge-like requests (a ~200-token prompt each, greedy, ``--chat-tokens``
  new tokens at most), one unit each, all in flight: the engine's own speed without a study's chains of turns, and
  the fixed set on which identical greedy replies are counted.

For each phase it prints both walls, their ratio, tokens/s against ``creval throughput``'s figures for the model
(measured first unless stored), the load average around each run, and how many of the calls both modes made
(same request, same cache key) got identical replies (greedy replies can differ with the batch through float
rounding; the cache keeps the first, so a rerun reads back the same records).

    nice python benchmarks/bench_engines.py [--engine llamacpp] [--phases aut,convergent] [--pairs 2] [--rounds 1]
        [-p aut_things=[fork]] ...
    python benchmarks/bench_engines.py --engine hf --phases divergent --model smollm2-135m-hf   # on a GPU
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
MODES = {
    "llamacpp": {"gathered": {"CREVAL_LLAMACPP_GATHER": "1"}, "serial": {"CREVAL_LLAMACPP_GATHER": "0"}},
    "hf": {"continuous": {"CREVAL_HF_ENGINE": "continuous", "CREVAL_HF_GATHER": "1"},
           "padded": {"CREVAL_HF_ENGINE": "padded", "CREVAL_HF_GATHER": "1"},
           "serial": {"CREVAL_HF_ENGINE": "padded", "CREVAL_HF_GATHER": "0"}},
}


def load() -> float:
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# -- the child: one mode, every phase asked, each run_units call timed --------------------------------------------
def child(args) -> None:
    from creval.core import units
    from creval.core.ledger import LEDGER
    real = units.run_units
    timings: list[dict] = []
    busy_cls = None
    if args.engine == "hf":
        sys.path.insert(0, str(HERE.parent))
        from bench_gpu import BusySampler
        busy_cls = BusySampler

    def timed(root, name, todo, work, **kw):
        kw["progress"] = False
        t0, l0 = time.perf_counter(), load()
        with LEDGER.collect() as tally:
            if busy_cls is not None:
                with busy_cls() as busy:
                    out = real(root, name, todo, work, **kw)
            else:
                out = real(root, name, todo, work, **kw)
        s = tally.summary()
        total = s.get("total", s)
        timings.append({"phase": args.phase_now, "step": name, "units": len(todo), "width": kw.get("width", 1),
                        "wall": time.perf_counter() - t0, "load": (l0 + load()) / 2,
                        "calls": total.get("calls_made", 0), "tokens_in": total.get("made_input_tokens", 0),
                        "tokens_out": total.get("made_output_tokens", 0),
                        "busy": busy.summary() if busy_cls is not None else None})
        return out

    units.run_units = timed                       # before any study imports it by name
    for phase in args.phases.split(","):
        args.phase_now = phase
        PHASES[phase](args)
    print("TIMINGS " + json.dumps(timings), flush=True)


def params(args, **base) -> dict:
    """The study's parameters: ``base`` and the model, then every ``-p key=value`` (values read as YAML)."""
    import yaml
    out = {"run_root": "bench", "judge_model": args.model, "model": args.model, **base}
    for kv in args.p:
        k, v = kv.split("=", 1)
        out[k] = yaml.safe_load(v)
    return out


def run_aut(args) -> None:
    from creval.studies.aut import run
    from creval.studies.aut.config import AutConfig
    run.run(AutConfig.from_params(params(args)), progress=False)


def run_convergent(args) -> None:
    from creval.core import units
    from creval.models import width as widths
    from creval.models.registry import load_model
    from creval.studies.convergent import run
    from creval.studies.convergent.config import ConvergentConfig
    cfg = ConvergentConfig.from_params(params(args, convergent_human_pairs=args.pairs))
    judge = load_model(cfg.judge_model)
    todo = run.validation_units(cfg, judge, run.human_pairs(cfg))
    units.run_units(cfg.run_dir, "judged", todo, run._work, width=widths.width(cfg.judge_model))


def run_divergent(args) -> None:
    from creval.studies.divergent import run
    from creval.studies.divergent.config import DivergentConfig
    run.run(DivergentConfig.from_params(params(args, divergent_nli=args.nli)))


def chat_messages(i: int) -> tuple[dict, ...]:
    """Request ``i`` of the ``chats`` phase: a judge's system prompt and a list of uses to rate (about 200
    tokens for SmolLM2's tokenizer), different for every ``i``."""
    things = ("brick", "fork", "shoe", "paperclip", "bucket", "candle")
    uses = ("doorstop", "bookmark", "planter", "paperweight", "hook", "whistle", "ruler")
    lines = "\n".join(f"{k + 1}. the {things[(i + k) % len(things)]} as a {uses[(3 * i + k) % len(uses)]}, "
                      f"idea {i}-{k}" for k in range(14))
    return ({"role": "system", "content": "You judge the originality of uses of everyday objects. Rate each list "
             "from 1 (common) to 5 (original) and explain your rating in a few sentences."},
            {"role": "user", "content": f"List {i}:\n{lines}\nHow original is this list? Answer with a rating "
             "and your reasons."})


def run_chats(args) -> None:
    from creval.core import units
    from creval.core.paths import home
    from creval.models import width as widths
    from creval.models.registry import load_model
    model = load_model(args.model)

    def work(unit) -> dict:
        c = model.chat(chat_messages(unit.item), max_tokens=args.chat_tokens, seed=unit.item)
        return {"replies": [{"i": unit.item, "text": c.text}]}

    todo = [units.Unit(f"chat|{i}", i) for i in range(args.chats)]
    units.run_units(home() / "bench-chats", "chats", todo, work, width=widths.width(args.model))


PHASES = {"aut": run_aut, "convergent": run_convergent, "divergent": run_divergent, "chats": run_chats}


# -- the parent: the modes side by side ---------------------------------------------------------------------------
def replies(cache: Path) -> dict[str, str]:
    """``{cache key: reply text}`` of every chat and sample call in a call cache."""
    if not cache.exists():
        return {}
    with sqlite3.connect(cache) as c:
        rows = c.execute("SELECT key, value FROM calls WHERE kind IN ('chat', 'sample')").fetchall()
    return {k: json.loads(v).get("text") for k, v in rows}


def run_mode(args, mode: str, env_extra: dict, folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **env_extra, "CREVAL_HOME": str(folder), "CREVAL_CACHE": str(folder / "calls.sqlite")}
    cmd = [sys.executable, str(HERE), "--child", "--engine", args.engine, "--phases", args.phases, "--model",
           args.model, "--pairs", str(args.pairs), "--nli", args.nli, "--chats", str(args.chats),
           "--chat-tokens", str(args.chat_tokens)] + [x for kv in args.p for x in ("-p", kv)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-8000:])
        raise SystemExit(f"{mode} failed (exit {proc.returncode})")
    line = [x for x in proc.stdout.splitlines() if x.startswith("TIMINGS ")][-1]
    return {"timings": json.loads(line[len("TIMINGS "):]), "total": time.perf_counter() - t0,
            "replies": replies(folder / "calls.sqlite")}


def throughput_figures(model: str) -> dict:
    from creval.models import throughput
    from creval.models.registry import get_spec, load_backend
    got = throughput.load(model)
    if got:
        return got
    return throughput.measure(load_backend(get_spec(model)), repeats=2)


def by_phase(timings: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for t in timings:
        key = f"{t['phase']}/{t['step']}"
        agg = out.setdefault(key, {"wall": 0.0, "calls": 0, "tokens_out": 0, "tokens_in": 0, "units": 0,
                                   "width": t["width"], "load": [], "busy": []})
        for k in ("wall", "calls", "tokens_out", "tokens_in", "units"):
            agg[k] += t[k]
        agg["load"].append(t["load"])
        if t.get("busy"):
            agg["busy"].append(t["busy"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=sorted(MODES), default="llamacpp")
    ap.add_argument("--phases", default="aut,convergent", help=f"comma-separated, of {','.join(PHASES)}")
    ap.add_argument("--model", default="", help="default: smollm2-135m (llamacpp), smollm2-135m-hf (hf)")
    ap.add_argument("--pairs", type=int, default=2, help="labelled pairs of the convergent validation")
    ap.add_argument("--nli", default="minilm-cosine", help="entailment backend of the divergent phase")
    ap.add_argument("--chats", type=int, default=16, help="requests of the chats phase")
    ap.add_argument("--chat-tokens", type=int, default=96, help="new tokens at most per request of the chats phase")
    ap.add_argument("--rounds", type=int, default=1, help="repetitions of the pair of runs (order alternates)")
    ap.add_argument("--modes", default="", help="comma-separated subset of the engine's modes")
    ap.add_argument("-p", action="append", default=[], metavar="KEY=VALUE",
                    help="a study parameter (YAML value), e.g. -p aut_things=[fork]; repeatable")
    ap.add_argument("--skip-throughput", action="store_true", help="do not measure `creval throughput` first")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.model = args.model or {"llamacpp": "smollm2-135m", "hf": "smollm2-135m-hf"}[args.engine]
    if args.child:
        child(args)
        return
    modes = {m: e for m, e in MODES[args.engine].items() if not args.modes or m in args.modes.split(",")}
    print(f"{time.strftime('%Y-%m-%d %H:%M')} {os.cpu_count()} cores, load {load():.2f}; {args.engine} "
          f"({args.model}); phases {args.phases}; modes {', '.join(modes)}", flush=True)
    figures = {} if args.skip_throughput else throughput_figures(args.model)
    print("creval throughput: " + json.dumps({k: figures.get(k) for k in ("prefill_tps", "decode_tps",
                                                                        "batched_decode_tps", "streams")}), flush=True)
    results: dict[str, list[dict]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
        for r in range(args.rounds):
            order = list(modes) if r % 2 == 0 else list(modes)[::-1]
            for mode in order:
                got = run_mode(args, mode, modes[mode], Path(tmp) / f"{mode}-{r}")
                results[mode].append(got)
                print(f"  round {r + 1} {mode}: {got['total']:.0f} s in all", flush=True)
    first = list(modes)[0]
    for r in range(args.rounds):
        phases = {m: by_phase(results[m][r]["timings"]) for m in modes}
        print(f"\nround {r + 1}")
        for key in phases[first]:
            cells = []
            for m in modes:
                p = phases[m].get(key)
                if not p:
                    continue
                tps = p["tokens_out"] / max(p["wall"], 1e-9)
                busy = f", GPU {'; '.join(p['busy'])}" if p["busy"] else ""
                cells.append(f"{m} {p['wall']:.1f} s ({p['width']} in flight, {p['calls']} calls, "
                             f"{p['tokens_in']}+{p['tokens_out']} tokens, {tps:.1f} out/s, load "
                             f"{sum(p['load']) / len(p['load']):.2f}{busy})")
            walls = [phases[m][key]["wall"] for m in modes if key in phases[m]]
            ratio = f" | ratio {walls[-1] / walls[0]:.2f}x" if len(walls) > 1 else ""
            print(f"{key:>22}: " + " | ".join(cells) + ratio)
        base = results[first][r]["replies"]
        for m in list(modes)[1:]:
            other = results[m][r]["replies"]
            common = [k for k in base if k in other]
            same = sum(base[k] == other[k] for k in common)
            print(f"replies of the same request, {first} vs {m}: {same} of {len(common)} identical "
                  f"({len(base)} and {len(other)} calls made)")


if __name__ == "__main__":
    main()
