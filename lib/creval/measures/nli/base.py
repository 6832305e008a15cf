"""What every entailment backend is (:mod:`creval.measures.nli.backends` has them): the three labels, the
:class:`NLI` protocol clustering needs, and :class:`CachedNLI`, which serves pairs from the shared call cache
(kind ``"nli"``) and sends only the misses to a backend's ``_compute``."""
from __future__ import annotations

import enum
from typing import Protocol, Sequence, runtime_checkable

from creval.core import cache as callcache
from creval.core.errors import CrevalError


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


class CachedNLI:
    """Shared plumbing: ``classify`` serves pairs from the cache and sends only misses to ``_compute``.

    ``name`` is the backend that really runs; ``requested`` the name it was asked for (they differ when
    :func:`load_nli` fell back, e.g. ``minilm-sick`` -> ``minilm-cosine``; ``fallback_reason`` says why)."""
    name: str = "nli"
    use_cache: bool = True
    fallback_reason: str | None = None
    lock = None     # the cache's lock around ``_compute``; UNLOCKED where ``_compute`` locks what it uses itself

    @property
    def requested(self) -> str:
        return getattr(self, "_requested", None) or self.name

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
        return callcache.cached_batch("nli", self._identity(), pairs,
                                      lambda ph: {"premise": ph[0], "hypothesis": ph[1]}, self._compute,
                                      model=self.name, encode=lambda lab: lab.value, decode=Label, lock=self.lock)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
