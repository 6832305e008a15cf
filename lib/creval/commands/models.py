"""``creval models``: every registered model and whether it is usable here (or what is missing)."""
from __future__ import annotations

from creval.models.registry import all_specs, backend_class, check


def cmd_models(args) -> int:
    rows = []
    for name, spec in all_specs().items():
        ok, why = check(spec)
        kind = backend_class(spec).LOGPROB_KIND if ok or spec.backend == "openai" else "?"
        rows.append((name, spec.backend, "yes" if ok else "no", kind, why if ok else f"missing: {why}"))
    widths = [max(len(r[i]) for r in rows + [("model", "backend", "usable", "logprobs", "")]) for i in range(4)]
    head = ("model", "backend", "usable", "logprobs", "source / what to do")
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    return 0


def register(sub) -> None:
    p = sub.add_parser("models", help="list registered models and whether each is usable on this machine")
    p.set_defaults(func=cmd_models)
