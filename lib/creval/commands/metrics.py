"""``creval metrics diversity FILE`` and ``creval metrics novelty FILE --model M``.

FILE holds one text per item: ``.txt`` (one per non-empty line), ``.jsonl`` (a ``text`` field per row) or
``.csv`` (a ``text`` column). For ``novelty`` an optional ``question`` field/column gives each text's task
(``--question`` sets one for all).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from creval.core.errors import CrevalError


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
    from creval.measures.diversity import diversity
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
    from creval.judges.novelty import NoveltyJudge, rank_by_novelty
    from creval.models.registry import load_model
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


def register(subparsers) -> None:
    p = subparsers.add_parser("metrics", help="diversity and novelty of a set of texts",
                              description="Diversity metrics and pairwise LLM novelty ranking of texts in a file.")
    sub = p.add_subparsers(dest="metric", metavar="METRIC")
    d = sub.add_parser("diversity", help="cosine similarity, self-BLEU, distinct-1/2 of the texts in FILE")
    d.add_argument("file", help=".txt (one text per line), .jsonl (field text) or .csv (column text)")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=cmd_diversity)
    n = sub.add_parser("novelty", help="rank the texts in FILE by novelty with a pairwise LLM judge")
    n.add_argument("file", help=".txt, .jsonl (fields text, question) or .csv (columns text, question)")
    n.add_argument("--model", default="smollm2-135m", help="judge model (params/models/<name>.yaml)")
    n.add_argument("--domain", default="default", help="novelty definition: macgyver, aut, hypogen, bookmia, default")
    n.add_argument("--question", default=None, help="the task every text answers (overrides the file's)")
    n.add_argument("--seed", type=int, default=0, help="seed of the input shuffle (decides the order of ties)")
    n.set_defaults(func=cmd_novelty)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])
