"""Where the local neural parts (the entailment cross-encoder, the sentence embedder) run: CUDA when torch
sees a GPU, else the CPU; ``CREVAL_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``) overrides. The choice is recorded
in each run's manifest (``accelerator``). Results do not enter the cache key: a GPU and a CPU give the same
labels and embeddings up to float rounding."""
from __future__ import annotations

import os

from creval.core.errors import CrevalError
from creval.models import heavy

CHOSEN = heavy.Loaded()
"""The device this process chose (decided once; ``CHOSEN.reset()`` decides again on the next use)."""


def choose(requested: str, cuda_available: bool) -> str:
    """The device for ``requested`` ("" or "auto": the GPU when there is one). Pure, for tests."""
    req = (requested or "auto").strip().lower()
    if req == "auto":
        return "cuda" if cuda_available else "cpu"
    if req.startswith("cuda") and not cuda_available:
        raise CrevalError(f"CREVAL_DEVICE={requested} but torch sees no CUDA device",
                          "unset CREVAL_DEVICE (the CPU is used), or install a CUDA build of torch")
    if req != "cpu" and not req.startswith("cuda"):
        raise CrevalError(f"CREVAL_DEVICE={requested} is not a device", "use cpu, cuda or cuda:N")
    return req


def torch_device() -> str:
    """The device for this process (decided once, see the module doc)."""
    return CHOSEN.get("torch", lambda: choose(os.environ.get("CREVAL_DEVICE", ""), heavy.torch().cuda.is_available()))


def chosen() -> str | None:
    """The device chosen so far in this process (None if no local neural model ran)."""
    return CHOSEN.items.get("torch")
