"""``creval judge``: convergent-creativity verdicts for the solutions of a ``creval divergent`` run."""
from __future__ import annotations

import argparse
from pathlib import Path

from creval.core.errors import CrevalError
from creval.judges.registry import judge_names
from creval.studies.convergent.config import ConvergentConfig

C = ConvergentConfig()     # the CLI's defaults are the study's (a test holds them equal)


def register(sub) -> None:
    p = sub.add_parser("judge", help="judge solutions against the domain's criteria (convergent creativity)",
                       description="Reads DIR/problems.jsonl written by `creval divergent` and writes verdicts.jsonl, "
                                   "transcripts.jsonl and manifest.json to --out (resumable).")
    p.add_argument("--judge", default=C.bench_judge, choices=judge_names())
    p.add_argument("--model", default=C.judge_model, help="judge model (params/models/<name>.yaml)")
    p.add_argument("--domain", default="macgyver", help="domain whose criteria are judged")
    p.add_argument("--solutions", required=True, help="folder of a `creval divergent` run (has problems.jsonl)")
    p.add_argument("--out", required=True, help="run folder for verdicts")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N solutions")
    p.add_argument("--threshold", type=float, default=C.judge_threshold, help="early-exit mean confidence T (retrieval)")
    p.add_argument("--k", type=int, default=C.judge_k, help="fragments retrieved per discussion turn")
    p.add_argument("--j", type=int, default=C.judge_j, help="fragments retrieved per confidence turn")
    p.add_argument("--l", type=int, default=C.judge_l, help="fragments retrieved for the verdict")
    p.add_argument("--max-rounds", type=int, default=C.judge_max_rounds)
    p.add_argument("--word-limit", type=int, default=C.judge_word_limit, help="words per discussion turn (retrieval and chateval)")
    p.add_argument("--retries", type=int, default=C.judge_retries, help="format re-asks before a verdict counts as unparsed")
    p.add_argument("--verdict-via", default=C.judge_verdict_via, choices=["text", "logprobs", "text+logprobs"])
    p.add_argument("--embedder", default=None, help="sentence-transformers model for fragments (default bundled MiniLM)")
    p.add_argument("--seed", type=int, default=C.seed)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from creval.domains import get_domain
    from creval.models.registry import load_model
    from creval.core.io import read_jsonl
    from creval.judges import judge_settings, run_judge

    src = Path(args.solutions) / "problems.jsonl"
    if not src.exists():
        raise CrevalError(f"{src} does not exist", "run `creval divergent --out DIR` first and pass that DIR")
    rows = [r for r in read_jsonl(src) if r.get("solution")]
    if args.limit is not None:
        rows = rows[:args.limit]
    if not rows:
        raise CrevalError(f"{src} has no solutions", "check the divergent run finished")
    crits = get_domain(args.domain).criteria
    model = load_model(args.model)
    settings = dict(threshold=args.threshold, k=args.k, j=args.j, l=args.l, max_rounds=args.max_rounds,
                    word_limit=args.word_limit, retries=args.retries, verdict_via=args.verdict_via,
                    embedder=args.embedder, seed=args.seed)
    st = run_judge(args.judge, model, rows, crits, args.out, **judge_settings(args.judge, settings))
    df = st.frame("verdicts")
    print(f"{len(df)} verdicts in {args.out}/verdicts.jsonl; unparsed {int(df.unparsed.sum())}; "
          f"tokens in/out per pair {df.groupby('pair_id').input_tokens.sum().mean():.0f}/"
          f"{df.groupby('pair_id').output_tokens.sum().mean():.0f}")
    return 0
