"""Sampling for the llama.cpp backend: ``sample`` (n continuations of one prompt, the prompt evaluated once and
shared by every sequence) and ``chat`` (one reply per request; with ``batched`` several requests decoded together,
their common prefix once). Temperature and top-p run in numpy on the copied logits (:func:`~creval.models.
sampling.sample_token`), each sample with its own seeded generator."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from creval.models.base import ChatRequest, Completion, Sample, SampleRequest, derive_seed, split_thinking
from creval.models.llamacpp_load import MAX_SEQ, N_BATCH
from creval.models.sampling import sample_token, shared_groups


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

    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        prompt = self.tokenize(self.render(req.messages))
        out: list[Sample] = []
        with self.lock:
            for c in range(0, len(indices), MAX_SEQ):
                chunk = indices[c:c + MAX_SEQ]
                out += self._generate(prompt, [derive_seed(req.seed, i) for i in chunk], req.temperature,
                                      req.top_p, req.max_tokens, req.stop)
        return out

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        """Several requests are decoded together with their common prefix decoded once
        (:meth:`_generate_shared`); with ``batched`` off (``CREVAL_BATCH_CHAT=0``) one at a time, each
        reusing the prefix sequence 0 still holds from the previous prompt."""
        prompts = [self.tokenize(self.render(r.messages)) for r in reqs]
        samples: list[Sample | None] = [None] * len(reqs)
        with self.lock:
            if self.batched and len(reqs) > 1:
                for group in shared_groups(prompts, [r.max_tokens for r in reqs], self.n_ctx, MAX_SEQ):
                    if len(group) == 1:
                        continue
                    res = self._generate_shared([prompts[k] for k in group],
                                                [derive_seed(reqs[k].seed, 0) for k in group],
                                                [reqs[k].temperature for k in group],
                                                [reqs[k].max_tokens for k in group])
                    for k, smp in zip(group, res):
                        samples[k] = smp
            for k, r in enumerate(reqs):
                if samples[k] is None:
                    samples[k] = self._generate(prompts[k], [derive_seed(r.seed, 0)], r.temperature, 1.0,
                                                r.max_tokens, ())[0]
        out = []
        for prompt, s in zip(prompts, samples):
            text, reasoning = split_thinking(s.text) if self.spec.thinking else (s.text.strip(), "")
            rt = self.count_tokens(reasoning) if reasoning else 0
            out.append(Completion(text, len(prompt), s.n_tokens - rt, reasoning, rt, s.finish_reason))
        return out

    def _generate_shared(self, prompts: list[list[int]], seeds: list[int], temps: list[float],
                         max_tokens: list[int]) -> list[Sample]:
        """One continuation per prompt, decoded together on the main (unified) KV cache: the prompts' common
        token prefix is decoded once on sequence 0 (keeping what sequence 0 already held from the previous
        call) and shared with sequences 1..n-1 (``llama_memory_seq_cp``: no copy in a unified cache); the
        suffixes are prefilled in shared batches; then every live sequence advances one token per decode.
        Afterwards sequence 0 holds the common prefix only, ready for the next call's reuse."""
        n = len(prompts)
        shortest = min(len(p) for p in prompts) - 1          # every prompt keeps >= 1 own token (its logits)
        common = 0
        for col in zip(*prompts):
            if common >= shortest or len(set(col)) != 1:
                break
            common += 1
        head = prompts[0][:common]
        keep = self._reuse_prefix(head)
        for c0 in range(keep, common, N_BATCH):
            self._decode([(t, c0 + i, [0], False) for i, t in enumerate(head[c0:c0 + N_BATCH])])
        self.reused_tokens += keep
        for q in range(1, n):
            self.lc.llama_memory_seq_cp(self.mem, 0, q, -1, -1)
        entries = [(t, common + i, [q], i == len(p) - common - 1, q)
                   for q, p in enumerate(prompts) for i, t in enumerate(p[common:])]
        rows: dict[int, np.ndarray] = {}
        for c0 in range(0, len(entries), N_BATCH):
            chunk = entries[c0:c0 + N_BATCH]
            self._decode([e[:4] for e in chunk])
            rows.update({e[4]: self._logits(i) for i, e in enumerate(chunk) if e[3]})
        rngs = [np.random.default_rng(sd) for sd in seeds]
        pos = [len(p) for p in prompts]
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        done: list[str | None] = [None] * n
        while True:
            step = []
            for q in range(n):
                if done[q] is not None:
                    continue
                t, lp = sample_token(rows[q], temps[q], 1.0, rngs[q])
                toks[q].append(t)
                lps[q].append(lp)
                if self.is_eog(t):
                    done[q] = "stop"
                    toks[q].pop()
                elif len(toks[q]) >= max_tokens[q]:
                    done[q] = "length"
                else:
                    step.append(q)
            if not step:
                break
            self._decode([(toks[q][-1], pos[q], [q], True) for q in step])
            rows = {q: self._logits(i) for i, q in enumerate(step)}
            for q in step:
                pos[q] += 1
        for q in range(1, n):
            self.lc.llama_memory_seq_rm(self.mem, q, -1, -1)
        if self.lc.llama_memory_seq_rm(self.mem, 0, common, -1):
            self._held = list(head)
        else:
            self.lc.llama_memory_clear(self.mem, True)
            self._held = []
        return [Sample(self.detok(toks[q]), tuple(lps[q]), done[q] or "length") for q in range(n)]
