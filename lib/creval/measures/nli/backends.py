"""Natural-language inference (entailment) backends for semantic clustering (paper section 3.1, app. C.2).

An :class:`NLI` backend labels ``(premise, hypothesis)`` pairs as entailment, neutral or contradiction.
Every backend answers a whole list of pairs at once and every pair goes through the shared call
cache (:func:`creval.core.cache.cached_batch`, kind ``"nli"``), so re-clustering the same texts is free.

Backends
- :class:`CrossEncoderNLI` - any Hugging Face sequence-classification NLI model (the paper uses
  ``tasksource/deberta-base-long-nli``, which needs the Hub).
- ``minilm-sick`` - the bundled all-MiniLM-L6-v2 fine-tuned here on SICK (see :mod:`creval.measures.nli.train`),
  a real cross-encoder that works offline. It is weak on out-of-domain text: measure it with
  :func:`evaluate_nli` before trusting it.
- :class:`LLMNLI` - asks a chat model and reads the label from the log-probs of the three label words
  (the paper's GPT-4o route), never from free text.

Use :func:`load_nli` to get one by name and :func:`evaluate_nli` for held-out accuracy (SICK, MSRP).
"""
from __future__ import annotations

import csv
import enum
import hashlib
import os
import random
import time
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

from creval.core import paths
from creval.core.cache import cached_batch
from creval.core.errors import CrevalError

__all__ = ["Label", "NLI", "CrossEncoderNLI", "LLMNLI", "load_nli", "evaluate_nli", "read_sick", "read_msrp",
           "sick_dir", "msrp_dir", "label_from_name", "DEBERTA_ID"]

DEBERTA_ID = "tasksource/deberta-base-long-nli"


class Label(enum.Enum):
    ENTAILMENT = "entailment"
    NEUTRAL = "neutral"
    CONTRADICTION = "contradiction"


_ALIASES = {"entailment": Label.ENTAILMENT, "entail": Label.ENTAILMENT, "entails": Label.ENTAILMENT,
            "neutral": Label.NEUTRAL, "contradiction": Label.CONTRADICTION, "contradict": Label.CONTRADICTION,
            "contradicts": Label.CONTRADICTION}


def label_from_name(name: str) -> Label:
    """Map a model's class name (any case, e.g. ``ENTAILMENT``, ``Contradiction``) to a :class:`Label`."""
    key = str(name).strip().lower().replace("_", " ")
    if key in _ALIASES:
        return _ALIASES[key]
    raise CrevalError(f"NLI class name {name!r} is not one of entailment/neutral/contradiction",
                      "use a 3-way NLI model whose config.id2label names its classes")


@runtime_checkable
class NLI(Protocol):
    """What clustering needs: a name and a batched classifier of (premise, hypothesis) pairs."""
    name: str

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Label]: ...


class _CachedNLI:
    """Shared plumbing: ``classify`` serves pairs from the cache and sends only misses to ``_compute``."""
    name: str = "nli"
    use_cache: bool = True

    def _identity(self) -> dict:
        raise NotImplementedError

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        raise NotImplementedError

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Label]:
        pairs = [(str(p), str(h)) for p, h in pairs]
        if not pairs:
            return []
        if not self.use_cache:
            return list(self._compute(pairs))
        return cached_batch("nli", self._identity(), pairs, lambda ph: {"premise": ph[0], "hypothesis": ph[1]},
                            self._compute, model=self.name, encode=lambda lab: lab.value, decode=Label)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _dir_fingerprint(path: Path) -> str:
    """A short hash of a local model folder's config and training metadata (changes when retrained)."""
    h = hashlib.sha256()
    for f in ("config.json", "metadata.json"):
        if (path / f).exists():
            h.update((path / f).read_bytes())
    return h.hexdigest()[:16]


class CrossEncoderNLI(_CachedNLI):
    """A Hugging Face ``AutoModelForSequenceClassification`` NLI model run on CPU.

    Labels come from ``config.id2label`` (names matched case-insensitively). All pairs of a call go
    through the model in sub-batches of ``batch_size`` under ``torch.no_grad``.
    """

    def __init__(self, path_or_hub_id: str | Path, *, name: str | None = None, batch_size: int = 64,
                 max_length: int = 256, use_cache: bool = True):
        self.source = str(path_or_hub_id)
        self.name = name or self.source
        self.batch_size, self.max_length, self.use_cache = batch_size, max_length, use_cache
        local = Path(self.source).expanduser()
        if local.exists() or Path(self.source).is_absolute() or self.source.startswith("."):
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
            self.model = AutoModelForSequenceClassification.from_pretrained(self.source)
            self.tokenizer = AutoTokenizer.from_pretrained(self.source)
        except Exception as e:  # network, missing folder, wrong format: all user-fixable
            raise CrevalError(
                f"could not load the NLI model {self.source!r}: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                "give a local folder holding a sequence-classification model (config.json + weights), or a Hub id "
                "on a machine with internet (set HF_HUB_OFFLINE=1 to use a copy already in the Hugging Face cache); "
                "offline, use 'minilm-sick' (trained here) or 'llm:<model>'") from e
        self.model.eval()
        self._labels = self._label_map()
        self._fingerprint = _dir_fingerprint(local) if local.is_dir() else ""

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
        import numpy as np
        import torch
        rows = []
        with torch.no_grad():
            for i in range(0, len(pairs), self.batch_size):
                chunk = pairs[i:i + self.batch_size]
                enc = self.tokenizer([p for p, _ in chunk], [h for _, h in chunk], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
                rows.append(self.model(**enc).logits.float().cpu().numpy())
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, len(self._labels)))

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        return [self._labels[int(k)] for k in self.logits(pairs).argmax(axis=1)]


# ---------------------------------------------------------------------------------------------
# LLM entailment
# ---------------------------------------------------------------------------------------------
LLM_CHOICES = ("entailment", "neutral", "contradiction")
_LLM_SYSTEM = ("You are a careful annotator of natural-language inference. Given two statements, you decide "
               "how the first one (the premise) relates to the second one (the hypothesis). Reply with exactly "
               "one word.")
_LLM_USER = ("Premise: {premise}\n"
             "Hypothesis: {hypothesis}\n\n"
             "If the premise is true, must the hypothesis also be true?\n"
             "- entailment: yes, the premise guarantees the hypothesis\n"
             "- contradiction: no, the premise rules the hypothesis out\n"
             "- neutral: the premise neither guarantees nor rules it out\n"
             "Answer with one word: entailment, neutral or contradiction.")
LLM_PROMPT_VERSION = 1


def llm_messages(premise: str, hypothesis: str) -> list[dict]:
    """The chat messages :class:`LLMNLI` sends for one directed pair."""
    return [{"role": "system", "content": _LLM_SYSTEM},
            {"role": "user", "content": _LLM_USER.format(premise=premise, hypothesis=hypothesis)}]


class LLMNLI(_CachedNLI):
    """Entailment read from a chat model's log-probs of the three label words; the argmax wins."""

    def __init__(self, model, *, use_cache: bool = True):
        self.model = model
        self.name = f"llm:{getattr(model, 'name', type(model).__name__)}"
        self.use_cache = use_cache

    def _identity(self) -> dict:
        spec = getattr(self.model, "spec", None)
        ident = spec.identity() if spec is not None and hasattr(spec, "identity") else {"name": self.name}
        return {"backend": "llm", "model": ident, "prompt_version": LLM_PROMPT_VERSION}

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        scores = self.model.choice_logprobs_many([(llm_messages(p, h), list(LLM_CHOICES)) for p, h in pairs])
        out = []
        for s in scores:
            best = max(LLM_CHOICES, key=lambda c: float(s.get(c, float("-inf"))))
            out.append(Label(best))
        return out


# ---------------------------------------------------------------------------------------------
# loading by name
# ---------------------------------------------------------------------------------------------
_loaded: dict[str, NLI] = {}


def load_nli(name: str) -> NLI:
    """An NLI backend by name (loaded once per process).

    - ``minilm-sick``: MiniLM cross-encoder fine-tuned on SICK (trained on first use, ~2-3 min on 2 cores)
    - ``deberta``: the paper's ``tasksource/deberta-base-long-nli`` (needs the Hugging Face Hub)
    - ``hf:<hub id or local folder>``: any sequence-classification NLI model
    - ``llm:<registered model name>``: :class:`LLMNLI` over :func:`creval.models.registry.load_model`
    """
    name = str(name).strip()
    if name in _loaded:
        return _loaded[name]
    if name == "minilm-sick":
        from creval.measures.nli.train import ensure_minilm_sick
        nli: NLI = CrossEncoderNLI(ensure_minilm_sick(), name="minilm-sick")
    elif name == "deberta":
        nli = CrossEncoderNLI(DEBERTA_ID, name="deberta")
    elif name.startswith("hf:") and len(name) > 3:
        nli = CrossEncoderNLI(name[3:])
    elif name.startswith("llm:") and len(name) > 4:
        from creval.models.registry import load_model
        nli = LLMNLI(load_model(name[4:]))
    else:
        raise CrevalError(f"unknown NLI backend {name!r}",
                          "use 'minilm-sick', 'deberta', 'hf:<hub id or folder>' or 'llm:<model name>'")
    _loaded[name] = nli
    return nli


# ---------------------------------------------------------------------------------------------
# held-out data and evaluation
# ---------------------------------------------------------------------------------------------
def _data_dir(env: str, default_rel: str, what: str, probe: str) -> Path:
    d = paths.dataset_dir(env, f"entailment_paraphrase/{default_rel}")
    if not (d / probe).exists():
        raise CrevalError(f"{what} not found: {d / probe} is missing",
                          f"set {env} to the folder holding {probe}")
    return d


def sick_dir() -> Path:
    """The SICK 2014 folder: ``$CREVAL_SICK_DIR`` or ``<repo>/../shared/data/entailment_paraphrase/sick2014``."""
    return _data_dir("CREVAL_SICK_DIR", "sick2014", "SICK data", "SICK_train.txt")


def msrp_dir() -> Path:
    """The MSRP folder: ``$CREVAL_MSRP_DIR`` or ``<repo>/../shared/data/entailment_paraphrase/msrp``."""
    return _data_dir("CREVAL_MSRP_DIR", "msrp", "MSRP data", "msr-para-test.tsv")


_SICK_FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}


def read_sick(split: str = "train") -> list[tuple[str, str, Label]]:
    """SICK pairs ``(sentence_A, sentence_B, label)`` of ``split`` in train/trial/test."""
    if split not in _SICK_FILES:
        raise CrevalError(f"unknown SICK split {split!r}", "use train, trial or test")
    out = []
    with open(sick_dir() / _SICK_FILES[split], encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            out.append((row["sentence_A"], row["sentence_B"], label_from_name(row["entailment_judgment"])))
    return out


def read_msrp(split: str = "test") -> list[tuple[str, str, int]]:
    """MSRP pairs ``(string_1, string_2, quality)`` (1 = paraphrase) of ``split`` in train/val/test."""
    if split not in ("train", "val", "test"):
        raise CrevalError(f"unknown MSRP split {split!r}", "use train, val or test")
    out = []
    with open(msrp_dir() / f"msr-para-{split}.tsv", encoding="utf-8-sig", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            out.append((row["#1 String"], row["#2 String"], int(row["Quality"])))
    return out


def _macro_f1(gold: list, pred: list, classes: Sequence) -> float:
    f1s = []
    for c in classes:
        tp = sum(1 for g, p in zip(gold, pred) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred) if g == c and p != c)
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(f1s) / len(f1s)


def _accuracy(gold: list, pred: list) -> float:
    return sum(g == p for g, p in zip(gold, pred)) / max(len(gold), 1)


def evaluate_nli(nli: NLI | str, dataset: str = "sick", limit: int | None = 200, seed: int = 0) -> dict:
    """Accuracy of ``nli`` on held-out labelled pairs (``limit`` drawn at random with ``seed``; None = all).

    - ``sick``: SICK test, 3-way label accuracy and macro-F1; baseline = always the majority class (neutral).
    - ``msrp``: MSRP test as a paraphrase test, the way clustering uses NLI: a pair is a paraphrase iff
      each sentence entails the other (strict). Also reports the non-strict rule (no contradiction
      either way, not neutral both ways) and the always-"paraphrase" baseline.
    """
    if isinstance(nli, str):
        nli = load_nli(nli)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    if dataset == "sick":
        rows = read_sick("test")
        rows = rng.sample(rows, limit) if limit and limit < len(rows) else rows
        pred = nli.classify([(a, b) for a, b, _ in rows])
        gold = [g for _, _, g in rows]
        base = [Label.NEUTRAL] * len(gold)
        res = {"accuracy": _accuracy(gold, pred), "macro_f1": _macro_f1(gold, pred, list(Label)),
               "baseline": "always neutral", "baseline_accuracy": _accuracy(gold, base),
               "baseline_macro_f1": _macro_f1(gold, base, list(Label)), "pairs_evaluated": len(rows),
               "predicted": {lab.value: sum(p == lab for p in pred) for lab in Label}}
    elif dataset == "msrp":
        rows = read_msrp("test")
        rows = rng.sample(rows, limit) if limit and limit < len(rows) else rows
        labs = nli.classify([(a, b) for a, b, _ in rows] + [(b, a) for a, b, _ in rows])
        fwd, bwd = labs[:len(rows)], labs[len(rows):]
        gold = [q for _, _, q in rows]
        strict = [int(f == Label.ENTAILMENT and b == Label.ENTAILMENT) for f, b in zip(fwd, bwd)]
        loose = [int(Label.CONTRADICTION not in (f, b) and not (f == b == Label.NEUTRAL)) for f, b in zip(fwd, bwd)]
        base = [1] * len(gold)
        tp = sum(1 for g, p in zip(gold, strict) if g == p == 1)
        res = {"accuracy": _accuracy(gold, strict), "macro_f1": _macro_f1(gold, strict, [0, 1]),
               "precision": tp / max(sum(strict), 1), "recall": tp / max(sum(gold), 1),
               "accuracy_nonstrict": _accuracy(gold, loose), "macro_f1_nonstrict": _macro_f1(gold, loose, [0, 1]),
               "baseline": "always paraphrase", "baseline_accuracy": _accuracy(gold, base),
               "baseline_macro_f1": _macro_f1(gold, base, [0, 1]), "pairs_evaluated": 2 * len(rows)}
    else:
        raise CrevalError(f"unknown NLI evaluation dataset {dataset!r}", "use 'sick' or 'msrp'")
    return {"nli": nli.name, "dataset": dataset, "n": len(rows), **res,
            "seconds": round(time.perf_counter() - t0, 3)}
