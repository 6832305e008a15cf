"""``creval check MODEL``: what a model can do, and which studies and phases can run on it, before any costly call.

For a server it probes the live endpoint with a handful of tiny requests shaped as the studies send them
(models/probe.py; not cached: a probe is cheaper than trusting an old answer), fills in what the spec's ``can:`` does
not say, says where the server contradicts what the spec says (those phases are then judged by the server, and the
command exits 1, unless ``--trust-spec``), and prints what runs where and the block that completes the spec;
``--no-probe`` uses the spec alone. A local model can do every verb.

The probe tells the truth before it answers: a server that gives no answer (nothing listens, the host does not
resolve, no reply within the spec's timeout) or one that is not an OpenAI-compatible API (a web page, plain text,
another API's JSON) ends the check in one sentence naming the URL and what came back (status, content type, first
bytes), exit 2, no ``can:`` block; so does a server none of whose probe requests succeeded (a redirect, a refused
key, a model it does not serve). A phase is "yes" only where the probe's request for each of its verbs succeeded;
a request that failed without saying what the server can do (a 5xx) is listed, and the check exits 1.
"""
from __future__ import annotations

import dataclasses

import yaml

from creval.core.errors import CrevalError
from creval.models import capabilities
from creval.models.probe import probe
from creval.models.reach import api_key_for, endpoints
from creval.models.registry import check, get_spec
from creval.studies.registry import model_phases


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1] for r in rows)


def conflicts(said: dict, found: dict) -> dict[str, tuple]:
    """``{field: (the spec's value, the probe's)}`` where the live server contradicts the spec's ``can:``. A spec's
    ``logprobs: server`` (returned, kind not documented) agrees with any kind the probe finds but ``none``."""
    out = {}
    for f, v in found.items():
        if f not in said or said[f] is None or v is None or said[f] == v:
            continue
        if f == "logprobs" and said[f] == "server" and v != "none":
            continue
        out[f] = (said[f], v)
    return out


def report(spec, probed: dict | None, trust_spec: bool = False, phases: capabilities.Phases | None = None) -> str:
    """The check's text: the server and what it can do (said by the spec, or found by the probe; where the probe
    contradicts the spec, the probe's finding rules unless ``trust_spec``), then every study phase (``phases``,
    default: those the studies declare) with yes / no / ? and why, then the block to add to the spec (what the
    probe found; pasted in, the spec runs)."""
    phases = model_phases() if phases is None else phases
    lines = [f"model {spec.name} ({spec.backend}: {spec.model})"]
    found = dict((probed or {}).get("can", {}))
    if probed is not None:
        srv = probed.get("server") or {}
        lines.append(f"server: {srv.get('name') or 'unnamed'} {srv.get('version') or '(version not said)'}")
        if probed.get("error"):
            lines.append(f"probe stopped: {probed['error']}")
        lines += [f"  probe: {n}" for n in probed.get("notes", [])]
    extra = dict((probed or {}).get("spec") or {})
    if (probed or {}).get("request") or extra:             # judge the phases as the completed spec would run
        spec = dataclasses.replace(spec, **extra, request={**(spec.request or {}), **(probed or {}).get("request", {})})
    said = dict(spec.can or {})
    against = conflicts(said, found)
    add = block(said, found, {} if trust_spec else against, probed or {})
    if against and not trust_spec:
        spec = dataclasses.replace(spec, can={**said, **{f: v for f, (_, v) in against.items()}})
        said = dict(spec.can)
    caps = capabilities.of(spec, found)
    for f in capabilities.FIELDS:
        v = getattr(caps, f)
        where = ("spec" if f in said else "probe" if f in found else "unknown" if spec.is_server
                 else "the backend itself")
        if f in against:
            where = (f"the spec's; the probe found {against[f][1]}" if trust_spec else
                     f"probe; THE SPEC SAYS {against[f][0]}, WHICH THE SERVER CONTRADICTS")
        lines.append(f"  {f}: {'?' if v is None else v} ({where})")
    if spec.is_server and spec.thinking:
        lines.append("  thinking: on; switched off for samples and choice scores "
                     + ("(the server allows it)" if caps.thinking_off else "where the server allows it"))
    lines.append("")
    lines.append(_table([("study", "phase", "runs", "why"),
                         *tried(capabilities.phase_table(spec, caps, phases), probed, phases)]))
    if probed is not None and not answered(probed):
        lines += ["", f"no probe request succeeded: nothing is known to run on {spec.name}; fix the server or the "
                      "spec and check again"]
    elif probed is not None and probed.get("failed"):
        lines += ["", "probe requests that failed (the phases needing them are not marked yes):",
                  *[f"  {f}" for f in probed["failed"]]]
    if against and not trust_spec:
        lines += ["", "the server contradicts the spec (" + "; ".join(f"{f}: the spec says {a}, the server gives {b}"
                                                               for f, (a, b) in against.items())
                  + "): the phases above are judged by what the server does; correct the spec's `can:` below, or "
                    "pass --trust-spec to judge by the spec on purpose"]
    if add and (probed is None or answered(probed)):
        lines += ["", "add to the spec what the probe found (runs read the spec; they do not probe):",
                  yaml.safe_dump(add, sort_keys=False).rstrip()]
    return "\n".join(lines)


def answered(probed: dict) -> bool:
    """Whether any probe request succeeded (a probe without a ``worked`` record, an old caller's, counts)."""
    return "worked" not in probed or any(probed["worked"].values())


def tried(rows: list[tuple[str, str, str, str]], probed: dict | None,
          phases: capabilities.Phases) -> list[tuple[str, str, str, str]]:
    """``rows`` of :func:`capabilities.phase_table` with "yes" kept only where the probe's request for every verb
    of the phase succeeded: a phase judged possible from the spec and capabilities alone, whose request the live
    server did not answer as asked, becomes "?" with the reason (``phases``: those the rows were made from)."""
    worked = (probed or {}).get("worked")
    if worked is None:
        return rows
    verbs = [p.verbs for declared in phases.values() for p in declared]
    out = []
    for (study, phase, word, why), vs in zip(rows, verbs):
        missed = [v for v in vs if not worked.get(v)]
        if word == "yes" and missed:
            word, why = "?", "; ".join(f"{capabilities.VERB_WORDS[v]}: the probe's request did not succeed"
                                       for v in missed)
        out.append((study, phase, word, why))
    return out


def block(said: dict, found: dict, against: dict, probed: dict) -> dict:
    """The YAML block printed for the spec: top-level fields the probe says the model needs (thinking,
    reasoning_effort, reasoning_room), the request shaping it learnt, and the ``can:`` lines the spec lacks or
    (``against``) has wrong."""
    can = {f: v for f, v in found.items() if f not in said or f in against}
    return {**(probed.get("spec") or {}), **({"request": probed["request"]} if probed.get("request") else {}),
            **({"can": can} if can else {})}


def cmd_check(args) -> int:
    spec = get_spec(args.model)
    ok, why = check(spec)
    if not ok:
        print(f"model {spec.name} is not usable here: {why}")
        return 1
    probed = None
    if spec.is_server and not args.no_probe:
        probed = probe(spec, api_key_for(spec))
        if not answered(probed):        # a redirect, a refused key, a model the server does not have, 5xx only
            why = (probed.get("failed") or probed.get("notes") or ["no reply was usable"])[0]
            raise CrevalError(f"model {spec.name}: no probe request to {endpoints(spec)[0]} "
                              f"succeeded, so nothing is known to run on it (first: {why})",
                              "check the spec's base_url, model name and key (api_key_env), then check again")
    trust = bool(getattr(args, "trust_spec", False))
    print(report(spec, probed, trust))
    if probed is not None and (not answered(probed) or probed.get("failed")):
        return 1                        # a server that did not answer every probe as asked is not known to work
    return 1 if probed and conflicts(spec.can or {}, probed.get("can", {})) and not trust else 0


def register(sub) -> None:
    p = sub.add_parser("check", help="probe a model (a live server) and say which studies and phases can run on it",
                       description="What MODEL can do (log-probs raw/processed/none, /completions, echo, reasoning, "
                                   "thinking off) and which study phases can run on it and why not. A server is "
                                   "probed with a few one-token requests (not cached; a few hundred tokens in all).")
    p.add_argument("model", help="a registered model name or a spec file's path")
    p.add_argument("--no-probe", action="store_true", help="use the spec alone; send no request")
    p.add_argument("--trust-spec", action="store_true",
                   help="where the live server contradicts the spec's `can:`, judge the phases by the spec anyway")
    p.set_defaults(func=cmd_check)
