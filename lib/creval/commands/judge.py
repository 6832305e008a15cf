"""``creval judge FILE --out DIR``: convergent-creativity verdicts for your own problem-solution pairs.

The study of chapter 03 (every judge on chapter 02's solutions and on the human-labelled pairs) is
``creval run convergent``; this command scores a file of yours with one judge. FILE is ``.jsonl`` (one object
per line) or ``.csv`` (a header row); each row needs a problem (``problem_text``, ``problem`` or ``text``)
and a ``solution``, and may name it (``pair_id``, or ``problem_id`` and ``model``). A divergent run's
``problems.jsonl`` is such a file. Every default comes from the study's Config
(:class:`~creval.studies.convergent.config.ConvergentConfig`): the judge, the judge model and its settings.
``--out`` resumes: give each change of settings its own folder.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

from creval.commands import renamed
from creval.core.errors import CrevalError
from creval.core.io import read_jsonl
from creval.domains import get_domain
from creval.judges import judge_settings, run_judge
from creval.judges.registry import judge_names
from creval.judges.runner import pair_of
from creval.models.registry import load_model
from creval.models.width import width
from creval.studies.convergent.config import ConvergentConfig

C = ConvergentConfig()     # the CLI's defaults are the study's (a test holds them equal)


def read_pairs(path: str | Path) -> list[dict]:
    """The rows of a .jsonl or .csv file of problem-solution pairs; any problem is a CrevalError naming it."""
    p = Path(path)
    if not p.is_file():
        raise CrevalError(f"{p}: no such file", "give a .jsonl or .csv file of problems and solutions")
    suffix = p.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise CrevalError(f"{p}: unsupported file type {suffix or '(none)'}", "use .jsonl or .csv")
    try:
        if suffix == ".jsonl":
            rows = read_jsonl(p)            # a bad line is a CrevalError naming the file and the line
        else:
            with open(p, newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
    except UnicodeDecodeError as e:
        raise CrevalError(f"{p}: cannot read it as UTF-8 text ({e})", "save the file as UTF-8") from None
    rows = [{"problem_id": str(i), **r} for i, r in enumerate(rows, start=1) if isinstance(r, dict)]
    if not rows:
        raise CrevalError(f"{p}: contains no pairs", "put at least one problem and solution in it")
    seen: set[str] = set()
    for r in rows:
        try:
            pid = pair_of(r)[0]
        except CrevalError as e:
            raise CrevalError(f"{p}: {e.problem}", e.fix) from None
        if pid in seen:
            raise CrevalError(f"{p}: pair {pid} appears twice", "give each pair its own pair_id (or problem_id)")
        seen.add(pid)
    return rows


def register(sub) -> None:
    p = sub.add_parser("judge", help="judge your own solutions against a domain's criteria (convergent creativity)",
                       description="Reads FILE (.jsonl or .csv rows with a problem and a solution) and writes "
                                   "verdicts.jsonl, transcripts.jsonl and manifest.json to --out (resumable: "
                                   "one unit per pair, several at once on a server). "
                                   "The chapter's study is `creval run convergent`.")
    p.add_argument("file", help=".jsonl or .csv: problem_text (or problem, text) and solution per row")
    p.add_argument("--out", required=True, help="folder for the verdicts (one per judge setting)")
    p.add_argument("--method", default=C.convergent_bench_judge, choices=judge_names(),
                   help="how the judge judges (default: convergent_bench_judge, %(default)s)")
    renamed(p, "--judge", "--method")     # one meaning per flag: elsewhere --judge is the judge's model
    p.add_argument("--judge-model", default=C.judge_model, help="the LLM that judges (default: %(default)s)")
    renamed(p, "--model", "--judge-model")
    p.add_argument("--domain", default="macgyver", help="domain whose criteria are judged (default: %(default)s)")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N pairs")
    p.add_argument("--threshold", type=float, default=C.convergent_judge_threshold,
                   help="early-exit mean confidence T (retrieval)")
    p.add_argument("--k", type=int, default=C.convergent_judge_k, help="fragments retrieved per discussion turn")
    p.add_argument("--j", type=int, default=C.convergent_judge_j, help="fragments retrieved per confidence turn")
    p.add_argument("--l", type=int, default=C.convergent_judge_l, help="fragments retrieved for the verdict")
    p.add_argument("--max-rounds", type=int, default=C.convergent_judge_max_rounds)
    p.add_argument("--word-limit", type=int, default=C.convergent_judge_word_limit,
                   help="words per discussion turn (retrieval and chateval)")
    p.add_argument("--retries", type=int, default=C.convergent_judge_retries,
                   help="format re-asks before a verdict counts as unparsed")
    p.add_argument("--verdict-via", default=C.convergent_judge_verdict_via, choices=["text", "logprobs",
                                                                                     "text+logprobs"])
    p.add_argument("--embedder", default=None,
                   help="sentence-transformers model for fragments (default bundled MiniLM)")
    p.add_argument("--seed", type=int, default=C.seed)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    rows = read_pairs(args.file)
    if args.limit is not None:
        rows = rows[:args.limit]
    crits = get_domain(args.domain).criteria
    model = load_model(args.judge_model)
    settings = dict(threshold=args.threshold, k=args.k, j=args.j, l=args.l, max_rounds=args.max_rounds,
                    word_limit=args.word_limit, retries=args.retries, verdict_via=args.verdict_via,
                    embedder=args.embedder, seed=args.seed)
    st = run_judge(args.method, model, rows, crits, args.out, width=width(args.judge_model),
                   **judge_settings(args.method, settings))
    df = st.frame("verdicts")
    print(f"{len(df)} verdicts in {args.out}/verdicts.jsonl; unparsed {int(df.unparsed.sum())}; "
          f"tokens in/out per pair {df.groupby('pair_id').input_tokens.sum().mean():.0f}/"
          f"{df.groupby('pair_id').output_tokens.sum().mean():.0f}")
    return 0
