"""What a caller asks a backend (the protocol is :mod:`creval.models.base`): one request type per verb, each
with the ``describe()`` dict its cache key is built from, and the seed of each sample of a seeded request."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from creval.models.document import SCORED_AFTER

Message = dict  # {"role": "system"|"user"|"assistant", "content": str}


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score ``text`` after ``context`` (``None``: after the begin-of-text token only)."""
    text: str
    context: str | None = None

    def describe(self) -> dict:
        return {"text": self.text, "context": self.context, "start": SCORED_AFTER}


@dataclass(frozen=True)
class SampleRequest:
    messages: tuple
    temperature: float = 1.0
    top_p: float = 0.9
    max_tokens: int = 64
    stop: tuple[str, ...] = ()
    seed: int = 0

    def describe(self) -> dict:
        return {"messages": list(self.messages), "temperature": self.temperature, "top_p": self.top_p,
                "max_tokens": self.max_tokens, "stop": list(self.stop), "seed": self.seed}


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 0

    def describe(self) -> dict:
        return {"messages": list(self.messages), "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed}


@dataclass(frozen=True)
class ChoiceRequest:
    """Log-probability of each of ``choices`` as the start of the assistant's reply."""
    messages: tuple
    choices: tuple[str, ...]

    def describe(self) -> dict:
        return {"messages": list(self.messages), "choices": list(self.choices)}


def derive_seed(seed: int, index: int) -> int:
    """A 31-bit seed for sample ``index`` of a request seeded with ``seed``."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{index}".encode()).digest()[:4], "little") & 0x7FFFFFFF
