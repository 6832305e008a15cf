"""``creval neocoder table|humans``: NeoCoder (denial prompting and NeoGauge on Codeforces problems).

The study itself (the replay of the stored GPT-4 rounds under both judges, the live denial run of every model
under test, the technique detection) runs with ``creval run neocoder`` ("run" means a study run: the old
aliases ``creval neocoder run`` and ``creval neocoder replay`` are errors naming it); ``table`` prints chapter
05's main tables from that run's records (running the study first if its folder is not finished), as ``creval aut
table`` does chapter 07's (``score`` is its old name, kept: "score" means a judge scoring a file); ``humans``
runs the human Python solutions through the strict judge (the test-suite check behind the unverifiable flags).
"""
from __future__ import annotations

import sys

from creval.book.params import effective_params, load_params
from creval.commands import retire
from creval.commands.book import params_path
from creval.datasets import neocoder as ds
from creval.measures.neocoder.judges import human_pass_rates
from creval.studies.neocoder import STUDY, report
from creval.studies.neocoder.config import NeoCoderConfig

D = NeoCoderConfig()


def register(subparsers) -> None:
    p = subparsers.add_parser("neocoder",
                              help="NeoCoder: print Tables 1 and 3 from the records; the human-solution check",
                              description="Print Table 1, Table 3 (both judges) and the creativity columns from "
                                          "the records of `creval run neocoder` (run first when missing), or run "
                                          "the human solutions through the strict judge.")
    sub = p.add_subparsers(dest="neocoder_cmd", metavar="{table,humans}", required=True)
    for old in ("run", "replay"):
        retire(sub, f"neocoder {old}", "`creval run neocoder` (the whole study into its run folder)")
    for name in ("table", "score"):     # "score" is the old name: hidden from the help, it says the new one
        q = (sub.add_parser(name, help="Table 1, Table 3 and the creativity columns from the study's records")
             if name == "table" else sub.add_parser(name))
        q.add_argument("--params", default="params/default.yaml", help="parameter file (default: %(default)s)")
        q.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override one parameter (repeatable), e.g. -p neocoder_problems=20")
        q.set_defaults(func=table if name == "table" else _old_score)
    h = sub.add_parser("humans", help="run the human Python solutions through the strict judge (the test-suite check)")
    h.add_argument("--workers", type=int, default=D.neocoder_workers,
                   help="parallel sandbox launches, 0 for the CPU count (default: %(default)s)")
    h.set_defaults(func=humans)


def _old_score(args) -> int:
    print("creval: `creval neocoder score` is now `creval neocoder table` (the old name still works)", file=sys.stderr)
    return table(args)


def table(args) -> int:
    ppath = params_path(args.params)
    cfg = NeoCoderConfig.from_params(effective_params(load_params(ppath, args.overrides)), where=str(ppath))
    recs = STUDY.records(cfg)
    for t in (report.table1(recs), report.table3(recs), report.table3(recs, "verifiable"), report.creativity(recs)):
        print(t.attrs.get("caption", ""))
        print(t.to_string(index=False))
        print()
    print(f"records in {recs.root}")
    return 0


def humans(args) -> int:
    rows = human_pass_rates(ds.load()[0], progress=True, workers=args.workers or None)
    sus = [r for r in rows if r["suspect"]]
    flagged = [r for r in rows if r["input_flattened"] or r["needs_checker"]]
    for r in sus:
        print(f"{r['problem_id']}: {r['passed']}/{r['python solutions']} pass {r['verdicts']} "
              f"flagged={r['input_flattened'] or r['needs_checker']}")
    print(f"{len(sus)} problems where at most one in five human Python solutions passes; "
          f"{len(flagged)} flagged unverifiable; "
          f"{sum(1 for r in sus if not (r['input_flattened'] or r['needs_checker']))} "
          f"suspect but not flagged")
    return 0
