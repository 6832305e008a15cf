"""``creval grade TEXTS.csv|jsonl --labels COL``: grade every cheap measure against your own human ratings.

Computes each text's creativity index (leave-own-item-out, and leave-group-out with ``--group``), perplexity
and bits per byte (under SmolLM2-135M: :func:`creval.grade.grading.scoring_model`), templates per token,
similarity to the other texts, lexical measures and (with a prompt column) semantic distance to the prompt;
optionally a rubric judge (``--judge-model MODEL``). Each measure then goes through the report card's rule
against the labels and gets its word. Writes ``card.html``, ``card.jsonl`` and ``measures.csv`` under ``--out``
(:mod:`creval.grade.grading`, :mod:`creval.grade.card`)."""
from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from creval.commands import renamed
from creval.core.table import guard_folder
from creval.grade.card import CARD_FILES, write_card
from creval.grade.grading import CHEAP, GROUPS, SCORING_MODELS, GradeOptions, check_boot, grade_file, read_texts
from creval.measures.stats.tracking import word_label
from creval.studies.rethinking.config import RethinkingConfig

EXAMPLE = """example (the labelled sample bundled with creval: 60 short stories in the styles of people and
two models, with our own 1-5 ratings):

  creval grade data/samples/grade/stories.csv --labels rating --group prompt_id --author author \\
      --prompt prompt --out runs/grade-sample

  writes runs/grade-sample/card.html (open it in a browser), card.jsonl (one row per measure) and
  measures.csv (one row per text). Each measure gets one of: tracks people, tracks authorship only,
  no better than BASELINE, does not track people, inconclusive here, not testable here.

  the unit and the item are two things: --cluster COL is the independent unit the bootstrap resamples whole
  (a writer, a model; default: each text); --group COL is the prompt each text answers (the creativity
  index leaves its group out; the bootstrap resamples units within each prompt). "Too few units" counts
  clusters, never prompts.
  Faster, without the model or the embedder: --measures ci lexical templates"""


def line(r: dict, stat: str, width: int) -> str:
    """One measure's row of the printed card: value, interval, strongest baseline and word (or why none)."""
    nan = float("nan")
    if "lo" not in r:
        return f"{r['measure']:<{width}}  {r['word']}: {r.get('reason', '')}"
    return (f"{r['measure']:<{width}}  {stat} {r['value']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]  "
            f"vs {r.get('baseline', '')} {r.get('baseline value', nan):+.3f}  ->  {word_label(r)}")


def cmd_grade(args) -> int:
    d0 = RethinkingConfig()
    opt = GradeOptions(labels=args.labels, text=args.text, id=args.id, group=args.group, cluster=args.cluster,
                       author=args.author,
                       prompt=args.prompt, measures=args.measures, model=args.model, judge=args.judge_model,
                       L=(d0.rethink_ci_l_min, d0.rethink_ci_l_max), agg=d0.rethink_ci_agg,
                       template_n=d0.rethink_template_n, template_top=d0.rethink_template_top, stat=args.stat,
                       n_boot=args.n_boot, seed=args.seed, rater=args.rater, rater_kind=args.rater_kind)
    check_boot(args.n_boot)
    # the card's files must not be the file graded, and a replaced card is said
    guard_folder(args.out, list(CARD_FILES.values()), args.file,
                 warn=lambda m: print(f"creval: warning: {m}", file=sys.stderr))
    table = read_texts(args.file, opt)
    with tqdm(total=len(table), desc="perplexity", unit="text", disable=args.quiet or "ppl" not in args.measures,
              file=sys.stderr) as bar:
        result = grade_file(args.file, opt, step=lambda: bar.update(1), table=table)
    for w in result["warnings"]:
        print(f"creval: warning: {w}", file=sys.stderr)
    paths = write_card(result, args.out, str(args.file))
    width = max(len(r["measure"]) for r in result["card"]) if result["card"] else 10
    stat = "AUROC" if result["stat"] == "auc" else "rho"
    under = f"; perplexity under {result['ppl_model']}" if result["ppl_model"] else ""
    whose = f" by {result['card'][0]['raters']}" if result["card"] and result["card"][0].get("raters") else ""
    print(f"{len(result['table'])} texts graded against {args.labels!r}{whose} ({stat}, 95% intervals{under})")
    for r in result["card"]:
        print(line(r, stat, width) + (f"; {r['held out']}" if r.get("held out") else ""))
    for c in result.get("raters") or []:
        kind = f" ({c['kind']})" if c.get("kind") else ""
        print(f"  rater {c['rater']}{kind}, held out: rho {c['agreement']:.2f} with the others' mean on {c['n']} texts")
    if result.get("kinds"):
        print(result["kinds"])
    print(f"card: {paths['html']}  rows: {paths['jsonl']}  per text: {paths['table']}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("grade", help="grade every cheap measure against your own human ratings",
                              description="Compute every measure that needs no new sample for each text of "
                                          "TEXTS, then apply the report card's rule to each against the human "
                                          "labels: its statistic beside the strongest trivial baseline (length, "
                                          "format features, author), within each author, and its word.",
                              epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="TEXTS", help=".csv or .jsonl, one text per row")
    p.add_argument("--labels", required=True, metavar="COL",
                   help="column of human labels: 0/1 (AUROC) or ratings (Spearman rho)")
    p.add_argument("--text", default="text", metavar="COL", help="column of the texts (default: text)")
    p.add_argument("--id", default=None, metavar="COL",
                   help="column of ids (default: a column named id if the file has one, else the row number from 0)")
    p.add_argument("--group", default=None, metavar="COL",
                   help="column of the item/prompt each text answers: leave-group-out creativity index, and a "
                        "stratum (the bootstrap resamples units within each prompt); never the unit")
    p.add_argument("--cluster", default=None, metavar="COL",
                   help="column of the independent unit the bootstrap resamples whole (a writer, a model, a "
                        "problem; default: each text)")
    p.add_argument("--author", default=None, metavar="COL",
                   help="column of who wrote each text (a person, a model): a baseline and the within-author check")
    p.add_argument("--rater", default=None, metavar="COL",
                   help="long input: one row per text and rater, this column naming the rater (--labels is the "
                        "score, --id the text); graded against each text's mean, with the leave-one-rater-out "
                        "ceiling beside every measure")
    p.add_argument("--rater-kind", default=None, metavar="COL",
                   help="with --rater: each rater's kind (expert, lay, crowd); with two kinds every row is also "
                        "graded against each kind alone")
    p.add_argument("--prompt", default=None, metavar="COL",
                   help="column of the prompt text, for semantic distance to it (default: a column named prompt)")
    p.add_argument("--measures", nargs="+", default=list(CHEAP), choices=GROUPS, metavar="NAME",
                   help=f"measure families, from: {', '.join(GROUPS)} (default: all but judge)")
    p.add_argument("--ppl-model", dest="model", default=None, metavar="MODEL",
                   help=f"perplexity model (default: {SCORING_MODELS[0]}, SmolLM2-135M's weights through "
                        f"transformers, else the same weights through llama.cpp, {SCORING_MODELS[1]})")
    p.add_argument("--judge-model", default=None, metavar="MODEL",
                   help="also grade a rubric LLM judge run by MODEL")
    renamed(p, "--judge", "--judge-model")
    renamed(p, "--model", "--ppl-model")          # --model means the model under test everywhere else
    p.add_argument("--stat", choices=["auto", "auc", "spearman"], default="auto",
                   help="auto: AUROC for two-valued labels, Spearman rho otherwise")
    p.add_argument("--n-boot", type=int, default=2000,
                   help="bootstrap resamples of every interval (default 2000, at least 100)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--out", default="grade", metavar="DIR", help="folder for the card (default: ./grade)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_grade)
