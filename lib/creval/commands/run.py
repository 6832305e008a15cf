"""``creval run <study>``: run one study (and the studies it reads) into its run folder."""
from __future__ import annotations

import argparse
from contextlib import nullcontext

from creval.book.params import effective_params, load_params
from creval.book.studies import measure_slow_models, phases_lines, run_studies, summary_line
from creval.book.sync import field_comments, yaml_value
from creval.commands.book import params_path
from creval.core.deferral import batch_out
from creval.core.units import spending_limit
from creval.models.batchfile import read_in
from creval.models.endpoint import peak_in_flight
from creval.studies.registry import STUDIES, run_notes


def parameters_help(cls) -> str:
    """One line per parameter of a study's Config: its default and the comment of its declaration."""
    notes, defaults = field_comments(cls), cls.defaults()
    return "parameters (-p KEY=VALUE; * changes the run id):\n" + "\n".join(
        f"  {k}{'*' if k in cls.identity_keys() else ''} = {yaml_value(v)}" + (f"   # {notes[k]}" if k in notes else "")
        for k, v in defaults.items() if k in cls.flat_keys()) + (
        "\n  (and every parameter of the studies it reads, the same -p KEY=VALUE)"
        if set(cls.keys()) != set(cls.flat_keys()) else "")


def study_line(s) -> str:
    """A study's summary, chapter, the studies it reads first and the datasets it reads."""
    reads = f" Runs first (it reads their records): {', '.join(s.reads)}." if s.reads else ""
    data = f" Data: {', '.join(d.name for d in s.datasets)}." if s.datasets else ""
    return f"{s.summary}. Chapter: {s.chapter}.{reads}{data}"


def cmd_run(args) -> int:
    ppath = params_path(args.params)
    params = effective_params(load_params(ppath, args.overrides))
    for line in run_notes(args.study, params):     # what the specs say cannot run, before any call
        print(line)
    for answers in args.batch_in:
        print(f"{answers}: {read_in(answers).line()}")
    out = batch_out(args.batch_out, args.batch_retry_failed) if args.batch_out else nullcontext()
    with spending_limit(args.max_cost), out as wave:
        rows = run_studies(params, [args.study], where=str(ppath))
    if wave is not None and (wave.written or wave.held):
        print(f"wave written: {wave.written} requests in {len(wave.counts)} files (one per model and endpoint):")
        print("\n".join(wave.lines()))
        print("answer each file with a batch engine, then rerun with --batch-in <each output file> --batch-out "
              "<a new name>; repeat until nothing is written")
        return 0 if wave.written else 1
    for r in rows:
        print(summary_line(r))
    measure_slow_models(rows)
    for line in phases_lines(rows):
        print(line)
    for url, peak in peak_in_flight().items():
        print(f"most requests in flight at once: {peak} ({url})")
    return 1 if any(r["error"] for r in rows) else 0


def register(sub) -> None:
    p = sub.add_parser("run", help="run one study into its run folder (resumable), then print where and what it cost",
                       description="Run a study: every model, judge and sandbox call it needs, resumable, into "
                                   "<run_root>/<study>/<run id>/. The studies it reads run first. The chapters "
                                   "and `creval book` read these folders.")
    sp = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    for name, s in STUDIES.items():
        q = sp.add_parser(name, help=s.summary, description=study_line(s),
                          epilog=parameters_help(s.config), formatter_class=argparse.RawDescriptionHelpFormatter)
        q.add_argument("--params", default="params/default.yaml",
                       help="flat YAML parameter file (default: %(default)s)")
        q.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override one parameter (repeatable), e.g. -p model=gpt-4o")
        q.add_argument("--max-cost", type=float, default=None, metavar="USD",
                       help="stop starting units before the calls made would pass this many dollars (resumable: "
                            "rerun with a higher limit to go on); `creval estimate` says what a run will cost")
        q.add_argument("--batch-out", metavar="FILE",
                       help="write the requests the run still needs (this wave) in the OpenAI batch input format "
                            "instead of sending them, one file per model and endpoint (FILE wave.jsonl: "
                            "wave.<model>.<endpoint>.jsonl), and stop")
        q.add_argument("--batch-in", metavar="FILE", action="append", default=[],
                       help="first read a batch engine's output FILE (answers to an earlier --batch-out) into the "
                            "call cache (repeatable: one per file answered)")
        q.add_argument("--batch-retry-failed", action="store_true",
                       help="write again the requests whose batch answer was a client error (HTTP 4xx); without "
                            "it they are held back and listed")
        q.set_defaults(func=cmd_run)
