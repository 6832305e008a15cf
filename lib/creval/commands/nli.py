"""``creval nli``: train the offline NLI cross-encoder and measure NLI backends on held-out pairs."""
from __future__ import annotations

import json

from creval.measures.nli.evaluate import evaluate_nli
from creval.measures.nli.train import DEFAULTS, model_dir, train_minilm_sick


def register(subparsers) -> None:
    p = subparsers.add_parser("nli", help="entailment models: train minilm-sick, evaluate a backend")
    sub = p.add_subparsers(dest="nli_command", metavar="ACTION")

    t = sub.add_parser("train", help="fine-tune the bundled MiniLM on SICK (the 'minilm-sick' backend)")
    t.add_argument("--epochs", type=int, default=None, help="training epochs (default 2)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--force", action="store_true", help="retrain even if a trained model exists")
    t.set_defaults(func=_train)

    e = sub.add_parser("eval", help="agreement of an NLI backend with SICK test, MSRP test or our own sample")
    e.add_argument("--nli", default="minilm-sick",
                   help="minilm-sick | minilm-cosine | deberta | hf:<id or folder> | llm:<model name> "
                        "(default minilm-sick)")
    e.add_argument("--dataset", choices=["sick", "msrp", "sample"], default="sick",
                   help="sick | msrp (the bundled sample when they cannot be had) | sample")
    e.add_argument("--limit", type=int, default=200, help="random pairs to score (0 = all)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--json", action="store_true", help="print the full result as JSON")
    e.set_defaults(func=_eval)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def _train(args) -> int:
    meta = train_minilm_sick(epochs=args.epochs or DEFAULTS["epochs"], seed=args.seed, force=args.force)
    print(f"minilm-sick: {model_dir()}")
    print(f"  epochs {meta['epochs']}, seed {meta['seed']}, trained in {meta['train_seconds']} s, "
          f"SICK trial accuracy {meta['trial_accuracy']:.3f} ({meta['trial_pairs']} pairs)")
    return 0


def _eval(args) -> int:
    r = evaluate_nli(args.nli, args.dataset, limit=args.limit or None, seed=args.seed)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    asked = f" (asked for {r['requested_nli']})" if r["requested_nli"] not in (None, r["nli"]) else ""
    print(f"{r['nli']}{asked} on {r['dataset']} ({r['n']} pairs, {r['pairs_evaluated']} NLI pairs, "
          f"{r['seconds']:.1f} s)")
    if r["dataset"] != r["requested"]:
        print(f"  {r['requested']} could not be had: measured on {r['source']} instead")
    print(f"  accuracy {r['accuracy']:.3f}   macro-F1 {r['macro_f1']:.3f}")
    if "precision" in r:
        print(f"  paraphrase precision {r['precision']:.3f}   recall {r['recall']:.3f}   "
              f"(non-strict rule: accuracy {r['accuracy_nonstrict']:.3f}, macro-F1 {r['macro_f1_nonstrict']:.3f})")
    print(f"  baseline ({r['baseline']}): accuracy {r['baseline_accuracy']:.3f}   "
          f"macro-F1 {r['baseline_macro_f1']:.3f}")
    return 0
