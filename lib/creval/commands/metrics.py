"""``creval metrics diversity|novelty|ci|ppl|templates|rubric FILE``.

``ci``, ``ppl``, ``templates`` and ``rubric`` are the measures of chapter 06 (Rethinking creativity
evaluation): creativity index against the file's other texts or a folder of reference texts, perplexity
(optionally given each row's ``question``), syntactic templates and CR-POS, and the rubric LLM judge.

Every default comes from the studies' Configs (:class:`~creval.studies.rethinking.config.RethinkingConfig`):
the n-gram range and aggregation of the creativity index, the template length and count, the model under
test (``model``, for perplexity) and the LLM behind every judge (``judge_model``, for the rubric and novelty
judges), the judge's analysis budget and the seed. ``--params FILE`` takes them from a parameter profile.

FILE holds one text per item: ``.txt`` (one per non-empty line), ``.jsonl`` (a ``text`` field per row) or
``.csv`` (a ``text`` column). For ``novelty`` an optional ``question`` field/column gives each text's task
(``--question`` sets one for all).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from creval.book.params import effective_params, load_params
from creval.core.errors import CrevalError
from creval.judges.novelty import NoveltyJudge, rank_by_novelty
from creval.judges.rubric import ASPECTS, rubric_judge
from creval.measures import creativity_index as C
from creval.measures import templates as T
from creval.measures.diversity import diversity
from creval.measures.ngram_index import NgramIndex, folder_documents
from creval.measures.perplexity import perplexity_many
from creval.models.registry import load_model
from creval.studies.rethinking.config import RethinkingConfig


def read_texts(path: str | Path) -> tuple[list[str], list[str | None]]:
    """(texts, questions) from a .txt/.jsonl/.csv file; any problem is a CrevalError naming the file."""
    p = Path(path)
    if not p.exists():
        raise CrevalError(f"{p}: no such file", "give a .txt, .jsonl or .csv file of texts")
    try:
        raw = p.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as e:
        raise CrevalError(f"{p}: cannot read it as UTF-8 text ({e})", "save the file as UTF-8") from None
    suffix = p.suffix.lower()
    texts, questions = [], []
    if suffix == ".txt":
        texts = [line.strip() for line in raw.splitlines() if line.strip()]
        questions = [None] * len(texts)
    elif suffix == ".jsonl":
        for i, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise CrevalError(f"{p}: line {i} is not valid JSON", "one JSON object per line") from None
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise CrevalError(f"{p}: line {i} has no string field 'text'", 'write rows like {"text": "..."}')
            texts.append(row["text"])
            questions.append(row.get("question"))
    elif suffix == ".csv":
        rows = list(csv.DictReader(raw.splitlines()))
        if not rows or "text" not in rows[0]:
            raise CrevalError(f"{p}: no 'text' column", "add a header row with a column named text")
        texts = [r["text"] or "" for r in rows]
        questions = [r.get("question") for r in rows]
    else:
        raise CrevalError(f"{p}: unsupported file type {suffix or '(none)'}", "use .txt, .jsonl or .csv")
    if not texts:
        raise CrevalError(f"{p}: contains no texts", "put at least one text in it (two for diversity)")
    return texts, questions


def cmd_diversity(args) -> int:
    texts, _ = read_texts(args.file)
    if len(texts) < 2:
        raise CrevalError(f"{args.file}: diversity needs at least 2 texts, found {len(texts)}", "add more texts")
    d = diversity(texts)
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
    texts, questions = read_texts(args.file)
    qs = [args.question or q or "" for q in questions]
    judge = NoveltyJudge(load_model(args.model), domain=args.domain)
    r = rank_by_novelty(list(zip(qs, texts)), judge, seed=args.seed)
    n = len(texts)
    print(f"rank  item  text (most novel first; {n} texts)")
    for k, i in enumerate(r.order, start=1):
        t = texts[i].replace("\n", " ")
        print(f"{k:>4}  {i:>4}  {t[:100]}")
    print(f"comparisons: {r.comparisons} (each asked in both orders: {r.llm_calls} judge calls; "
          f"{r.ties} ties where the orders disagreed); bubble sort would need {n * (n - 1) // 2}")
    return 0


def cmd_ci(args) -> int:
    texts, _ = read_texts(args.file)
    lo, hi = args.L
    if lo < 1 or hi < lo:
        raise CrevalError(f"--L {lo} {hi}: not a range of n-gram lengths", "give two lengths lo <= hi, e.g. --L 5 7")
    if args.reference == "pool":
        idx = NgramIndex.build([(f"text-{i}", t) for i, t in enumerate(texts)], range(lo, hi + 1), "file-pool")
        groups = [f"text-{i}" for i in range(len(texts))]
    else:
        idx = NgramIndex.build(folder_documents(args.reference), range(lo, hi + 1), str(args.reference))
        groups = [None] * len(texts)
    recs = C.creativity_index_many(texts, idx, range(lo, hi + 1), args.agg, groups)
    if args.json:
        for r in recs:
            print(json.dumps(r.to_dict()))
        return 0
    ref = idx.describe()
    print(f"reference {ref['reference']} ({ref['docs']} docs, {ref['tokens']} words, sha256 {ref['reference_hash']}); "
          f"CI = {args.agg} of uniq_L, L = {lo}..{hi}"
          + ("; each text against the OTHER texts" if args.reference == "pool" else ""))
    print(f"{'item':>4}  {'CI':>6}  {'words':>5}  text (reused spans in [brackets])")
    for i, (t, r, g) in enumerate(zip(texts, recs, groups)):
        shown = C.highlight(t, idx, lo, g)
        print(f"{i:>4}  {r.ci:6.3f}  {r.n_tokens:>5}  {shown[:110]}")
    print(f"mean CI {sum(r.ci for r in recs) / len(recs):.3f} over {len(recs)} texts")
    return 0


def cmd_ppl(args) -> int:
    texts, questions = read_texts(args.file)
    ctx = [args.context or q for q in questions] if (args.conditional or args.context) else None
    recs = perplexity_many(load_model(args.model), texts, ctx)
    print(f"{'item':>4}  {'PPL':>8}  {'bits/byte':>9}  {'tokens':>6}  text"
          + ("   (given its question)" if ctx else ""))
    for i, (t, r) in enumerate(zip(texts, recs)):
        print(f"{i:>4}  {r.ppl:8.2f}  {r.bits_per_byte:9.3f}  {r.n_tokens:>6}  {t.replace(chr(10), ' ')[:80]}")
    return 0


def cmd_templates(args) -> int:
    texts, _ = read_texts(args.file)
    tagged = T.pos_tag(texts)
    st = T.template_stats(tagged, texts, n=args.n, top_n=args.top, mode="compat" if args.compat else "sequence")
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
    texts, questions = read_texts(args.file)
    if args.domain == "ps" and not any(args.question or q for q in questions):
        raise CrevalError(f"{args.file}: the ps rubric needs each solution's problem",
                          "add a question field/column, or give --question")
    items = [{"id": str(i), "text": t, "problem": args.question or q or ""}
             for i, (t, q) in enumerate(zip(texts, questions))]
    recs = rubric_judge(load_model(args.model), items, args.domain, analysis_tokens=args.tokens)
    names = [a for a, _, _ in ASPECTS[args.domain]]
    print(f"{'item':>4}  " + "  ".join(f"{n[:14]:>14}" for n in names) + "  state")
    for r in recs:
        vals = ["      unparsed" if r.scores[n] is None else f"{r.scores[n]:14.2f}" for n in names]
        print(f"{int(r.item_id):>4}  " + "  ".join(vals) + f"  {r.state} ({r.via})")
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
            "seed": cfg.seed, "model": cfg.model if args.metric == "ppl" else cfg.judge_model}
    for k, v in fill.items():
        if getattr(args, k, "absent") is None:
            setattr(args, k, v)
    return args


def _with_profile(fn):
    """The command ``fn`` run on :func:`fill_defaults` of its arguments."""
    return lambda args: fn(fill_defaults(args))


def register(subparsers) -> None:
    d0 = RethinkingConfig()
    p = subparsers.add_parser("metrics", help="diversity, novelty, creativity index, perplexity, templates, "
                                              "rubric judge of texts",
                              description="Measures of a set of texts in a file: diversity, pairwise LLM novelty, "
                                          "and chapter 06's creativity index, perplexity, syntactic templates and "
                                          "rubric judge.")
    sub = p.add_subparsers(dest="metric", metavar="METRIC")
    d = sub.add_parser("diversity", help="cosine similarity, self-BLEU, distinct-1/2 of the texts in FILE")
    d.add_argument("file", help=".txt (one text per line), .jsonl (field text) or .csv (column text)")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=cmd_diversity)
    n = sub.add_parser("novelty", help="rank the texts in FILE by novelty with a pairwise LLM judge")
    n.add_argument("file", help=".txt, .jsonl (fields text, question) or .csv (columns text, question)")
    n.add_argument("--model", default=None, help=f"judge model (default: judge_model, {d0.judge_model})")
    n.add_argument("--domain", default="default", help="novelty definition: macgyver, aut, hypogen, bookmia, default")
    n.add_argument("--question", default=None, help="the task every text answers (overrides the file's)")
    n.add_argument("--seed", type=int, default=None,
                   help=f"seed of the input shuffle (decides the order of ties; default: seed, {d0.seed})")
    n.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")
    n.set_defaults(func=_with_profile(cmd_novelty))
    c = sub.add_parser("ci", help="creativity index of the texts in FILE (exact n-gram reuse, Lu et al.)")
    c.add_argument("file", help=".txt (one text per line), .jsonl (field text) or .csv (column text)")
    c.add_argument("--reference", default="pool",
                   help="pool (each text against the file's other texts) or a folder of .txt reference texts")
    c.add_argument("--L", nargs=2, type=int, default=None, metavar=("LO", "HI"),
                   help=f"n-gram lengths (default: rethink_ci_l_min rethink_ci_l_max, {d0.rethink_ci_l_min} "
                        f"{d0.rethink_ci_l_max})")
    c.add_argument("--agg", choices=["mean", "sum"], default=None,
                   help=f"aggregation over L (default: rethink_ci_agg, {d0.rethink_ci_agg}; paper: mean)")
    c.add_argument("--json", action="store_true", help="one JSON record per text")
    c.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")
    c.set_defaults(func=_with_profile(cmd_ci))
    pp = sub.add_parser("ppl", help="perplexity and bits per byte of the texts in FILE under a model")
    pp.add_argument("file", help=".txt, .jsonl (fields text, question) or .csv")
    pp.add_argument("--model", default=None, help=f"scoring model (default: model, {d0.model})")
    pp.add_argument("--conditional", action="store_true", help="condition each text on its question field")
    pp.add_argument("--context", default=None, help="one context for every text (implies --conditional)")
    pp.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")
    pp.set_defaults(func=_with_profile(cmd_ppl))
    tp = sub.add_parser("templates", help="syntactic templates (POS n-grams) and CR-POS of the texts in FILE")
    tp.add_argument("file", help=".txt, .jsonl or .csv")
    tp.add_argument("--n", type=int, default=None,
                    help=f"template length in POS tags (default: rethink_template_n, {d0.rethink_template_n})")
    tp.add_argument("--top", type=int, default=None, help=f"most frequent n-grams kept as templates "
                                                          f"(default: rethink_template_top, {d0.rethink_template_top})")
    tp.add_argument("--compat", action="store_true", help="the diversity library's surface-string matching")
    tp.add_argument("--show", type=int, default=10, help="templates listed")
    tp.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")
    tp.set_defaults(func=_with_profile(cmd_templates))
    r = sub.add_parser("rubric", help="rubric LLM judge scores (creative writing, problem solving, research ideas)")
    r.add_argument("file", help=".txt, .jsonl (fields text, question = the problem) or .csv")
    r.add_argument("--domain", choices=["cw", "ps", "ri"], default="ps", help="rubric: cw, ps or ri")
    r.add_argument("--model", default=None, help=f"judge model (default: judge_model, {d0.judge_model})")
    r.add_argument("--question", default=None, help="the problem every solution answers (ps)")
    r.add_argument("--tokens", type=int, default=None,
                   help=f"token budget of the analysis turn (default: rethink_judge_tokens, {d0.rethink_judge_tokens})")
    r.add_argument("--params", default=None, metavar="FILE",
                   help="take the defaults from this parameter profile (default: the Config defaults)")
    r.set_defaults(func=_with_profile(cmd_rubric))
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])
