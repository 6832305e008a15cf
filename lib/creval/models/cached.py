"""``Model``: the object every chapter and module calls. It wraps a backend with the call cache.

Sampled generations are cached per sample index (``n=10`` then ``n=20`` reuses the first ten), chat
turns, choice scores and log-likelihoods per request. Only cache misses reach the backend, in one batch.
A server's misses go out together through its spec's shared in-flight budget and each result is cached as it
arrives; a local backend's misses are computed in one batch under the process's local-compute lock (units
run in threads). The batch verbs take ``tags``: one dict per request, recorded on that request's ledger record (beside
the tags of any enclosing ``LEDGER.tagged`` block), so a batch of several agents' turns stays attributable.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from creval.core.cache import CallCache, cached_batch
from creval.models import replies
from creval.models.base import Backend
from creval.models.probe import identify_once
from creval.models.records import ChoiceScores, Completion, LogLikelihood, Sample
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest, SampleRequest


class _Usage:
    def __init__(self, spec, fn):
        self.spec, self.fn = spec, fn

    def __call__(self, r):
        return self.fn(r)

    def cost(self, tin, tout):
        return self.spec.cost(tin, tout)


class Model:
    def __init__(self, backend: Backend, cache: CallCache | None = None):
        self.backend, self.spec, self.cache = backend, backend.spec, cache
        self.name = self.spec.name
        self.logprob_kind = backend.LOGPROB_KIND
        self.concurrent = bool(backend.CONCURRENT)   # a server: results stream in
        self.lock = backend.CALL_LOCK                # a backend that gathers across units locks itself

    def _verb(self, fn):
        """``(compute, stream)`` for :func:`cached_batch`: a server's verb streams its results."""
        if self.concurrent:
            return (lambda items, done: fn(items, done=done)), True
        return fn, False

    def _offline(self, requests, meta=lambda item: {}):
        """For a server: the batch-file lines of a verb's items (``requests(items)`` -> (path, body)), each with
        what reading its answer back needs (the spec and the item); None for a local backend."""
        if not self.concurrent:
            return None
        from dataclasses import asdict
        spec = asdict(self.spec)

        def lines(items):
            return [(p, b, {"spec": spec, **meta(it)}) for it, (p, b) in zip(items, requests(items))]
        return lines

    def server(self) -> dict | None:
        """For a server: its name and version (asked once per process: ``GET /version`` and the headers) and what
        its log-probs are, for the run manifest; None for a model computed here."""
        if not self.spec.is_server:
            return None
        return {**identify_once(self.spec), "logprobs": self.logprob_kind}

    def __repr__(self) -> str:
        return f"Model({self.name!r}, backend={self.spec.backend})"

    def _ident(self) -> dict:
        return {**self.spec.identity(), "logprob_kind": self.logprob_kind}

    # -- sampling ---------------------------------------------------------------------------
    def sample(self, messages: Sequence[dict], n: int, *, temperature: float = 1.0, top_p: float = 0.9,
               max_tokens: int = 64, stop: Sequence[str] = (), seed: int = 0) -> list[Sample]:
        """``n`` samples of the assistant's reply to ``messages``, each with its token log-probs."""
        req = SampleRequest(tuple(messages), temperature, top_p, max_tokens, tuple(stop), seed)

        def fix(s: Sample) -> Sample:
            replies.checked_sample(self.spec, s.text, "")      # every backend: a sample that thinks is no answer
            return replace(s, prompt_tokens=s.prompt_tokens or self.prompt_tokens(messages))

        if self.concurrent:
            def compute(indices, done):
                self.backend.sample(req, indices, done=lambda j, s: done(j, fix(s)))
        else:
            def compute(indices):
                return [fix(s) for s in self.backend.sample(req, indices)]

        offline = self._offline(lambda idx: self.backend.sample_requests(req, idx),
                                lambda i: {"prompt_tokens": self.prompt_tokens(messages)})
        return cached_batch("sample", self._ident(), list(range(n)), lambda i: {**req.describe(), "index": i},
                            compute, model=self.name, cache=self.cache, lock=self.lock, stream=self.concurrent,
                            offline=offline,
                            usage=_Usage(self.spec, lambda s: (s.prompt_tokens, s.n_tokens)),
                            encode=Sample.to_dict, decode=Sample.from_dict)

    # -- chat -------------------------------------------------------------------------------
    def chat_many(self, conversations: Sequence[Sequence[dict]], *, temperature: float = 0.0,
                  max_tokens: int = 256, seed: int = 0, tags: Sequence[dict] | None = None) -> list[Completion]:
        """One reply per conversation (one batch); ``tags[i]`` goes on conversation ``i``'s ledger record."""
        reqs = [ChatRequest(tuple(m), temperature, max_tokens, seed) for m in conversations]
        compute, stream = self._verb(self.backend.chat)
        offline = self._offline(lambda rs: self.backend.chat_requests(rs), lambda r: {"item": r.describe()})
        return cached_batch("chat", self._ident(), reqs, ChatRequest.describe, compute, stream=stream, offline=offline,
                            model=self.name, cache=self.cache, lock=self.lock, tags=tags,
                            usage=_Usage(self.spec, lambda c: (c.input_tokens, c.output_tokens + c.reasoning_tokens)),
                            encode=Completion.to_dict, decode=lambda d: Completion(**d))

    def chat(self, messages: Sequence[dict], **kw) -> Completion:
        return self.chat_many([messages], **kw)[0]

    # -- choice scoring ---------------------------------------------------------------------
    def choice_logprobs_many(self, items: Sequence[tuple[Sequence[dict], Sequence[str]]], *,
                             tags: Sequence[dict] | None = None) -> list[ChoiceScores]:
        """For each ``(messages, choices)``, the log-prob of each choice as the start of the reply."""
        reqs = [ChoiceRequest(tuple(m), tuple(c)) for m, c in items]
        compute, stream = self._verb(self.backend.choice_logprobs)
        offline = self._offline(lambda rs: self.backend.choice_requests(rs), lambda r: {"item": r.describe()})
        return cached_batch("choice", self._ident(), reqs, ChoiceRequest.describe, compute, stream=stream,
                            offline=offline,
                            model=self.name, cache=self.cache, lock=self.lock, tags=tags,
                            usage=_Usage(self.spec, lambda r: (r.input_tokens, 1)),
                            encode=ChoiceScores.to_dict, decode=ChoiceScores.from_dict)

    def choice_logprobs(self, messages: Sequence[dict], choices: Sequence[str]) -> ChoiceScores:
        return self.choice_logprobs_many([(messages, choices)])[0]

    # -- log-likelihood ---------------------------------------------------------------------
    def loglikelihood_many(self, items: Sequence[str | tuple[str, str | None]], *,
                           tags: Sequence[dict] | None = None) -> list[LogLikelihood]:
        """Teacher-forced log-likelihood of each ``text`` or ``(text, context)``; see :class:`LogLikelihood`.

        The context's tokens condition the text and are not counted; an empty context is no context."""
        reqs = [LoglikelihoodRequest(*((it, None) if isinstance(it, str) else (it[0], it[1] or None))) for it in items]
        compute, stream = self._verb(self.backend.loglikelihood)
        offline = self._offline(lambda rs: self.backend.loglikelihood_requests(rs), lambda r: {"item": r.describe()})
        out = cached_batch("loglikelihood", self._ident(), reqs, LoglikelihoodRequest.describe, compute,
                           stream=stream, offline=offline, model=self.name, cache=self.cache, lock=self.lock, tags=tags,
                           usage=_Usage(self.spec, lambda r: (r.context_tokens + r.n_tokens + r.skipped_tokens + 1, 0)),
                           encode=LogLikelihood.to_dict, decode=LogLikelihood.from_dict)
        return [r if r.model == self.name else replace(r, model=self.name) for r in out]

    def loglikelihood(self, text: str, context: str | None = None) -> LogLikelihood:
        return self.loglikelihood_many([(text, context)])[0]

    # -- tokens -----------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        return self.backend.count_tokens(text)

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        """Approximate prompt size: content tokens plus a few template tokens per message."""
        return self.count_tokens("\n".join(m["content"] for m in messages)) + 4 * len(messages)
