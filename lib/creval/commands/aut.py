"""``creval aut``: LLM agreement on the Alternative Uses Test (chapter 07).

``creval aut table [--params FILE] [-p key=value ...]`` prints the agreement table (what chapter 07 shows)
from the records of ``creval run aut`` (running the study first when its folder is not finished); the study
itself runs with ``creval run aut`` ("run" means a study run; ``creval aut run``, this table's old name, is
an error naming both).
``creval aut score FILE --judge M [--mode pointwise|segmented]`` scores your own responses: FILE is a CSV
with the columns ``object`` and ``response``; the scores are written to ``--out`` (default: print).
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from creval.book.params import effective_params, load_params
from creval.commands import renamed, retire
from creval.commands.book import params_path
from creval.core.errors import CrevalError
from creval.judges.aut import ListJob, judge_lists, pointwise_scores
from creval.models.registry import load_model
from creval.studies.aut import STUDY, report
from creval.studies.aut.config import AutConfig

D = AutConfig()


def register(subparsers) -> None:
    p = subparsers.add_parser("aut", help="LLM agreement on the Alternative Uses Test (chapter 07)",
                              description="Generate alternative uses at three creativity levels, judge them in "
                                          "four settings, and score AUT responses.")
    sub = p.add_subparsers(dest="aut_command", metavar="{table,score}", required=True)
    r = sub.add_parser("table", help="the agreement table from the study's records (runs `creval run aut` first "
                                     "if needed)")
    r.add_argument("--params", default="params/default.yaml", help="parameter file (default: %(default)s)")
    r.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one parameter, e.g. -p models='[qwen2.5-coder-1.5b, smollm2-135m]'")
    r.set_defaults(func=table)
    retire(sub, "aut run", "`creval aut table` (the agreement table) or `creval run aut` (the study)")
    s = sub.add_parser("score", help="score the AUT responses of a CSV file (columns object, response)")
    s.add_argument("file", help="CSV with the columns object and response")
    s.add_argument("--judge-model", default=D.judge_model, help="the LLM that scores (default: %(default)s)")
    renamed(s, "--judge", "--judge-model")
    s.add_argument("--mode", default="pointwise", choices=("pointwise", "segmented"),
                   help="pointwise: one response per call, expected score from the log-probs of 1..5; segmented: "
                        "lists of --list responses of the same object scored 1-5 in one call")
    s.add_argument("--list", type=int, default=D.aut_human_list, help="responses per list in segmented mode")
    s.add_argument("--retries", type=int, default=D.aut_retries, help="re-asks for missing scores")
    s.add_argument("--out", default=None, help="output CSV (default: print to stdout)")
    s.set_defaults(func=score)


def table(args) -> int:
    ppath = params_path(args.params)
    params = effective_params(load_params(ppath, args.overrides))
    recs = STUDY.records(AutConfig.from_params(params, where=str(ppath)))
    t = report.table_agreement(recs)
    print(t.to_string(index=False) if len(t) else "no judgments")
    print(f"records in {recs.root}")
    return 0


def read_responses(path: str | Path) -> list[dict]:
    p = Path(path)
    if not p.exists():
        raise CrevalError(f"{p} does not exist", "give a CSV file with the columns object and response")
    try:
        with p.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (UnicodeDecodeError, csv.Error) as e:
        raise CrevalError(f"{p} is not a readable UTF-8 CSV ({e})", "save it as UTF-8 CSV") from None
    if not rows or not {"object", "response"} <= set(rows[0]):
        raise CrevalError(f"{p} needs the columns 'object' and 'response'",
                          f"found {sorted(rows[0]) if rows else 'no rows'}; add a header line: object,response")
    bad = [i + 2 for i, r in enumerate(rows) if not (r["object"] or "").strip() or not (r["response"] or "").strip()]
    if bad:
        raise CrevalError(f"{p}: empty object or response on line {bad[0]}", "fill or remove that line")
    return [{"object": r["object"].strip(), "response": r["response"].strip()} for r in rows]


def score(args) -> int:
    rows = read_responses(args.file)
    model = load_model(args.judge_model)
    if args.mode == "pointwise":
        res = pointwise_scores(model, [(r["object"], r["response"]) for r in rows], via="logprobs")
        for r, (v, path) in zip(rows, res):
            r.update(score=v, parse_path=path)
    else:
        jobs, where = [], []
        by_obj: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            by_obj.setdefault(r["object"], []).append(i)
        size = max(2, args.list)
        for obj, idx in by_obj.items():
            for c in range(0, len(idx), size):
                part = idx[c:c + size]
                jobs.append(ListJob("score", obj, [rows[i]["response"] for i in part]))
                where.append(part)
        for part, res in zip(where, judge_lists(model, jobs, retries=args.retries, via="text+logprobs")):
            for i, v, path in zip(part, res.raw, res.paths):
                rows[i].update(score=v, parse_path=path)
    out = open(args.out, "w", newline="", encoding="utf-8") if args.out else sys.stdout
    try:
        w = csv.DictWriter(out, fieldnames=["object", "response", "score", "parse_path"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "score": "" if r["score"] is None else round(float(r["score"]), 3)})
    finally:
        if args.out:
            out.close()
    return 0
