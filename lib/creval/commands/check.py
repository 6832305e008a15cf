"""``creval check MODEL``: what a model can do, and which studies and phases can run on it, before any costly call.

For a server it probes the live endpoint with a handful of tiny requests (models/probe.py: one reply token each,
not cached: a probe is cheaper than trusting an old answer), fills in what the spec's ``can:`` does not say, and
prints what runs where; ``--no-probe`` uses the spec alone. A local model can do every verb.
"""
from __future__ import annotations

import dataclasses

import yaml

from creval.models import capabilities
from creval.models.openai_compat import api_key_for
from creval.models.probe import probe
from creval.models.registry import check, get_spec


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1] for r in rows)


def report(spec, probed: dict | None) -> str:
    """The check's text: the server and what it can do (said by the spec, or found by the probe), then every
    study phase with yes / no / ? and why."""
    lines = [f"model {spec.name} ({spec.backend}: {spec.model})"]
    found = (probed or {}).get("can", {})
    if probed is not None:
        srv = probed.get("server") or {}
        lines.append(f"server: {srv.get('name') or 'unnamed'} {srv.get('version') or '(version not said)'}")
        if probed.get("error"):
            lines.append(f"probe stopped: {probed['error']}")
        lines += [f"  probe: {n}" for n in probed.get("notes", [])]
    if (probed or {}).get("request"):                     # judge the phases as the shaped spec would run
        spec = dataclasses.replace(spec, request={**(spec.request or {}), **probed["request"]})
    caps = capabilities.of(spec, found)
    said = spec.can or {}
    for f in capabilities.FIELDS:
        v = getattr(caps, f)
        where = ("spec" if f in said else "probe" if f in found else "unknown" if spec.is_server
                 else "the backend itself")
        lines.append(f"  {f}: {'?' if v is None else v} ({where})")
    if spec.is_server and spec.thinking:
        lines.append("  thinking: on; switched off for samples and choice scores "
                     + ("(the server allows it)" if caps.thinking_off else "where the server allows it"))
    lines.append("")
    lines.append(_table([("study", "phase", "runs", "why"), *capabilities.phase_table(spec, caps)]))
    missing = {f: found[f] for f in found if f not in said}
    shaping = (probed or {}).get("request") or {}
    if missing or shaping:
        add = {**({"request": shaping} if shaping else {}), **({"can": missing} if missing else {})}
        lines += ["", "add to the spec what the probe found (runs read the spec; they do not probe):",
                  yaml.safe_dump(add, sort_keys=False).rstrip()]
    return "\n".join(lines)


def cmd_check(args) -> int:
    spec = get_spec(args.model)
    ok, why = check(spec)
    if not ok:
        print(f"model {spec.name} is not usable here: {why}")
        return 1
    probed = None
    if spec.is_server and not args.no_probe:
        probed = probe(spec, api_key_for(spec))
    print(report(spec, probed))
    return 0


def register(sub) -> None:
    p = sub.add_parser("check", help="probe a model (a live server) and say which studies and phases can run on it",
                       description="What MODEL can do (log-probs raw/processed/none, /completions, echo, reasoning, "
                                   "thinking off) and which study phases can run on it and why not. A server is "
                                   "probed with a few one-token requests (not cached; a few hundred tokens in all).")
    p.add_argument("model", help="a registered model name or a spec file's path")
    p.add_argument("--no-probe", action="store_true", help="use the spec alone; send no request")
    p.set_defaults(func=cmd_check)
