"""How many units of a study to run at once (the runner itself is :mod:`creval.core.units`)."""
from __future__ import annotations

from creval.models.registry import get_spec


def width(*models: str) -> int:
    """How many units to run at once: the largest in-flight budget among the named models that are servers
    (their requests overlap), else 1 (a local model computes one batch at a time anyway)."""
    best = 1
    for m in models:
        if not m:
            continue
        spec = get_spec(m)
        if spec.is_server:
            best = max(best, int(spec.concurrency))
    return best
