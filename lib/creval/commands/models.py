"""``creval models``: every registered model and whether it is usable here (or what is missing)."""
from __future__ import annotations

from creval.models.reach import endpoints
from creval.models.registry import all_specs, backend_class, check, logprob_kind_of, reachable


def cmd_models(args) -> int:
    rows, seen = [], {}
    for name, spec in all_specs().items():
        ok, why = check(spec)
        if ok and spec.is_server:
            if args.no_network:
                why = f"{why} (not checked: --no-network)"
            else:                                   # one TCP connect per endpoint; no request, no key sent
                for url in endpoints(spec):         # every replica must answer
                    seen.setdefault(url, reachable(url))
                    ok, why = seen[url]
                    if not ok:
                        break
        kind = logprob_kind_of(backend_class(spec), spec) if ok or spec.is_server else "?"
        usable = ("?" if "not checked" in why else "yes") if ok else "no"
        rows.append((name, spec.backend, usable, kind, why if ok else f"missing: {why}"))
    widths = [max(len(r[i]) for r in rows + [("model", "backend", "usable", "logprobs", "")]) for i in range(4)]
    head = ("model", "backend", "usable", "logprobs", "source / what to do")
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    return 0


def register(sub) -> None:
    p = sub.add_parser("models", help="list registered models and whether each is usable on this machine",
                       description="List every model spec (params/models/ and the folders in CREVAL_MODELS) and "
                                   "whether it is usable here: weights installed, API key set, server answering. "
                                   "A server is only checked for a TCP connection; no request and no key is sent "
                                   "(`creval check MODEL` probes what a server can do).")
    p.add_argument("--no-network", action="store_true", help="do not try to connect to API servers")
    p.set_defaults(func=cmd_models)
