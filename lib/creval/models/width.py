"""How many units of a study to run at once (the runner itself is :mod:`creval.core.units`)."""
from __future__ import annotations

from creval.core.units import GPU_WIDTH, LOCAL_WIDTH
from creval.models.device import torch_device
from creval.models.registry import backend_class, get_spec

SCORE_WIDTH_CPU = 4
"""Texts a gathering local model on the CPU scores at once. A scoring forward there holds at most
:data:`~creval.models.hf_decode.LOGIT_BUDGET` logits (about 170 positions of SmolLM2's 49k vocabulary), so a text of
40 tokens or more leaves room for 4 at most, and more in flight add memory, not batch: ``creval grade``'s
perplexity on 500 passages of 120 words took 389 s and peaked at 1,250 MB with 4 in flight, 385 s and 1,455 MB
with 16 (2 cores, 2026-11-29)."""


def width(*models: str, scoring: bool = False) -> int:
    """How many units to run at once: the largest in-flight budget among the named models that are servers
    (their requests overlap), :data:`~creval.core.units.LOCAL_WIDTH` for a local model that gathers the requests of
    units in flight into one batch (:data:`~creval.core.units.GPU_WIDTH` when it runs on a GPU;
    :data:`SCORE_WIDTH_CPU` when it only scores texts on the CPU, ``scoring``), else 1 (a local model computes one
    batch at a time anyway)."""
    best = 1
    for m in models:
        if not m:
            continue
        spec = get_spec(m)
        if spec.is_server:
            best = max(best, int(spec.concurrency))
        elif backend_class(spec).GATHERS:     # a local model that batches across units
            best = max(best, local_width(torch_device(), scoring))
    return best


def local_width(device: str, scoring: bool = False) -> int:
    """Units in flight for a gathering local model on ``device`` (pure, for tests)."""
    if device.startswith("cuda"):
        return GPU_WIDTH
    return SCORE_WIDTH_CPU if scoring else LOCAL_WIDTH

