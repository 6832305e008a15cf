"""``creval divergent``: measure divergent creativity (step-wise semantic entropy) on one domain."""
from __future__ import annotations

import math


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "divergent", help="solve problems step by step and record semantic entropy per step",
        description="Solve LIMIT problems of DOMAIN with MODEL one step at a time; at every step draw N candidate "
                    "next steps, cluster them by bidirectional entailment and record semantic entropy. Writes "
                    "steps.jsonl, problems.jsonl and manifest.json to OUT; rerunning resumes.")
    p.add_argument("--model", default="smollm2-135m", help="registered model name (default: smollm2-135m)")
    p.add_argument("--domain", default="macgyver", help="macgyver | hypogen | bookmia")
    p.add_argument("--limit", type=int, default=3, help="number of problems")
    p.add_argument("--n", type=int, default=10, help="samples per step (paper: 10)")
    p.add_argument("--out", required=True, help="run folder")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-p", type=float, default=0.9)
    p.add_argument("--max-steps", type=int, default=5, help="upper bound of the step budget")
    p.add_argument("--max-step-tokens", type=int, default=48)
    p.add_argument("--nli", default="minilm-sick", help="minilm-sick | deberta | llm:<model>")
    p.add_argument("--lenient", action="store_true", help="non-strict entailment (no contradiction in either "
                                                          "direction and not both neutral) instead of strict")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")
    p.add_argument("--source", default=None, help="local dataset file or folder (else env var, download, sample)")
    p.set_defaults(func=run)


def run(args) -> int:
    from creval.studies.divergent.run import run_divergent
    store = run_divergent(args.model, args.domain, args.limit, args.n, args.out, temperature=args.temperature,
                          top_p=args.top_p, max_steps=args.max_steps, max_step_tokens=args.max_step_tokens,
                          nli=args.nli, strict=not args.lenient, seed=args.seed, source=args.source)
    probs = store.read("problems")
    se = [p["mean_semantic_entropy"] for p in probs if not math.isnan(p["mean_semantic_entropy"])]
    mean = sum(se) / len(se) if se else float("nan")
    print(f"{len(probs)} problems, {len(store.read('steps'))} steps from {store.params['data_source']}; "
          f"mean semantic entropy {mean:.3f} nats -> {store.root}")
    return 0
