"""``creval judge``: convergent-creativity verdicts for the solutions of a ``creval divergent`` run."""
from __future__ import annotations

import argparse
from pathlib import Path

from creval.core.errors import CrevalError


def register(sub) -> None:
    p = sub.add_parser("judge", help="judge solutions against the domain's criteria (convergent creativity)",
                       description="Reads DIR/problems.jsonl written by `creval divergent` and writes verdicts.jsonl, "
                                   "transcripts.jsonl and manifest.json to --out (resumable).")
    p.add_argument("--judge", default="retrieval", choices=["retrieval", "chateval", "zero-shot", "few-shot", "cot"])
    p.add_argument("--model", default="smollm2-135m", help="judge model (params/models/<name>.yaml)")
    p.add_argument("--domain", default="macgyver", help="domain whose criteria are judged")
    p.add_argument("--solutions", required=True, help="folder of a `creval divergent` run (has problems.jsonl)")
    p.add_argument("--out", required=True, help="run folder for verdicts")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N solutions")
    p.add_argument("--threshold", type=float, default=0.5, help="early-exit mean confidence T (retrieval)")
    p.add_argument("--k", type=int, default=5, help="fragments retrieved per discussion turn")
    p.add_argument("--j", type=int, default=4, help="fragments retrieved per confidence turn")
    p.add_argument("--l", type=int, default=8, help="fragments retrieved for the verdict")
    p.add_argument("--max-rounds", type=int, default=2)
    p.add_argument("--word-limit", type=int, default=150, help="words per discussion turn (retrieval and chateval)")
    p.add_argument("--retries", type=int, default=2, help="format re-asks before a verdict counts as unparsed")
    p.add_argument("--verdict-via", default="text", choices=["text", "logprobs", "text+logprobs"])
    p.add_argument("--embedder", default=None, help="sentence-transformers model for fragments (default bundled MiniLM)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from creval.domains import get_domain
    from creval.models.registry import load_model
    from creval.core.io import read_jsonl
    from creval.judges import run_judge

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
    st = run_judge(args.judge, model, rows, crits, args.out, threshold=args.threshold, k=args.k, j=args.j, l=args.l,
                   max_rounds=args.max_rounds, word_limit=args.word_limit, retries=args.retries,
                   verdict_via=args.verdict_via, embedder=args.embedder, seed=args.seed)
    df = st.frame("verdicts")
    print(f"{len(df)} verdicts in {args.out}/verdicts.jsonl; unparsed {int(df.unparsed.sum())}; "
          f"tokens in/out per pair {df.groupby('pair_id').input_tokens.sum().mean():.0f}/"
          f"{df.groupby('pair_id').output_tokens.sum().mean():.0f}")
    return 0
