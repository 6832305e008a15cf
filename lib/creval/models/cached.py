"""``Model``: the object every chapter and module calls. It wraps a backend with the call cache.

Sampled generations are cached per sample index (``n=10`` then ``n=20`` reuses the first ten), chat
turns and choice scores per request. Only cache misses reach the backend, in one batch.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from creval.core.cache import CallCache, cached_batch
from creval.models.base import Backend, ChatRequest, ChoiceRequest, Completion, Sample, SampleRequest


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

    def __repr__(self) -> str:
        return f"Model({self.name!r}, backend={self.spec.backend})"

    def _ident(self) -> dict:
        return {**self.spec.identity(), "logprob_kind": self.logprob_kind}

    # -- sampling ---------------------------------------------------------------------------
    def sample(self, messages: Sequence[dict], n: int, *, temperature: float = 1.0, top_p: float = 0.9,
               max_tokens: int = 64, stop: Sequence[str] = (), seed: int = 0) -> list[Sample]:
        """``n`` samples of the assistant's reply to ``messages``, each with its token log-probs."""
        req = SampleRequest(tuple(messages), temperature, top_p, max_tokens, tuple(stop), seed)

        def compute(indices):
            pt = self.prompt_tokens(messages)
            return [replace(s, prompt_tokens=s.prompt_tokens or pt) for s in self.backend.sample(req, indices)]

        return cached_batch("sample", self._ident(), list(range(n)), lambda i: {**req.describe(), "index": i},
                            compute, model=self.name, cache=self.cache,
                            usage=_Usage(self.spec, lambda s: (s.prompt_tokens, s.n_tokens)),
                            encode=Sample.to_dict, decode=Sample.from_dict)

    # -- chat -------------------------------------------------------------------------------
    def chat_many(self, conversations: Sequence[Sequence[dict]], *, temperature: float = 0.0,
                  max_tokens: int = 256, seed: int = 0) -> list[Completion]:
        reqs = [ChatRequest(tuple(m), temperature, max_tokens, seed) for m in conversations]
        return cached_batch("chat", self._ident(), reqs, ChatRequest.describe, self.backend.chat,
                            model=self.name, cache=self.cache,
                            usage=_Usage(self.spec, lambda c: (c.input_tokens, c.output_tokens + c.reasoning_tokens)),
                            encode=Completion.to_dict, decode=lambda d: Completion(**d))

    def chat(self, messages: Sequence[dict], **kw) -> Completion:
        return self.chat_many([messages], **kw)[0]

    # -- choice scoring ---------------------------------------------------------------------
    def choice_logprobs_many(self, items: Sequence[tuple[Sequence[dict], Sequence[str]]]) -> list[dict[str, float]]:
        reqs = [ChoiceRequest(tuple(m), tuple(c)) for m, c in items]
        return cached_batch("choice", self._ident(), reqs, ChoiceRequest.describe, self.backend.choice_logprobs,
                            model=self.name, cache=self.cache,
                            usage=_Usage(self.spec, lambda r: (int(r.get("_input_tokens", 0)), 1)))

    def choice_logprobs(self, messages: Sequence[dict], choices: Sequence[str]) -> dict[str, float]:
        return self.choice_logprobs_many([(messages, choices)])[0]

    # -- tokens -----------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        return self.backend.count_tokens(text)

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        """Approximate prompt size: content tokens plus a few template tokens per message."""
        return self.count_tokens("\n".join(m["content"] for m in messages)) + 4 * len(messages)
