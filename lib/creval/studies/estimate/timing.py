"""Money and wall time of an estimate at an endpoint's speed."""
from __future__ import annotations

from dataclasses import dataclass

from creval.models import throughput
from creval.models.registry import get_spec
from creval.studies.estimate.parts import ZERO, Estimate, Local, Part, Phase, Range

# Items a second of the work this machine does itself, one at a time under the local-compute lock (2-core Xeon,
# 2026-11-26, `benchmarks/bench_local_rates.py` at load 3.5: slower than a quiet machine, so an upper bound on
# the time; the sandbox figure is for a one-line program with one test case, a lower bound for real codes).
# Without them the wall time of a study against a fast server was 2-4x short.
LOCAL_RATES: dict[str, tuple[float, str]] = {
    "entailment": (9.0, "MiniLM cross-encoder pairs"),
    "embedding": (34.0, "MiniLM sentence embeddings"),
    "tagging": (8793.0, "words POS-tagged by spaCy"),
    "creativity-index": (6784.0, "texts matched against the n-gram index (docs/performance.md)"),
    "sandbox": (16.5, "programs run in the bubblewrap jail (a test case each)"),
}


def local_seconds(work: Local, end: str) -> float:
    """Seconds of ``work`` at its measured rate (``end``: 'lo' or 'hi' of its item count)."""
    rate = LOCAL_RATES[work.kind][0]
    return getattr(work.items, end) / rate if rate else 0.0


@dataclass(frozen=True)
class Speed:
    """How fast one endpoint answers: seconds a request waits before its first token, tokens/s of one reply
    (0: not counted), prompt tokens/s (0: not counted), requests in flight at once, and where that came from."""
    latency_s: float
    tokens_per_s: float
    in_flight: int
    source: str
    prefill_per_s: float = 0.0

    def request_seconds(self, prompt: float, completion: float) -> float:
        return (self.latency_s + (completion / self.tokens_per_s if self.tokens_per_s else 0.0)
                + (prompt / self.prefill_per_s if self.prefill_per_s else 0.0))


def speed(model: str, latency: float | None = None, tokens_per_s: float | None = None,
          in_flight: int | None = None) -> Speed | None:
    """The endpoint speed of ``model``: the flags, else the spec's ``extra: {latency_s, tokens_per_s}``, else a
    local model's measured speed (``creval throughput``); None when nothing says."""
    spec = get_spec(model)
    server = spec.is_server
    slots = in_flight or (int(spec.concurrency) if server else 1)
    ex = spec.extra or {}
    if latency is not None or tokens_per_s is not None:
        return Speed(latency or 0.0, tokens_per_s or 0.0, slots, "flags")
    if "latency_s" in ex or "tokens_per_s" in ex:
        return Speed(float(ex.get("latency_s", 0)), float(ex.get("tokens_per_s", 0)), slots, "spec extra")
    fig = None if server else throughput.load(spec.name)
    if fig:
        return Speed(0.0, float(fig["batched_decode_tps"]), 1, "measured here", float(fig["prefill_tps"]))
    return None


REASONING_ROOM = 2000     # tokens of reasoning a reasoning model may spend per reply when its spec gives no room
LIGHT_EFFORTS = ("none", "minimal")


def reasoning(part: Part) -> Range:
    """Hidden reasoning tokens ``part``'s calls may spend before their answers (billed as output; OpenAI's
    reasoning guide): none for a model that does not reason; else up to the spec's ``reasoning_room`` per call
    (:data:`REASONING_ROOM` where it gives none), at least a quarter of it unless the spec asks for no or minimal
    reasoning effort."""
    spec = get_spec(part.model)
    reasons = bool((spec.can or {}).get("reasoning")) or spec.reasoning_room > 0
    if not reasons or spec.reasoning_effort == "none":
        return ZERO
    room = spec.reasoning_room or REASONING_ROOM
    return part.calls * Range(0 if spec.reasoning_effort in LIGHT_EFFORTS else room / 4, room)


def cost(part: Part) -> Range:
    """What ``part`` costs at its spec's prices, reasoning tokens billed as output."""
    spec = get_spec(part.model)
    out = part.completion + reasoning(part)
    return Range(spec.cost(part.prompt.lo, out.lo), spec.cost(part.prompt.hi, out.hi))


def phase_wall(phase: Phase, speeds: dict[str, Speed | None]) -> Range | None:
    """Seconds of one phase: its requests spread over the in-flight limit (at most ``units x breadth`` at
    once), never less than its longest unit's chain of requests, plus its local work at this machine's rates
    (counted after the requests: an upper bound where the two overlap)."""
    if not phase.parts and not phase.local:
        return ZERO
    if any(speeds.get(p.model) is None for p in phase.parts):
        return None
    bounds = []
    for end in ("lo", "hi"):
        work, per, reqs = 0.0, [], 0.0
        for p in phase.parts:
            n = max(getattr(p.calls, end), 1e-9)
            t = speeds[p.model].request_seconds(getattr(p.prompt, end) / n, getattr(p.completion, end) / n)
            slots = min(speeds[p.model].in_flight, max(1, phase.units * phase.breadth))
            work += getattr(p.calls, end) * t / slots
            per.append(t)
            reqs += getattr(p.calls, end)
        calls = max(work, getattr(phase.depth, end) * max(per)) if reqs else 0.0
        bounds.append(calls + sum(local_seconds(w, end) for w in phase.local))   # local work holds one lock
    return Range(*bounds)


def wall(est: Estimate, speeds: dict[str, Speed | None]) -> Range | None:
    total = ZERO
    for ph in est.phases:
        w = phase_wall(ph, speeds)
        if w is None:
            return None
        total = total + w
    return total


