"""A model's own speed on this machine (prefill and decode tokens/s, one stream and batched), and how far a
phase of a run is from it.

Issue 20's yardstick: a phase that made ``i`` input and ``o`` output tokens could not have taken less than
``i / prefill + o / batched decode`` seconds on this machine; the ratio of its real seconds to that bound is
its distance to the limit. The measurement talks to the backend directly, past the call cache on purpose
(a cached timing would measure nothing); its result is stored once per model and machine in the data home
(``artifacts/throughput/<model>.json``), so a rebuild reads it back."""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

from creval.core.paths import artifacts_dir
from creval.models import registry
from creval.models.requests import ChatRequest, ChoiceRequest, SampleRequest

PREFILL_KINDS = ("choice", "loglikelihood")      # phases that only read tokens
GENERATE_KINDS = ("chat", "sample")              # phases that read and write tokens


def machine() -> str:
    """What the figures depend on besides the model: host name and CPU count."""
    return f"{platform.node()}/{os.cpu_count()}cpu"


def load_average() -> float | None:
    """This machine's load over the last minute (runnable processes; None where the system does not say)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _filler(i: int, words: int) -> str:
    """A text of about ``words`` words that starts differently for each ``i`` (so no prompt cache helps)."""
    body = " ".join(f"item {i * 7919 + k} is a small {('red', 'blue', 'green')[k % 3]} box" for k in range(words // 6))
    return f"Note {i}: {body}. Summarise the note."


def measure(backend, *, prompt_words: int = 360, decode_tokens: int = 64, streams: int = 8, repeats: int = 3) -> dict:
    """Tokens/s of ``backend`` for prefill (a long prompt and one scored token, median of ``repeats``), decode
    of one stream (a chat reply), and decode of ``streams`` sequences sampled together from one prompt.
    Decode rates subtract the prompt's prefill time estimated from the first figure. One untimed call first
    loads the model and warms its buffers (else the first timing measures start-up, not speed)."""
    backend.choice_logprobs([ChoiceRequest(({"role": "user", "content": _filler(-1, prompt_words)},), ("yes",))])
    prefill = []
    for i in range(repeats):
        req = ChoiceRequest(({"role": "user", "content": _filler(i, prompt_words)},), ("yes",))
        t = time.perf_counter()
        got = backend.choice_logprobs([req])[0]
        prefill.append(got.input_tokens / max(time.perf_counter() - t, 1e-9))
    pre = statistics.median(prefill)
    ask = ({"role": "user", "content": "Write a long, detailed story about a lighthouse keeper and a storm."},)
    t = time.perf_counter()
    one = backend.chat([ChatRequest(ask, temperature=1.0, max_tokens=decode_tokens, seed=1)])[0]
    dt = time.perf_counter() - t - one.input_tokens / pre
    decode = one.output_tokens / max(dt, 1e-9)
    t = time.perf_counter()
    many = backend.sample(SampleRequest(ask, temperature=1.0, top_p=1.0, max_tokens=decode_tokens, seed=2),
                          list(range(streams)))
    dt = time.perf_counter() - t - one.input_tokens / pre
    batched = sum(s.n_tokens for s in many) / max(dt, 1e-9)
    return {"prefill_tps": round(pre, 1), "decode_tps": round(decode, 1), "batched_decode_tps": round(batched, 1),
            "streams": streams, "prompt_tokens": round(statistics.median(
                [backend.count_tokens(_filler(i, prompt_words)) for i in range(repeats)])),
            "machine": machine(), "measured": time.strftime("%Y-%m-%d %H:%M:%S"), "load": load_average()}


def stored_path(model: str) -> Path:
    return artifacts_dir() / "throughput" / f"{model.replace('/', '_')}.json"


def load(model: str) -> dict | None:
    """The stored figures of ``model`` when they were measured on this machine; else None."""
    try:
        got = json.loads(stored_path(model).read_text())
    except (OSError, ValueError):
        return None
    return got if got.get("machine") == machine() else None


def store(model: str, figures: dict) -> Path:
    path = stored_path(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(figures, indent=1))
    tmp.replace(path)
    return path


def lower_bound_seconds(kind: str, input_tokens: int, output_tokens: int, figures: dict) -> float | None:
    """The least time a phase's tokens need at the measured rates (None for kinds that are not LLM calls)."""
    if kind in PREFILL_KINDS:
        return input_tokens / figures["prefill_tps"]
    if kind in GENERATE_KINDS:
        return input_tokens / figures["prefill_tps"] + output_tokens / figures["batched_decode_tps"]
    return None


def distance(kind: str, seconds: float, input_tokens: int, output_tokens: int, figures: dict | None) -> float | None:
    """Real seconds over the lower bound (1.0 = at the model's limit on this machine), or None."""
    if not figures or seconds <= 0:
        return None
    bound = lower_bound_seconds(kind, input_tokens, output_tokens, figures)
    return seconds / bound if bound else None


def behind_api(model: str) -> bool:
    """Is ``model`` served by an API (its tokens cost, so it is measured only on request)?"""
    return registry.get_spec(model).is_server


def ensure(model: str, *, force: bool = False, local_only: bool = True, **measure_kw) -> dict | None:
    """The stored figures of ``model``, measured now (and stored) when missing or ``force``. With
    ``local_only`` a model behind an API is never measured (it would spend its tokens): None. ``measure_kw``
    go to :func:`measure`."""
    got = None if force else load(model)
    if got is not None:
        return got
    if local_only and behind_api(model):
        return None
    spec = registry.get_spec(model)
    figures = {"model": spec.name, "backend": spec.backend, **measure(registry.load_backend(spec), **measure_kw)}
    store(spec.name, figures)
    return figures
