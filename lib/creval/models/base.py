"""The one model protocol every backend implements (:class:`Backend`) and the defaults of its flags
(:class:`BackendBase`). What it is asked is in :mod:`~creval.models.requests`, what it returns in
:mod:`~creval.models.records`, a model's declaration in :mod:`~creval.models.spec`, what a scored text follows in
:mod:`~creval.models.document`.

Log-prob definition: every backend states in ``LOGPROB_KIND`` what its token log-probs are.
``"raw"`` means log-softmax of the model's unscaled logits (temperature 1, before top-p), i.e. the
model's own probability of the token, which is what semantic entropy needs. A server's kind comes from its
spec (``can: {logprobs: raw | processed | none}``, filled in by ``creval check``; see models/capabilities.py):
``"processed"`` is after temperature or penalties (SGLang's default, vLLM before 0.8), and ``"server"`` means
a server whose kind nobody stated. The kind is stored with every record.

The verbs: ``sample`` (n seeded continuations with their token log-probs), ``chat`` (one reply),
``choice_logprobs`` (the log-prob of each given answer as the reply's start, :class:`ChoiceScores`) and
``loglikelihood`` (teacher-forced log-likelihood of a text, optionally given a context,
:class:`LogLikelihood`). Log-likelihoods are natural logs of the raw distribution; the scored sequence is
``[document start] + context + text`` (:func:`~creval.models.document.document_start`: the tokenizer's BOS where it
opens a document, else ``<|endoftext|>`` or the EOS; never a chat-turn opener), and only the text's tokens count.
A text longer than the model's window is scored in rolling windows
(:func:`~creval.models.document.rolling_windows`), each token seeing at least half a window of what precedes it.
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from creval.models.records import ChoiceScores, Completion, LogLikelihood, Sample
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest, SampleRequest
from creval.models.spec import ModelSpec


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
