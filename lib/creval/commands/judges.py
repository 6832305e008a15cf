"""``creval judges FILE --rater COL --score COL [--kind COL] [--group COL] [--author COL] --out DIR`` (issue 64):
a long file of ratings, people and LLM judges mixed, judged against the people: ``DIR/raters.csv`` (one row per
rater: agreement with the other people on the same held-out references and its interval, a judge's lead over the
people's ceiling, severity and discrimination from one graded response model with the people inside it, and with
``--author`` each judge's author gap beyond the people), ``DIR/texts.csv`` (each text's people's mean and
calibrated score) and ``DIR/judges.html`` (the raters on a severity x agreement plane, the people's ceiling
drawn)."""
from __future__ import annotations

import html
import math
import sys
from pathlib import Path

import numpy as np
from plotly.io import to_html

from creval.core.errors import CrevalError
from creval.core.table import guard_folder, read_table, write_rows
from creval.grade import judges as J
from creval.grade import raters as R
from creval.grade.grading import check_boot
from creval.measures.stats import bias


def register(subparsers) -> None:
    p = subparsers.add_parser("judges", help="judge LLM judges against people on your own long file of ratings",
                              description="Read a long file (one row per text and rater; people and judges mixed, "
                                          "--kind saying which) and give each rater its agreement with the people, "
                                          "its severity and discrimination from one graded response model, and "
                                          "the people's ceiling.")
    p.add_argument("file", metavar="RATINGS", help=".csv or .jsonl, one row per text and rater")
    p.add_argument("--rater", required=True, metavar="COL", help="column naming the rater (a person or a judge)")
    p.add_argument("--score", required=True, metavar="COL", help="column of the score")
    p.add_argument("--id", default="id", metavar="COL", help="column naming the text rated (default: id)")
    p.add_argument("--kind", default=None, metavar="COL",
                   help="column of each rater's kind: person, expert, lay, crowd (people) or anything else (judge); "
                        "without it every rater is a person")
    p.add_argument("--group", default=None, metavar="COL",
                   help="column of the prompt each text answers: agreement read within prompts, prompts resampled")
    p.add_argument("--author", default=None, metavar="COL",
                   help="column of who wrote each text (person, human or people for a person's text, anything else "
                        "a model's): each judge's author gap beyond the people, within prompts")
    p.add_argument("--n-boot", type=int, default=1000, help="resamples of each agreement interval (default 1000)")
    p.add_argument("--irt-boot", type=int, default=100, help="refits of the response model for its intervals")
    p.add_argument("--epsilon", type=float, default=None,
                   help="the alternative-annotator test's margin (default: 0.1 when every person is an expert, "
                        "else 0.2, as Calderon et al. 2025 suggest)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="judges", metavar="DIR", help="folder for the results (default: ./judges)")
    p.set_defaults(func=cmd_judges)


def cmd_judges(args) -> int:
    check_boot(args.n_boot)
    out = guard_folder(args.out, ("raters.csv", "texts.csv", "judges.html"), args.file,
                       warn=lambda m: print(f"creval: warning: {m}", file=sys.stderr))
    table = read_table(args.file, text=args.id, id=args.id, repeated=True)     # the id stands for the text
    ratings = R.fold(table, args.score, args.rater, args.kind)
    group = [str(g) for g in ratings.texts.column(args.group)] if args.group else None   # each text's first row
    if not J.people_of(ratings):
        raise CrevalError(f"{args.file}: no rater is a person (column {args.kind!r})",
                          "mark the people's kind person, expert, lay or crowd")
    result = J.judge_table(ratings, group, args.n_boot, args.irt_boot, args.seed, args.epsilon)
    out.mkdir(parents=True, exist_ok=True)
    cols = ["rater", "kind", "n", "agreement", "agreement_lo", "agreement_hi", "lead", "lead_lo", "lead_hi",
            "severity", "severity_lo", "severity_hi", "discrimination", "discrimination_lo", "discrimination_hi",
            "alt_winning_rate", "alt_passes", "advantage", "epsilon"]
    if args.author:                          # whom each judge favours beyond the people (chapter 07c's author gap)
        person = np.array([J.is_person(a) for a in ratings.texts.column(args.author)])
        g = group or ["all"] * len(person)
        for j, r in enumerate(result["rows"]):
            gap = bias.author_gap(ratings.matrix[:, j], result["people_mean"], person, g, args.n_boot, args.seed) \
                if not r["person"] else {"value": math.nan, "lo": math.nan, "hi": math.nan}
            r.update(author_gap=gap["value"], author_gap_lo=gap["lo"], author_gap_hi=gap["hi"])
        cols += ["author_gap", "author_gap_lo", "author_gap_hi"]
    write_rows(out / "raters.csv", [{c: r[c] for c in cols} for r in result["rows"]])
    mean = result["people_mean"]
    write_rows(out / "texts.csv", [{"id": k, "people_mean": float(mean[i]), "calibrated": float(result["scores"][i])}
                                   for i, k in enumerate(ratings.texts.ids)])
    (out / "judges.html").write_text(
        f"<!doctype html><html><head><meta charset=utf-8><title>creval judges: {html.escape(str(args.file))}</title>"
        f"</head><body><h1>Judges against people: {html.escape(Path(args.file).name)}</h1>"
        f"<p>People's ceiling (one person against the mean of the others): {result['ceiling']:.3f}.</p>"
        + to_html(J.figure(result), include_plotlyjs=True, full_html=False) + "</body></html>", encoding="utf-8")
    print(f"{len(ratings.texts)} texts, {len(ratings.raters)} raters; people's ceiling {result['ceiling']:.3f}")
    for r in result["rows"]:
        print(f"{r['rater']:<16} {r['kind']:<8} agreement {r['agreement']:+.3f} [{r['agreement_lo']:+.3f}, "
              f"{r['agreement_hi']:+.3f}]  severity {r['severity']:+.2f} [{r['severity_lo']:+.2f}, "
              f"{r['severity_hi']:+.2f}]  discrimination {r['discrimination']:.2f}"
              + ("" if r["person"] else f"  replaces a person: {'yes' if r['alt_passes'] else 'no'} (winning rate "
                                        f"{r['alt_winning_rate']:.2f} at epsilon {r['epsilon']:g})"))
    print(f"raters: {out / 'raters.csv'}  texts: {out / 'texts.csv'}  page: {out / 'judges.html'}")
    return 0
