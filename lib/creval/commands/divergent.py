"""``creval divergent``: measure divergent creativity (step-wise semantic entropy) on one domain."""
from __future__ import annotations

import math

from creval.studies.divergent.config import DivergentConfig

D = DivergentConfig()      # the CLI's defaults are the study's (a test holds them equal)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "divergent", help="solve problems step by step and record semantic entropy per step",
        description="Solve LIMIT problems of DOMAIN with MODEL one step at a time; at every step draw N candidate "
                    "next steps, cluster them by bidirectional entailment and record semantic entropy. Writes "
                    "steps.jsonl, problems.jsonl and manifest.json to OUT; rerunning resumes.")
    p.add_argument("--model", default=D.model, help="registered model name (default: %(default)s)")
    p.add_argument("--domain", default=D.domains[0], help="macgyver | hypogen | bookmia")
    p.add_argument("--limit", type=int, default=D.limit, help="number of problems (default: %(default)s)")
    p.add_argument("--n", type=int, default=D.n_samples, help="samples per step (paper: 10)")
    p.add_argument("--out", required=True, help="run folder")
    p.add_argument("--temperature", type=float, default=D.temperature)
    p.add_argument("--top-p", type=float, default=D.top_p)
    p.add_argument("--max-steps", type=int, default=D.max_steps, help="upper bound of the step budget")
    p.add_argument("--max-step-tokens", type=int, default=D.max_step_tokens)
    p.add_argument("--nli", default=D.nli, help="minilm-sick | minilm-cosine | deberta | hf:<id> | llm:<model>")
    p.add_argument("--lenient", action="store_true", help="non-strict entailment (no contradiction in either "
                                                          "direction and not both neutral) instead of strict")
    p.add_argument("--seed", type=int, default=D.seed, help="sampling seed")
    p.add_argument("--data-seed", type=int, default=D.data_seed, help="dataset shuffle before the first LIMIT")
    p.add_argument("--source", default=None, help="local dataset file or folder (else env var, download, sample)")
    p.set_defaults(func=run)


def run(args) -> int:
    from creval.studies.divergent.run import run_divergent
    store = run_divergent(args.model, args.domain, args.limit, args.n, args.out, temperature=args.temperature,
                          top_p=args.top_p, max_steps=args.max_steps, max_step_tokens=args.max_step_tokens,
                          nli=args.nli, strict=not args.lenient, seed=args.seed, source=args.source,
                          data_seed=args.data_seed)
    probs = store.read("problems")
    se = [p["mean_semantic_entropy"] for p in probs if not math.isnan(p["mean_semantic_entropy"])]
    mean = sum(se) / len(se) if se else float("nan")
    print(f"{len(probs)} problems, {len(store.read('steps'))} steps from {store.params['data_source']}; "
          f"mean semantic entropy {mean:.3f} nats -> {store.root}")
    return 0
