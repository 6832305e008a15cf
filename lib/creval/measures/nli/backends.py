"""Natural-language inference (entailment) backends for semantic clustering (paper section 3.1, app. C.2).

An :class:`NLI` backend labels ``(premise, hypothesis)`` pairs as entailment, neutral or contradiction.
Every backend answers a whole list of pairs at once and every pair goes through the shared call
cache (:func:`creval.core.cache.cached_batch`, kind ``"nli"``), so re-clustering the same texts is free.

Backends
- :class:`CrossEncoderNLI` - any Hugging Face sequence-classification NLI model (the paper uses
  ``tasksource/deberta-base-long-nli``, which needs the Hub).
- ``minilm-sick`` - the bundled all-MiniLM-L6-v2 fine-tuned here on SICK (see :mod:`creval.measures.nli.train`),
  a real cross-encoder that works offline once trained. It is weak on out-of-domain text: measure it with
  :func:`creval.measures.nli.evaluate.evaluate_nli` before trusting it. SICK comes through
  :mod:`creval.datasets.sick` (env, ``../shared``, download); when it cannot be had, ``load_nli("minilm-sick")``
  logs a warning and returns ``minilm-cosine`` instead (``.name`` says which ran, ``.requested`` what was asked).
- :class:`CosineNLI` (``minilm-cosine``) - no training, no data: "entailment" both ways when the cosine of the
  bundled MiniLM sentence embeddings reaches a threshold, else neutral (see its doc for the threshold).
- :class:`~creval.measures.nli.llm.LLMNLI` - asks a chat model and reads the label from the log-probs of the three
  label words (the paper's GPT-4o route), never from free text.

Use :func:`load_nli` to get one by name; :mod:`creval.measures.nli.evaluate` measures agreement with labels.
"""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from creval.core.errors import CrevalError
from creval.datasets import sick
from creval.measures.nli.base import NLI, CachedNLI, Label, label_from_name
from creval.measures.nli.llm import LLMNLI, llm_model
from creval.measures.nli.train import ensure_minilm_sick, is_trained, model_dir
from creval.models import heavy, registry
from creval.models.device import torch_device
from creval.models.embeddings import Embedder
from creval.models.gather import UNLOCKED, Gatherer
from creval.models.heavy import quiet_transformers

__all__ = ["Label", "NLI", "CrossEncoderNLI", "CosineNLI", "LLMNLI", "load_nli", "resolved_name", "label_from_name",
           "DEBERTA_ID", "COSINE_THRESHOLD"]

log = logging.getLogger("creval.nli")

DEBERTA_ID = "tasksource/deberta-base-long-nli"


def _dir_fingerprint(path: Path) -> str:
    """A short hash of a local model folder's config and training metadata (changes when retrained)."""
    h = hashlib.sha256()
    for f in ("config.json", "metadata.json"):
        if (path / f).exists():
            h.update((path / f).read_bytes())
    return h.hexdigest()[:16]


class CrossEncoderNLI(CachedNLI):
    """A Hugging Face ``AutoModelForSequenceClassification`` NLI model, on the GPU when there is one
    (:mod:`creval.models.device`).

    Labels come from ``config.id2label`` (names matched case-insensitively). All pairs of a call go
    through the model in sub-batches of ``batch_size`` under ``torch.no_grad``. The pairs of every unit in
    flight are gathered while the model is busy (:mod:`creval.models.gather`) and classified together.
    """
    lock = UNLOCKED

    def __init__(self, path_or_hub_id: str | Path, *, name: str | None = None, batch_size: int = 64,
                 max_length: int = 256, use_cache: bool = True):
        self.source = str(path_or_hub_id)
        self.name = name or self.source
        self.batch_size, self.max_length, self.use_cache = batch_size, max_length, use_cache
        local = Path(self.source).expanduser()
        offline = local.exists() or Path(self.source).is_absolute() or self.source.startswith(".")
        try:
            transformers = heavy.transformers()
            quiet_transformers()
            self.model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self.source, local_files_only=offline)
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.source, local_files_only=offline)
        except Exception as e:  # network, missing folder, wrong format: all user-fixable
            raise CrevalError(
                f"could not load the NLI model {self.source!r}: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                "give a local folder holding a sequence-classification model (config.json + weights), or a Hub id "
                "on a machine with internet (set HF_HUB_OFFLINE=1 to use a copy already in the Hugging Face cache); "
                "offline, use 'minilm-sick' (trained here) or 'llm:<model>'") from e
        self.device = torch_device()
        self.model.to(self.device).eval()
        self._labels = self._label_map()
        self._fingerprint = _dir_fingerprint(local) if local.is_dir() else ""
        self.gather = Gatherer(lambda _, pairs: self._labels_of(pairs), limit=16 * batch_size)

    def _label_map(self) -> list[Label]:
        id2label = getattr(self.model.config, "id2label", None) or {}
        n = int(self.model.config.num_labels)
        try:
            out = [label_from_name(id2label[i]) for i in range(n)]
        except (KeyError, CrevalError) as e:
            raise CrevalError(f"{self.source}: config.id2label {id2label} does not name entailment, neutral "
                              "and contradiction", "use a 3-way NLI classifier") from e
        if set(out) != set(Label):
            raise CrevalError(f"{self.source}: classes {id2label} do not cover all three NLI labels",
                              "use a 3-way NLI classifier")
        return out

    def _identity(self) -> dict:
        return {"backend": "cross-encoder", "model": self.source if not self._fingerprint else self.name,
                "fingerprint": self._fingerprint, "max_length": self.max_length}

    def logits(self, pairs: Sequence[tuple[str, str]]):
        """Raw class logits (numpy, one row per pair, columns in ``config.id2label`` order). Uncached."""
        torch = heavy.torch()
        rows = []
        with torch.no_grad():
            for i in range(0, len(pairs), self.batch_size):
                chunk = pairs[i:i + self.batch_size]
                enc = self.tokenizer([p for p, _ in chunk], [h for _, h in chunk], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt").to(self.device)
                rows.append(self.model(**enc).logits.float().cpu().numpy())
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, len(self._labels)))

    def _labels_of(self, pairs: list[tuple[str, str]]) -> list[Label]:
        return [self._labels[int(k)] for k in self.logits(pairs).argmax(axis=1)]

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        return self.gather(("nli",), pairs)


# ---------------------------------------------------------------------------------------------
# embedding-cosine "entailment" (the fallback that needs no training data)
# ---------------------------------------------------------------------------------------------
COSINE_THRESHOLD = 0.8
"""Cosine of the bundled all-MiniLM-L6-v2 embeddings at or above which two sentences count as entailing
each other. Chosen on development data only: on MSRP val (500 pairs) the rule ``cosine >= t`` has its best
paraphrase macro-F1 at t = 0.75 (0.672) and 0.667 at 0.8, where precision is higher (0.83 vs 0.80; a false
merge of two different steps lowers semantic entropy, so precision is preferred); on SICK train the 3-way
accuracy of "entailment if cosine >= t else neutral" peaks at t = 0.80-0.85 (0.70). Held out, at 0.8:
MSRP test (1,725 pairs) paraphrase accuracy 0.661 (always-paraphrase baseline 0.665), macro-F1 0.646
(0.399), precision 0.80, recall 0.65; SICK test (4,927) 3-way accuracy 0.712 (always-neutral 0.567),
macro-F1 0.499 (it never says contradiction); our 50-pair sample paraphrase accuracy 0.94 (baseline 0.36).
Re-measure with ``creval nli eval --nli minilm-cosine --dataset msrp``."""


class CosineNLI(CachedNLI):
    """Bidirectional "entailment" from sentence-embedding similarity (``minilm-cosine``).

    A pair gets ENTAILMENT when the cosine of the two unit-normalised embeddings (:class:`Embedder`, cached)
    is at least ``threshold``, else NEUTRAL; never CONTRADICTION. The relation is symmetric, so it can only
    say "these two say the same thing" - which is all semantic clustering asks of NLI (an exact paraphrase
    test), but it cannot tell a contradiction that shares the words (``The lamp is on`` / ``off``) from a
    paraphrase above the threshold. Use it when no trained NLI model can be had, and measure it. Its texts are
    embedded by the :class:`Embedder`, which gathers the texts of every unit in flight into one batch."""
    lock = UNLOCKED

    def __init__(self, threshold: float = COSINE_THRESHOLD, embedder: str = "all-MiniLM-L6-v2", *,
                 requested: str | None = None, reason: str | None = None, use_cache: bool = True):
        self.threshold, self.embedder, self.use_cache = float(threshold), embedder, use_cache
        self.name = "minilm-cosine" if embedder == "all-MiniLM-L6-v2" else f"cosine:{embedder}"
        self._requested, self.fallback_reason = requested, reason

    def _identity(self) -> dict:
        return {"backend": "cosine", "embedder": self.embedder, "threshold": self.threshold}

    def cosines(self, pairs: Sequence[tuple[str, str]]):
        """Cosine similarity of each pair (numpy), through the embedding cache."""
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        vecs = Embedder(self.embedder).encode(texts)
        at = {t: i for i, t in enumerate(texts)}
        a = vecs[[at[p] for p, _ in pairs]]
        b = vecs[[at[h] for _, h in pairs]]
        return np.einsum("ij,ij->i", a, b) if len(pairs) else np.zeros(0)

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        return [Label.ENTAILMENT if c >= self.threshold else Label.NEUTRAL for c in self.cosines(pairs)]


def load_nli(name: str) -> NLI:
    """An NLI backend by name (loaded once per process).

    - ``minilm-sick``: MiniLM cross-encoder fine-tuned on SICK (trained on first use, ~2-3 min on 2 cores);
      when SICK cannot be had (no ``CREVAL_SICK_DIR``, no ``../shared``, no download) it falls back to
      ``minilm-cosine`` with a warning (``.name == "minilm-cosine"``, ``.requested == "minilm-sick"``)
    - ``minilm-cosine``: :class:`CosineNLI` over the bundled MiniLM embeddings (no training)
    - ``deberta``: the paper's ``tasksource/deberta-base-long-nli`` (needs the Hugging Face Hub)
    - ``hf:<hub id or local folder>``: any sequence-classification NLI model
    - ``llm:<registered model name>``: :class:`LLMNLI` over :func:`creval.models.registry.load_model`
    """
    name = str(name).strip()
    return LOADED.get(name, lambda: _load_nli(name))   # units run in threads: load (or train) each one once


LOADED = heavy.Loaded()
"""The NLI backends loaded in this process, by name (``LOADED.reset()`` forgets them)."""


def _load_nli(name: str) -> NLI:
    if name == "minilm-sick":
        nli: NLI = _minilm_sick()
    elif name == "minilm-cosine":
        nli = CosineNLI()
    elif name == "deberta":
        nli = CrossEncoderNLI(DEBERTA_ID, name="deberta")
    elif name.startswith("hf:") and len(name) > 3:
        nli = CrossEncoderNLI(name[3:])
    elif llm_model(name):
        nli = LLMNLI(registry.load_model(llm_model(name)))
    else:
        raise CrevalError(f"unknown NLI backend {name!r}", "use 'minilm-sick', 'minilm-cosine', 'deberta', "
                                                            "'hf:<hub id or folder>' or 'llm:<model name>'")
    return nli


def _why_no_sick() -> str | None:
    """None when ``minilm-sick`` can run (trained, or SICK can be had to train it), else the reason.
    An explicitly given SICK (``CREVAL_SICK_DIR``) that is broken raises instead of falling back."""
    if is_trained():
        return None
    try:
        sick.source()
    except CrevalError as e:
        if os.environ.get(sick.DATASET.env):
            raise
        return e.problem
    return None


class LazyNLI:
    """``load_nli(name)`` on first use: a study asks its model first, so an unreachable endpoint fails in
    seconds instead of after the entailment model was trained."""

    def __init__(self, name: str):
        self._name, self._backend = name, None

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._backend is None:
            self._backend = load_nli(self._name)
        return getattr(self._backend, attr)


def resolved_name(name: str) -> str:
    """The name of the backend :func:`load_nli` (``name``) runs, without loading it: ``name`` itself, or
    ``minilm-cosine`` when ``minilm-sick`` has to fall back (for run identities and records)."""
    name = str(name).strip()
    if name in LOADED:
        return LOADED.get(name, lambda: None).name
    if name == "minilm-sick" and _why_no_sick() is not None:
        return "minilm-cosine"
    return name


def _minilm_sick() -> NLI:
    """The trained cross-encoder; trains it when SICK can be had, else the documented cosine fallback."""
    reason = _why_no_sick()
    if reason is not None:
        log.warning("minilm-sick cannot be trained (%s); using minilm-cosine instead", reason)
        return CosineNLI(requested="minilm-sick", reason=reason)
    ensure_minilm_sick()
    return CrossEncoderNLI(model_dir(), name="minilm-sick")
