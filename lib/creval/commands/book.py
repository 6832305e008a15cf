"""``creval book`` (execute and render the book) and ``creval batch`` (rerun it for several models)."""
from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

from creval.book.build import build_book
from creval.book.execute import book_structure, execute_chapters
from creval.book.params import effective_params, load_params
from creval.book.render import render_offline, render_quarto
from creval.book.studies import phases_lines, run_study, summary_line
from creval.core.errors import CrevalError
from creval.core.paths import REPO
from creval.core.units import spending_limit
from creval.models import vllm_local
from creval.models.registry import get_spec, model_name
from creval.studies.registry import get_study


def _summary(m: dict, out: Path) -> str:
    u = m["usage"]["total"]
    failed = [c["chapter"] for c in m["chapters"] if c["error"]]
    lines = [summary_line(r) for r in m.get("studies", [])] + phases_lines(m.get("studies", []))
    lines += [f"book: {m['index'] or '(not rendered)'}",
             f"studies: {len(m.get('studies', []))} run in {m.get('seconds_studies', 0):.1f} s; "
             f"chapters: {sum(not c['error'] for c in m['chapters'])} of {len(m['chapters'])} executed in "
             f"{m['seconds_execute']:.1f} s ({m['renderer'] or 'no render'})",
             f"model calls: {u['calls_made']} made, {u['cache_hits']} served from cache; "
             f"tokens in/out {u['input_tokens']}/{u['output_tokens']}; cost ${u['cost_usd']:.4f}",
             f"manifest: {out / 'book-manifest.json'}"]
    for c in m["chapters"]:
        if c["error"]:
            lines.append(f"FAILED {c['chapter']}: {c['error']} (executed notebook kept in {out / c['chapter']})")
    return "\n".join(lines) + ("\n" if not failed else "")


def check_chapters(only: list[str] | None) -> None:
    """``--chapters`` that match no chapter is an error, not a quiet run of nothing."""
    if not only:
        return
    stems = [Path(f).stem for _, f in book_structure() if f.endswith(".ipynb")]
    unknown = [o for o in only if not any(o in s for s in stems)]
    if unknown:
        raise CrevalError(f"--chapters {' '.join(unknown)} matches no chapter", f"use parts of: {', '.join(stems)}")


def check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise CrevalError(f"--out {out} is an existing file, not a folder", "give a folder path (it is created)")


def check_render(render: str) -> None:
    """``--render quarto`` without Quarto fails before any chapter runs."""
    if render == "quarto" and not shutil.which("quarto"):
        raise CrevalError("--render quarto, but the quarto program is not installed (not on PATH)",
                          "install Quarto (https://quarto.org), or use --render offline (the offline HTML book)")


def params_path(given: str | None) -> Path:
    """``--params`` as given, or (when it is relative and not found here) the profile of that name in the
    checkout, so ``creval book`` works from any folder."""
    p = Path(given or "params/default.yaml")
    return p if p.exists() or p.is_absolute() or not (REPO / p).exists() else REPO / p


def check_models(params: dict) -> None:
    """Every model the book will call (``model``, ``models``, ``judge_model``) names a spec, checked before
    any study runs (not found chapter by chapter)."""
    eff = effective_params(params)
    names = [eff.get("model"), *(eff.get("models") or []), eff.get("judge_model")]
    for name in dict.fromkeys(n for n in names if isinstance(n, str) and n):
        get_spec(name)


EMBEDDED = "smollm2-135m"       # the embedded default model, which either engine can serve
ENGINES = ("llamacpp", "vllm", "auto")


def choose_engine(asked: str) -> tuple[str, str]:
    """``(engine, why)``: ``llamacpp`` (in-process), ``vllm`` (a local server; an error where it cannot run), or for
    ``auto`` vLLM where it is installed and llama.cpp otherwise."""
    if asked not in ENGINES:
        raise CrevalError(f"engine {asked!r} is not one of {', '.join(ENGINES)}", "use --engine llamacpp|vllm|auto")
    why = vllm_local.unavailable()
    if asked == "auto":
        return ("llamacpp", f"auto: {why}") if why else ("vllm", "auto: vLLM is installed")
    if asked == "vllm" and why:
        raise CrevalError(f"--engine vllm: {why}", "run `make vllm`, or use --engine llamacpp (or auto)")
    return asked, "asked for"


def on_engine(params: dict, served: str) -> dict:
    """``params`` with the embedded model (``model``, in ``models``, ``judge_model``) replaced by ``served``."""
    eff = effective_params(params)
    swap = (lambda n: served if n == EMBEDDED else n)
    return {**params, "model": swap(eff["model"]), "models": [swap(n) for n in eff["models"]],
            "judge_model": swap(eff["judge_model"])}


@contextmanager
def book_engine(params: dict, out: Path, asked: str | None = None):
    """``(params, engine)`` for the book: with vLLM, the embedded model's calls go through the OpenAI client to a
    local vLLM server (started here, or the one already running, reused; its log in ``out``), named by a spec
    written to ``out/engine/`` and found through ``CREVAL_MODELS`` (the chapters' kernels inherit it). A server
    started here is stopped at the end. ``engine`` says what ran, for the manifest."""
    name, why = choose_engine(asked or str(effective_params(params).get("apparatus_engine", "llamacpp")))
    info = {"engine": name, "why": why, "model": EMBEDDED}
    if name == "llamacpp" or on_engine(params, "") == on_engine(params, EMBEDDED):    # the embedded model unused
        yield params, info if name == "llamacpp" else {**info, "engine": "none", "why": "the embedded model is unused"}
        return
    server = vllm_local.serve(out, say=lambda line: print(line, file=sys.stderr, flush=True))
    folder = out / "engine"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{vllm_local.SERVED}.yaml").write_text(vllm_local.spec_yaml(server.url))
    before = os.environ.get("CREVAL_MODELS")
    os.environ["CREVAL_MODELS"] = os.pathsep.join(p for p in (str(folder), before) if p)
    info.update(served_as=vllm_local.SERVED, url=server.url, log=str(server.log), reused=not server.started,
                start_seconds=round(server.seconds, 1), package=vllm_local.PACKAGE)
    try:
        yield on_engine(params, vllm_local.SERVED), info
    finally:
        if before is None:
            os.environ.pop("CREVAL_MODELS", None)
        else:
            os.environ["CREVAL_MODELS"] = before
        server.stop()


def cmd_book(args) -> int:
    check_chapters(args.chapters)
    check_render(args.render)
    ppath = params_path(args.params)
    params = load_params(ppath, args.overrides + ([f"apparatus_engine={args.engine}"] if args.engine else []))
    check_models(params)
    out = Path(args.out) if args.out else REPO / "_build" / ppath.stem
    check_out(out)
    limit = spending_limit(args.max_cost)        # a bad budget is refused before an engine starts
    with book_engine(params, out) as (params, engine), limit:
        print(f"engine: {engine['engine']} ({engine['why']})", file=sys.stderr)
        m = build_book(params, out, args.chapters, args.render)
    m["engine"] = engine
    (out / "book-manifest.json").write_text(json.dumps(m, indent=2, default=str))
    print(_summary(m, out))
    return 1 if any(c["error"] for c in m["chapters"]) else 0


def cmd_batch(args) -> int:
    code = 0
    check_chapters(args.chapters)
    check_render(args.render)
    check_out(Path(args.out))
    limit = spending_limit(args.max_cost)        # a bad budget is refused before the first book
    ppath = params_path(args.params)
    runs = []
    for model in args.models:                  # every model checked before the first book is built
        name = model_name(model)              # a spec path is named by its spec's name (or file stem)
        params = load_params(ppath, args.overrides)
        params.update(model=model, models=[], run_root=f"runs/{name}")   # under the data home (CREVAL_HOME)
        check_models(params)
        runs.append((name, params))
    for name, params in runs:
        out = Path(args.out) / name
        print(f"== {name} -> {out}", file=sys.stderr)
        with limit:
            m = build_book(params, out, args.chapters, args.render)
        print(_summary(m, out))
        code |= any(c["error"] for c in m["chapters"])
    code |= build_compare(args, ppath, [name for name, _ in runs])
    return int(code)


COMPARE_CHAPTER = "09-compare"


def compare_params(ppath: Path, overrides: list[str], names: list[str]) -> dict:
    """The comparison's parameters over the run roots ``creval batch`` wrote (one per model): its own run folder
    under runs/compare, the first model named as ``model``."""
    params = load_params(ppath, overrides)
    params.update(model=names[0], models=[], run_root="runs/compare", compare_roots=[f"runs/{n}" for n in names])
    return params


def build_compare(args, ppath: Path, names: list[str]) -> int:
    """After every model's book: the comparison study over all their run roots and its chapter, into
    ``<out>/compare`` (only that study runs: a root's missing run is reported on the page, never run here).
    With ``--chapters`` leaving chapter 09 out, it prints the command instead. Returns 1 when it failed."""
    roots = ",".join(f"runs/{n}" for n in names)
    if args.chapters and not any(c in COMPARE_CHAPTER for c in args.chapters):
        print(f"compare: creval batch {' '.join(args.models)} --chapters 09 (or add 09 to --chapters) builds the "
              f"comparison over {roots}")
        return 0
    params = compare_params(ppath, args.overrides, names)
    out = Path(args.out) / "compare"
    print(f"== compare ({roots}) -> {out}", file=sys.stderr)
    row = run_study(get_study("compare"), params)
    print(summary_line(row))
    if row["error"]:
        return 1
    status = execute_chapters(params, out, [COMPARE_CHAPTER])
    if args.render == "quarto" or (args.render == "auto" and shutil.which("quarto")):
        print(f"book: {render_quarto(out)}")
    elif args.render != "none":
        print(f"book: {render_offline(out)}")
    for c in status:
        if c["error"]:
            print(f"FAILED {c['chapter']}: {c['error']} (executed notebook kept in {out / c['chapter']})")
    return int(any(c["error"] for c in status))


def _common(p):
    p.add_argument("--params", default="params/default.yaml",
                   help="flat YAML parameter file; a relative path missing here is read from the checkout "
                        "(default: %(default)s)")
    p.add_argument("-p", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override one parameter (repeatable)")
    p.add_argument("--chapters", nargs="*", help="only chapters whose file name contains one of these (e.g. 01 02)")
    p.add_argument("--render", choices=["auto", "quarto", "offline", "none"], default="auto",
                   help="auto: Quarto if installed, else the offline HTML book")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop starting units before the calls made would pass this many dollars (per book; "
                        "resumable: rerun with a higher limit to go on). See `creval estimate` first")


def register(sub) -> None:
    p = sub.add_parser("book", help="execute every chapter (papermill) and render the book",
                       description="Run every study (resumable, cached), execute each chapter notebook with "
                                   "papermill and render the book (Quarto if installed, else offline HTML) into --out, "
                                   "with book-manifest.json (calls made vs cached, tokens, cost, timings).")
    _common(p)
    p.add_argument("--out", help="build folder (default: _build/<params name> in the checkout)")
    p.add_argument("--engine", choices=ENGINES,
                   help="what serves the embedded model: llamacpp (in-process), vllm (a local vLLM server, started "
                        "or reused, log in --out; `make vllm`), auto (vLLM where installed); default: the "
                        "parameter `apparatus_engine`")
    p.set_defaults(func=cmd_book)
    b = sub.add_parser("batch", help="rerun every chapter for each model given, each into its own folder",
                       description="For each MODEL (a registered name or a spec .yaml path) build the whole book "
                                   "into <--out>/<model>, with that model's runs under runs/<model>.")
    b.add_argument("models", nargs="+", help="registered model names (see `creval models`) or spec .yaml paths")
    _common(b)
    b.add_argument("--out", default="_build/batch", help="parent folder (default: %(default)s)")
    b.set_defaults(func=cmd_batch)
