"""Sampling for the llama.cpp backend: ``sample`` (n continuations of one prompt, the prompt evaluated once and
shared by every sequence) and ``chat`` (one reply per request). With ``batched`` (gathering on) both become
:class:`~creval.models.llamacpp_gather.Job` s that decode together with every other unit's; off, one request at a
time on sequence 0 (and its samples' sequences). Temperature and top-p run in numpy on the copied logits
(:func:`~creval.models.sampling.sample_token`), each sample with its own seeded generator."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from creval.core.cache import LOCAL_COMPUTE
from creval.core.errors import CrevalError
from creval.models.llamacpp_gather import Job
from creval.models.llamacpp_load import MAX_SEQ
from creval.models.records import Completion, Sample
from creval.models.replies import split_thinking
from creval.models.requests import ChatRequest, SampleRequest, derive_seed
from creval.models.sampling import sample_token


class SamplingMixin:
    """``sample`` and ``chat`` of :class:`~creval.models.llamacpp.LlamaCppBackend`."""

    def _generate(self, prompt: list[int], seeds: list[int], temperature: float, top_p: float,
                  max_tokens: int, stop: Sequence[str]) -> list[Sample]:
        """Generate one continuation per seed: the prompt is evaluated once and shared by all sequences."""
        first = self._prefill(prompt)
        for s in range(1, len(seeds)):
            self.lc.llama_memory_seq_cp(self.mem, 0, s, -1, -1)
        return self._continue(first, len(prompt), seeds, list(range(len(seeds))), temperature, top_p, max_tokens, stop)

    def _continue(self, first: np.ndarray, n_prompt: int, seeds: list[int], seqs: list[int], temperature: float,
                  top_p: float, max_tokens: int, stop: Sequence[str]) -> list[Sample]:
        """Advance sequences ``seqs`` (which already hold the prompt) together, one batched decode per token."""
        n = len(seeds)
        budget = min(max_tokens, (self.n_ctx - n_prompt - 1) // n)
        rngs = [np.random.default_rng(sd) for sd in seeds]
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        done: list[str | None] = [None] * n
        rows = {s: first for s in range(n)}     # raw logits of the next token, per sequence
        pos = n_prompt
        for step in range(budget):
            live = [s for s in range(n) if done[s] is None]
            entries = []
            for s in live:
                t, lp = sample_token(rows[s], temperature, top_p, rngs[s])
                toks[s].append(t)
                lps[s].append(lp)
                if self.is_eog(t):
                    done[s] = "stop"
                    toks[s].pop()          # the end token's log-prob counts; its text does not
                    continue
                if stop and any(x in self.detok(toks[s][-8:]) for x in stop):
                    done[s] = "stop"
                    continue
                if step == budget - 1:
                    done[s] = "length"
                    continue
                entries.append((t, pos, [seqs[s]], s))
            if not entries:
                break
            self._decode([(t, p, sq, True) for t, p, sq, _ in entries])
            rows = {e[3]: self._logits(i) for i, e in enumerate(entries)}
            pos += 1
        out = []
        for s in range(n):
            text = self.detok(toks[s])
            for x in stop:
                if x in text:
                    text = text[:text.index(x)]
            out.append(Sample(text, tuple(lps[s]), done[s] or "length"))
        return out

    def _fits(self, prompt: list[int]) -> None:
        if len(prompt) >= self.n_ctx:
            raise CrevalError(f"prompt of {len(prompt)} tokens does not fit model {self.spec.name}'s context "
                              f"{self.n_ctx}", "raise `context` in the model spec")

    def sample_jobs(self, req: SampleRequest, indices: Sequence[int], prompt: list[int]) -> list[Job]:
        """The sequences of ``sample``: sample ``i`` seeded ``derive_seed(req.seed, i)``, in chunks of
        :data:`MAX_SEQ` whose budget is the serial path's (each chunk's samples share the context)."""
        self._fits(prompt)
        jobs = []
        for c in range(0, len(indices), MAX_SEQ):
            chunk = indices[c:c + MAX_SEQ]
            budget = min(req.max_tokens, (self.n_ctx - len(prompt) - 1) // len(chunk))
            jobs += [Job(tuple(prompt), derive_seed(req.seed, i), req.temperature, req.top_p, budget, tuple(req.stop))
                     for i in chunk]
        return jobs

    def chat_job(self, req: ChatRequest, prompt: list[int]) -> Job:
        """The sequence of one chat reply (greedy at temperature 0, no nucleus, no stop string)."""
        self._fits(prompt)
        return Job(tuple(prompt), derive_seed(req.seed, 0), req.temperature, 1.0,
                   min(req.max_tokens, self.n_ctx - len(prompt) - 1))

    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        prompt = self.tokenize(self.render(req.messages))
        if self.batched:
            return self.gather(("generate",), self.sample_jobs(req, indices, prompt))
        out: list[Sample] = []
        with LOCAL_COMPUTE, self.lock:
            for c in range(0, len(indices), MAX_SEQ):
                chunk = indices[c:c + MAX_SEQ]
                out += self._generate(prompt, [derive_seed(req.seed, i) for i in chunk], req.temperature,
                                      req.top_p, req.max_tokens, req.stop)
        return out

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        """One reply per request: with ``batched`` (gathering on) every request's sequence decodes together with
        those of the other units in flight (:mod:`~creval.models.llamacpp_gather`); off, one request at a time,
        each reusing the prefix sequence 0 still holds from the previous prompt."""
        prompts = [self.tokenize(self.render(r.messages)) for r in reqs]
        if self.batched:
            samples = self.gather(("generate",), [self.chat_job(r, p) for r, p in zip(reqs, prompts)])
        else:
            with LOCAL_COMPUTE, self.lock:
                samples = [self._generate(p, [derive_seed(r.seed, 0)], r.temperature, 1.0, r.max_tokens, ())[0]
                           for r, p in zip(reqs, prompts)]
        out = []
        for prompt, s in zip(prompts, samples):
            text, reasoning = split_thinking(s.text) if self.spec.thinking else (s.text.strip(), "")
            rt = self.count_tokens(reasoning) if reasoning else 0
            out.append(Completion(text, len(prompt), s.n_tokens - rt, reasoning, rt, s.finish_reason))
        return out
