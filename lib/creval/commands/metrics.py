"""``creval metrics diversity|novelty|ci|ppl|templates|rubric FILE``.

``ci``, ``ppl``, ``templates`` and ``rubric`` are the measures of chapter 06 (Rethinking creativity
evaluation): creativity index against the file's other texts (leave-own-item-out), the other groups' texts
(leave-group-out) or a folder of reference texts, perplexity (optionally given each row's ``question``),
syntactic templates and CR-POS, and the rubric LLM judge.

Every default comes from the studies' Configs (:class:`~creval.studies.rethinking.config.RethinkingConfig`):
the n-gram range and aggregation of the creativity index, the template length and count, the model under
test (``model``, for perplexity) and the LLM behind every judge (``judge_model``, for the rubric and novelty
judges), the judge's analysis budget and the seed. ``--params FILE`` takes them from a parameter profile.

FILE holds one text per row: ``.txt`` (one per non-empty line), ``.jsonl`` or ``.csv``; ``--text COL`` names
the text column (default ``text``) and ``--id COL`` an id column echoed in every output (default: the row
number). ``--out FILE.csv|FILE.jsonl`` writes one row per text (``--keep COL ...`` copies input columns
beside the id). For ``novelty``, ``ppl --conditional`` and
``rubric`` an optional ``question`` column gives each text's task (``--question`` sets one for all).
Perplexity is scored one text at a time with a progress bar; each text's log-likelihood is cached as soon as
it is computed, so an interrupted run resumes where it stopped. A measure with many texts at its bound (a
creativity index of exactly 1, distinct-1 of 1, no template) gets a warning: it cannot rank those texts.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tqdm import tqdm

from creval.book.params import effective_params, load_params
from creval.commands import renamed
from creval.core.errors import CrevalError
from creval.core.table import TextTable, guard_output, read_table, write_rows
from creval.judges.novelty import NoveltyJudge, rank_by_novelty
from creval.judges.rubric import ASPECTS, rubric_judge
from creval.measures import creativity_index as C
from creval.measures import pertext as P
from creval.measures import templates as T
from creval.measures.diversity import diversity, item_originality
from creval.measures.ngram_index import NgramIndex, folder_documents
from creval.models import width as units
from creval.models.registry import load_model
from creval.studies.rethinking.config import RethinkingConfig


def read(args) -> TextTable:
    """The file's texts, read with the command's ``--text`` and ``--id`` columns."""
    return read_table(args.file, text=getattr(args, "text", None) or "text", id=getattr(args, "id", None),
                      allow_empty=True)


def questions(table: TextTable) -> list:
    """Each row's ``question`` (None where the file has no such column)."""
    return [r.get("question") for r in table.rows]


def warn(message: str | None) -> None:
    if message:
        print(f"creval: warning: {message}", file=sys.stderr)


def out_file(args) -> None:
    """Settle ``--out`` before any text is scored: an existing folder (or a path ending in a separator) gets the
    file inside it, named after the input and the metric (``stories-ppl.csv``), and the command says so; a path
    under an existing file is refused in one sentence. ``args.out`` is then the file written."""
    given = getattr(args, "out", None)
    if not given:
        return
    p = Path(given)
    if p.is_dir() or given.endswith(("/", os.sep)):
        name = f"{Path(str(getattr(args, 'file', '') or 'texts')).stem}-{getattr(args, 'metric', None) or 'scores'}.csv"
        p = p / name
        print(f"--out {given} is a folder: the rows go to {p}", file=sys.stderr)
    blocked = next((a for a in p.parents if a.exists() and not a.is_dir()), None)
    if blocked is not None:
        raise CrevalError(f"--out {given}: {blocked} is a file, so nothing can be written under it",
                          "give a file path (FILE.csv or FILE.jsonl) in a folder, or a folder to write into")
    if p.exists() and not p.is_file():
        raise CrevalError(f"--out {given} exists and is not a regular file", "give a file path or a folder")
    if str(p) != str(getattr(args, "out_settled", "")):      # said once, when the command line is settled
        guard_output(p, getattr(args, "file", None), warn=lambda m: print(f"creval: warning: {m}", file=sys.stderr))
    args.out = args.out_settled = str(p)


def _with_out(fn):
    """The command ``fn`` with its ``--out`` settled first (:func:`out_file`)."""
    def run(args):
        out_file(args)
        return fn(args)
    return run


def finish(args, table: TextTable, per_text: list[dict]) -> None:
    """Write ``--out`` (one row per text: its id, the ``--keep`` columns of the input, then the measure)."""
    if getattr(args, "out", None):
        out_file(args)                      # settled already by the command line; a direct caller's folder too
        keep = getattr(args, "keep", None) or []
        kept = [table.column(c) for c in keep]
        rows = [{"id": k, **{c: v[i] for c, v in zip(keep, kept)}, **r}
                for i, (k, r) in enumerate(zip(table.ids, per_text))]
        print(f"wrote {len(rows)} rows to {write_rows(args.out, rows)}", file=sys.stderr)


def bar(args, total: int, what: str):
    """A progress bar with rate and time left on stderr (none with ``--quiet``)."""
    return tqdm(total=total, desc=what, unit="text", disable=bool(getattr(args, "quiet", False)), file=sys.stderr)


def cmd_diversity(args) -> int:
    table = read(args)
    texts = table.texts
    if len(texts) < 2:
        raise CrevalError(f"{args.file}: diversity needs at least 2 texts, found {len(texts)}", "add more texts")
    d = diversity(texts)
    per = item_originality(texts, bleu=len(texts) <= 500)
    warn(P.saturation(per["distinct_1"], 1.0, "distinct-1 of the text alone", share=0.5))
    finish(args, table, per.to_dict("records"))
    if args.json:
        print(json.dumps(d))
        return 0
    print(f"texts                              {d['n']}")
    print(f"average cosine similarity          {d['cosine']:.4f}   (higher = less diverse)")
    print(f"self-BLEU                          {d['self_bleu']:.4f}   (higher = less diverse)")
    print(f"distinct-1                         {d['distinct_1']:.4f}   (higher = more diverse)")
    print(f"distinct-2                         {d['distinct_2']:.4f}   (higher = more diverse)")
    return 0


def cmd_novelty(args) -> int:
    table = read(args)
    texts = table.texts
    qs = [args.question or q or "" for q in questions(table)]
    judge = NoveltyJudge(load_model(args.judge_model), domain=args.domain)
    r = rank_by_novelty(list(zip(qs, texts)), judge, seed=args.seed)
    n = len(texts)
    rank = {i: k for k, i in enumerate(r.order, start=1)}
    finish(args, table, [{"novelty_rank": rank[i]} for i in range(n)])
    print(f"rank  {'id':>6}  text (most novel first; {n} texts)")
    for k, i in enumerate(r.order, start=1):
        t = texts[i].replace("\n", " ")
        print(f"{k:>4}  {table.ids[i]:>6}  {t[:100]}")
    print(f"comparisons: {r.comparisons} (each asked in both orders: {r.llm_calls} judge calls; "
          f"{r.ties} ties where the orders disagreed); bubble sort would need {n * (n - 1) // 2}")
    return 0


def ci_reference(args, table: TextTable, Ls) -> tuple[NgramIndex, list, str]:
    """The index the texts are scored against, each text's excluded group, and a line saying which."""
    texts = table.texts
    if args.reference != "pool":
        if args.leave == "group":
            raise CrevalError("--leave group needs --reference pool", "drop --leave group, or --reference pool")
        return NgramIndex.build(folder_documents(args.reference), Ls, str(args.reference)), [None] * len(texts), ""
    if args.leave == "group":
        if not args.group:
            raise CrevalError("--leave group needs --group COL", "name the column that groups the texts")
        groups = [str(g) for g in table.column(args.group)]
        return (NgramIndex.build(list(zip(groups, texts)), Ls, "file-pool"), groups,
                f"; each text against the texts of the OTHER groups of column {args.group!r} (leave-group-out)")
    return (NgramIndex.build(list(zip(table.ids, texts)), Ls, "file-pool"), list(table.ids),
            "; each text against the OTHER texts (leave-own-item-out)")


def cmd_ci(args) -> int:
    table = read(args)
    texts = table.texts
    lo, hi = args.L
    if lo < 1 or hi < lo:
        raise CrevalError(f"--L {lo} {hi}: not a range of n-gram lengths", "give two lengths lo <= hi, e.g. --L 5 7")
    Ls = range(lo, hi + 1)
    idx, groups, how = ci_reference(args, table, Ls)
    recs = C.creativity_index_many(texts, idx, Ls, args.agg, groups)
    warn(P.saturation([r.ci for r in recs], P.ci_bound(Ls, args.agg), "the creativity index"))
    finish(args, table, [{"ci": r.ci, "n_tokens": r.n_tokens, **{f"uniq_{L}": v for L, v in r.l_uniq.items()}}
                         for r in recs])
    if args.json:
        for k, r in zip(table.ids, recs):
            print(json.dumps({"id": k, **r.to_dict()}))
        return 0
    ref = idx.describe()
    print(f"reference {ref['reference']} ({ref['docs']} docs, {ref['tokens']} words, sha256 {ref['reference_hash']}); "
          f"CI = {args.agg} of uniq_L, L = {lo}..{hi}{how}")
    print(f"{'id':>6}  {'CI':>6}  {'words':>5}  text (reused spans in [brackets])")
    for k, t, r, g in zip(table.ids, texts, recs, groups):
        shown = C.highlight(t, idx, lo, g)
        print(f"{k:>6}  {r.ci:6.3f}  {r.n_tokens:>5}  {shown[:110]}")
    print(f"mean CI {sum(r.ci for r in recs) / len(recs):.3f} over {len(recs)} texts")
    return 0


def cmd_ppl(args) -> int:
    table = read(args)
    texts = table.texts
    ctx = [args.context or q for q in questions(table)] if (args.conditional or args.context) else None
    model = load_model(args.model)
    with bar(args, len(texts), f"perplexity under {model.name}") as b:
        recs = P.perplexity_each(model, texts, ctx, step=lambda: b.update(1),
                                 width=units.width(args.model, scoring=True))
    finish(args, table, [{"ppl": r.ppl, "bits_per_byte": r.bits_per_byte, "n_tokens": r.n_tokens,
                          "n_bytes": r.n_bytes, "model": r.model} for r in recs])
    print(f"{'id':>6}  {'PPL':>8}  {'bits/byte':>9}  {'tokens':>6}  text" + ("   (given its question)" if ctx else ""))
    for k, t, r in zip(table.ids, texts, recs):
        print(f"{k:>6}  {r.ppl:8.2f}  {r.bits_per_byte:9.3f}  {r.n_tokens:>6}  {t.replace(chr(10), ' ')[:80]}")
    return 0


def cmd_templates(args) -> int:
    table = read(args)
    texts = table.texts
    tagged = T.pos_tag(texts)
    st = T.template_stats(tagged, texts, n=args.n, top_n=args.top, mode="compat" if args.compat else "sequence")
    warn(P.saturation(st["tpt"], 0.0, "templates per token", share=0.5))
    finish(args, table, [{"templates_per_token": t, "has_template": h} for t, h in zip(st["tpt"], st["has"])])
    kind = "compat: surface strings" if args.compat else "tag sequences"
    print(f"texts {len(texts)}; templates = top {args.top} POS {args.n}-grams ({kind})")
    print(f"share of texts with >= 1 template   {100 * st['rate']:.1f}%")
    print(f"templates per token (mean)          {st['tpt_mean']:.4f}")
    print(f"CR-POS (gzip ratio of POS tags)     {st['cr_pos']:.3f}   (lower = more varied syntax)")
    print("most frequent templates:")
    for t, c in st["templates"][:args.show]:
        print(f"  {c:>5}  {' '.join(t)}")
    return 0


def cmd_rubric(args) -> int:
    table = read(args)
    qs = questions(table)
    if args.domain == "ps" and not any(args.question or q for q in qs):
        raise CrevalError(f"{args.file}: the ps rubric needs each solution's problem",
                          "add a question field/column, or give --question")
    items = [{"id": k, "text": t, "problem": args.question or q or ""} for k, t, q in zip(table.ids, table.texts, qs)]
    recs = rubric_judge(load_model(args.judge_model), items, args.domain, analysis_tokens=args.tokens)
    names = [a for a, _, _ in ASPECTS[args.domain]]
    finish(args, table, [{**{n: r.scores[n] for n in names}, "state": r.state, "via": r.via} for r in recs])
    print(f"{'id':>6}  " + "  ".join(f"{n[:14]:>14}" for n in names) + "  state")
    for r in recs:
        vals = ["      unparsed" if r.scores[n] is None else f"{r.scores[n]:14.2f}" for n in names]
        print(f"{r.item_id:>6}  " + "  ".join(vals) + f"  {r.state} ({r.via})")
    return 0


def defaults(params: str | None = None):
    """The config the defaults come from: the Config defaults, or a parameter profile's values."""
    if not params:
        return RethinkingConfig()
    return RethinkingConfig.from_params(effective_params(load_params(params)), where=str(params))


def fill_defaults(args):
    """``args`` with every option left at ``None`` taken from ``--params`` (or the Config defaults)."""
    cfg = defaults(getattr(args, "params", None))
    fill = {"L": [cfg.rethink_ci_l_min, cfg.rethink_ci_l_max], "agg": cfg.rethink_ci_agg,
            "n": cfg.rethink_template_n, "top": cfg.rethink_template_top, "tokens": cfg.rethink_judge_tokens,
            "seed": cfg.seed, "model": cfg.model, "judge_model": cfg.judge_model}
    for k, v in fill.items():
        if getattr(args, k, "absent") is None:
            setattr(args, k, v)
    return args


def _with_profile(fn):
    """The command ``fn`` run on :func:`fill_defaults` of its arguments."""
    return lambda args: fn(fill_defaults(args))


def table_options(p) -> None:
    """The options every metric takes: the text and id columns, the per-text output, quiet."""
    p.add_argument("--text", default="text", metavar="COL", help="column holding the texts (default: text)")
    p.add_argument("--id", default=None, metavar="COL",
                   help="column of ids, echoed in every output (default: a column named id if the file has one, "
                        "else the row number from 0)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write one row per text, id first, to FILE (.csv, or .jsonl for JSON lines; a folder: "
                        "FILE-METRIC.csv inside it)")
    p.add_argument("--keep", nargs="+", default=None, metavar="COL",
                   help="input columns copied into --out beside the id (e.g. --keep author rating)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def profile_option(p) -> None:
    p.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")


FILE_HELP = ".txt (one text per line), .jsonl or .csv (a text column; see --text, --id)"


def register(subparsers) -> None:
    d0 = RethinkingConfig()
    p = subparsers.add_parser("metrics", help="diversity, novelty, creativity index, perplexity, templates, "
                                              "rubric judge of texts",
                              description="Measures of a set of texts in a file: diversity, pairwise LLM novelty, "
                                          "and chapter 06's creativity index, perplexity, syntactic templates and "
                                          "rubric judge. Every metric takes --text COL, --id COL and --out "
                                          "FILE.csv|FILE.jsonl (one row per text), e.g. `creval metrics ppl "
                                          "stories.csv --id story_id --text story --out ppl.csv`.")
    sub = p.add_subparsers(dest="metric", metavar="METRIC")
    d = sub.add_parser("diversity", help="cosine similarity, self-BLEU, distinct-1/2 of the texts in FILE")
    d.add_argument("file", help=FILE_HELP)
    d.add_argument("--json", action="store_true", help="print one JSON object (the set's figures)")
    table_options(d)
    d.set_defaults(func=_with_out(cmd_diversity))
    n = sub.add_parser("novelty", help="rank the texts in FILE by novelty with a pairwise LLM judge")
    n.add_argument("file", help=FILE_HELP + "; an optional question column")
    n.add_argument("--judge-model", default=None, help=f"judge model (default: judge_model, {d0.judge_model})")
    renamed(n, "--model", "--judge-model")
    n.add_argument("--domain", default="default", help="novelty definition: macgyver, aut, hypogen, bookmia, default")
    n.add_argument("--question", default=None, help="the task every text answers (overrides the file's)")
    n.add_argument("--seed", type=int, default=None,
                   help=f"seed of the input shuffle (decides the order of ties; default: seed, {d0.seed})")
    table_options(n)
    profile_option(n)
    n.set_defaults(func=_with_out(_with_profile(cmd_novelty)))
    c = sub.add_parser("ci", help="creativity index of the texts in FILE (exact n-gram reuse, Lu et al.)")
    c.add_argument("file", help=FILE_HELP)
    c.add_argument("--reference", default="pool",
                   help="pool (the file's own texts; see --leave) or a folder of .txt reference texts")
    c.add_argument("--leave", choices=["own", "group"], default="own",
                   help="with the pool: leave each text's own item out (own, default), or its whole group "
                        "(group: the other texts of its --group, e.g. answers to the same prompt)")
    c.add_argument("--group", default=None, metavar="COL", help="column grouping the texts (for --leave group)")
    c.add_argument("--L", nargs=2, type=int, default=None, metavar=("LO", "HI"),
                   help=f"n-gram lengths (default: rethink_ci_l_min rethink_ci_l_max, {d0.rethink_ci_l_min} "
                        f"{d0.rethink_ci_l_max})")
    c.add_argument("--agg", choices=["mean", "sum"], default=None,
                   help=f"aggregation over L (default: rethink_ci_agg, {d0.rethink_ci_agg}; paper: mean)")
    c.add_argument("--json", action="store_true", help="one JSON record per text")
    table_options(c)
    profile_option(c)
    c.set_defaults(func=_with_out(_with_profile(cmd_ci)))
    pp = sub.add_parser("ppl", help="perplexity and bits per byte of the texts in FILE under a model")
    pp.add_argument("file", help=FILE_HELP + "; an optional question column")
    pp.add_argument("--ppl-model", dest="model", default=None, metavar="MODEL",
                    help=f"scoring model (default: model, {d0.model}, as chapter 06; on a CPU smollm2-135m-hf "
                         "scores the same weights about 3x faster, as creval grade does)")
    renamed(pp, "--model", "--ppl-model")         # --model means the model under test everywhere else
    pp.add_argument("--conditional", action="store_true", help="condition each text on its question field")
    pp.add_argument("--context", default=None, help="one context for every text (implies --conditional)")
    table_options(pp)
    profile_option(pp)
    pp.set_defaults(func=_with_out(_with_profile(cmd_ppl)))
    tp = sub.add_parser("templates", help="syntactic templates (POS n-grams) and CR-POS of the texts in FILE")
    tp.add_argument("file", help=FILE_HELP)
    tp.add_argument("--n", type=int, default=None,
                    help=f"template length in POS tags (default: rethink_template_n, {d0.rethink_template_n})")
    tp.add_argument("--top", type=int, default=None, help=f"most frequent n-grams kept as templates "
                                                          f"(default: rethink_template_top, {d0.rethink_template_top})")
    tp.add_argument("--compat", action="store_true", help="the diversity library's surface-string matching")
    tp.add_argument("--show", type=int, default=10, help="templates listed")
    table_options(tp)
    profile_option(tp)
    tp.set_defaults(func=_with_out(_with_profile(cmd_templates)))
    r = sub.add_parser("rubric", help="rubric LLM judge scores (creative writing, problem solving, research ideas)")
    r.add_argument("file", help=FILE_HELP + "; a question column = the problem")
    r.add_argument("--domain", choices=["cw", "ps", "ri"], default="ps", help="rubric: cw, ps or ri")
    r.add_argument("--judge-model", default=None, help=f"judge model (default: judge_model, {d0.judge_model})")
    renamed(r, "--model", "--judge-model")
    r.add_argument("--question", default=None, help="the problem every solution answers (ps)")
    r.add_argument("--tokens", type=int, default=None,
                   help=f"token budget of the analysis turn (default: rethink_judge_tokens, {d0.rethink_judge_tokens})")
    table_options(r)
    profile_option(r)
    r.set_defaults(func=_with_out(_with_profile(cmd_rubric)))
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])
