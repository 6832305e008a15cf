"""llama.cpp backend: local GGUF models in-process (the embedded default).

The n samples of one prompt are drawn in ONE batched decode: the prompt is evaluated once on
sequence 0, shared with sequences 1..n-1 (``llama_memory_seq_cp`` on a unified KV cache, so the
prompt is stored once), then every live sequence advances by one token per ``llama_decode``.
Sampling (temperature, top-p) runs in numpy on the logits we copy out, so each sample has its own
seeded generator (sample ``i`` uses ``derive_seed(seed, i)``) and we read the log-probs for free.

Log-probs (``LOGPROB_KIND = "raw"``): log-softmax of the model's unscaled logits, i.e. the model's
own probability of each chosen token, independent of the sampling temperature and top-p.
``loglikelihood`` scores ``[document start] + context + text`` (``<|endoftext|>`` for SmolLM2) on sequence 0
(a shared context decoded once), in rolling windows of ``context - 1`` tokens when the text is longer.
"""
from __future__ import annotations

import ctypes
import os
import threading
from typing import Sequence

import numpy as np

from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.base import (
    ChatRequest,
    ChoiceRequest,
    ChoiceScores,
    Completion,
    LogLikelihood,
    LoglikelihoodRequest,
    ModelSpec,
    Sample,
    SampleRequest,
    derive_seed,
    document_start,
    rolling_windows,
    scored_tokens,
    split_thinking,
)
from creval.models.registry import locate_weights
from creval.models.sampling import log_softmax, sample_token, shared_groups

MAX_SEQ = 32          # sequences decoded together (n > MAX_SEQ is drawn in chunks)
N_BATCH = 512


class LlamaCppBackend:
    LOGPROB_KIND = "raw"

    def __init__(self, spec: ModelSpec):
        llama_cpp = heavy.llama_cpp()
        self.spec, self.lc = spec, llama_cpp
        self.path = locate_weights(spec)
        # CREVAL_THREADS overrides the spec (threads never change outputs): on a machine shared with other busy
        # processes, fewer threads than cores avoids llama.cpp's spinning thread barrier stalling
        self.threads = int(os.environ.get("CREVAL_THREADS") or 0) or spec.threads or os.cpu_count() or 1
        try:
            self.llm = llama_cpp.Llama(str(self.path), n_ctx=256, n_threads=self.threads, verbose=False)
        except Exception as e:  # llama.cpp raises ValueError on an unreadable file
            raise CrevalError(f"model {spec.name}: could not load {self.path}: {e}",
                              "reinstall the model package") from None
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        meta = self.llm.metadata
        template = meta.get("tokenizer.chat_template")
        if not template:
            raise CrevalError(f"model {spec.name} has no chat template in its GGUF metadata", "use an instruct model")
        tok = lambda key: self.llm.detokenize([int(meta[key])], special=True).decode() if key in meta else ""
        self.formatter = heavy.llama_chat_format().Jinja2ChatFormatter(
            template, eos_token=tok("tokenizer.ggml.eos_token_id"), bos_token=tok("tokenizer.ggml.bos_token_id"))
        self.version = meta.get("general.name", spec.model)
        desc = ctypes.create_string_buffer(256)
        self.lc.llama_model_desc(self.llm.model, desc, len(desc))
        self.quantisation = desc.value.decode(errors="ignore").split(" ")[-1]   # "llama 256M Q4_1" -> "Q4_1"
        self.begin = self._document_start()
        self.n_ctx = spec.context
        self.window = self.n_ctx - 1      # tokens per forward pass of ``loglikelihood``
        params = llama_cpp.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = self.n_ctx, N_BATCH, N_BATCH
        params.n_seq_max, params.kv_unified = MAX_SEQ, True
        params.n_threads = params.n_threads_batch = self.threads
        self.ctx = llama_cpp.llama_init_from_model(self.llm.model, params)
        if not self.ctx:
            raise CrevalError(f"model {spec.name}: llama.cpp could not create a context of {self.n_ctx} tokens",
                              "lower `context` in the model spec")
        self.mem = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(max(N_BATCH, MAX_SEQ * 8), 0, MAX_SEQ)
        self.lock = threading.Lock()
        self._held: list[int] = []        # prompt tokens sequence 0 holds (positions 0..len-1)
        # chat(): decode several requests together, their common prefix once (_generate_shared). Off: 1.40x on 2
        # loaded cores (benchmarks/bench_aut.py), and greedy replies differ with the batch (67% identical)
        self.batched = os.environ.get("CREVAL_BATCH_CHAT", "0") == "1"
        self.reused_tokens = 0            # prompt tokens served from the KV cache (prefix reuse)
        heavy.close_at_exit(self)

    # -- text <-> tokens ----------------------------------------------------------------------
    def _special(self, text: str) -> int | None:      # the id of the single special token spelled ``text``
        ids = self.llm.tokenize(text.encode(), add_bos=False, special=True)
        return ids[0] if len(ids) == 1 and self.llm.detokenize(ids, special=True).decode() == text else None

    def _document_start(self) -> int:
        """The token every scored text follows (:func:`~creval.models.base.document_start`, or the spec's
        ``document_start`` where it names one: e.g. to match a server that prepends its own BOS)."""
        bos, eos = (int(f(self.vocab)) for f in (self.lc.llama_vocab_bos, self.lc.llama_vocab_eos))
        name = {i: self.llm.detokenize([i], special=True).decode() for i in (bos, eos) if i >= 0}
        text = self.spec.document_start or document_start(name.get(bos), name.get(eos),
                                                          lambda t: self._special(t) is not None, self.spec.name)
        return [i for i, t in name.items() if t == text][0] if text in name.values() else self._special(text)

    def render(self, messages: Sequence[dict]) -> str:
        return self.formatter(messages=list(messages)).prompt

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False, special=special)

    def detok(self, tokens: list[int]) -> str:
        return self.llm.detokenize(tokens).decode("utf-8", errors="ignore")

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text, special=False))

    def is_eog(self, tok: int) -> bool:
        return bool(self.lc.llama_vocab_is_eog(self.vocab, tok))

    # -- low-level decoding -------------------------------------------------------------------
    def _decode(self, entries: list[tuple[int, int, list[int], bool]], ctx=None, batch=None) -> None:
        """Decode (token, pos, seq_ids, want_logits) entries as one batch (on ``ctx``, default the main one)."""
        b = batch if batch is not None else self.batch
        b.n_tokens = len(entries)
        for i, (tok, pos, seqs, logits) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = tok, pos, len(seqs), logits
            for j, s in enumerate(seqs):
                b.seq_id[i][j] = s
        if self.lc.llama_decode(ctx if ctx is not None else self.ctx, b) != 0:
            raise CrevalError(f"model {self.spec.name}: llama_decode failed (context of {self.n_ctx} tokens full?)",
                              "shorten the prompt or raise `context` in the model spec")

    def _logits(self, i: int, ctx=None) -> np.ndarray:
        ptr = self.lc.llama_get_logits_ith(ctx if ctx is not None else self.ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()  # float32, copied out of llama.cpp's buffer

    def _reuse_prefix(self, usable: list[int]) -> int:
        """Keep the longest prefix of ``usable`` that sequence 0 already holds, empty every other sequence,
        and return how many tokens were kept (0 when llama.cpp cannot trim sequence 0)."""
        pairs = list(zip(self._held, usable))
        keep = next((i for i, (a, b) in enumerate(pairs) if a != b), len(pairs))
        for s in range(1, MAX_SEQ):
            self.lc.llama_memory_seq_rm(self.mem, s, -1, -1)
        if not self.lc.llama_memory_seq_rm(self.mem, 0, keep, -1):
            self.lc.llama_memory_clear(self.mem, True)
            keep = 0
        self._held = []
        return keep

    def _prefill(self, tokens: list[int]) -> np.ndarray:
        """Hold ``tokens`` in sequence 0 and return the raw logits after the last one.

        Prefix reuse: the tokens sequence 0 already holds from the previous prompt are kept up to the
        first difference, so prompts that share a beginning (same system prompt and problem, a growing
        discussion) only pay for their new part. Every other sequence is emptied."""
        if len(tokens) >= self.n_ctx:
            raise CrevalError(f"prompt of {len(tokens)} tokens does not fit model {self.spec.name}'s context "
                              f"{self.n_ctx}", "raise `context` in the model spec")
        keep = self._reuse_prefix(tokens[:-1])           # the last token is always decoded: we need its logits
        rest = tokens[keep:]
        for start in range(0, len(rest), N_BATCH):
            chunk = rest[start:start + N_BATCH]
            last = start + len(chunk) == len(rest)
            self._decode([(t, keep + start + i, [0], last and i == len(chunk) - 1) for i, t in enumerate(chunk)])
        self._held = list(tokens)
        self.reused_tokens += keep
        return self._logits((len(rest) - 1) % N_BATCH)

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

    # -- protocol -----------------------------------------------------------------------------
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

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        """Exact log-prob of each choice's tokens after the rendered prompt (choices share the prompt's cache)."""
        out = []
        with self.lock:
            for r in reqs:
                prompt = self.tokenize(self.render(r.messages))
                first = log_softmax(self._prefill(prompt).astype(np.float64))
                choice_toks = [self.tokenize(c, special=False) for c in r.choices]
                res: dict[str, float] = {}
                for c0 in range(0, len(r.choices), MAX_SEQ - 1):
                    group = list(range(c0, min(c0 + MAX_SEQ - 1, len(r.choices))))
                    entries, where = [], {}
                    for slot, ci in enumerate(group, start=1):
                        self.lc.llama_memory_seq_rm(self.mem, slot, -1, -1)
                        self.lc.llama_memory_seq_cp(self.mem, 0, slot, -1, -1)
                        for j, t in enumerate(choice_toks[ci][:-1]):
                            where[(ci, j)] = len(entries)
                            entries.append((t, len(prompt) + j, [slot], True))
                    if entries:
                        self._decode(entries)
                    for ci in group:
                        tks = choice_toks[ci]
                        lp = float(first[tks[0]])
                        for j in range(1, len(tks)):
                            lp += float(log_softmax(self._logits(where[(ci, j - 1)]).astype(np.float64))[tks[j]])
                        res[r.choices[ci]] = lp
                out.append(ChoiceScores(res, len(prompt)))
        return out

    def _score(self, tokens: list[int], start: int) -> list[float]:
        """log p(tokens[j] | tokens[:j]) for j in ``start .. len(tokens)-1``, teacher-forced on sequence 0.

        ``tokens`` must fit the context. What sequence 0 already holds is reused up to ``start - 1`` (the
        first position whose logits are read)."""
        keep = self._reuse_prefix(tokens[:start - 1])
        feed, out = tokens[:-1], []        # the last token is only a target
        for c0 in range(keep, len(feed), N_BATCH):
            chunk = feed[c0:c0 + N_BATCH]
            self._decode([(t, c0 + i, [0], c0 + i >= start - 1) for i, t in enumerate(chunk)])
            for i in range(len(chunk)):
                pos = c0 + i
                if pos >= start - 1:
                    x = self._logits(i).astype(np.float64)
                    m = x.max()
                    out.append(float(x[tokens[pos + 1]] - m - np.log(np.exp(x - m).sum())))
        self._held = list(feed)
        self.reused_tokens += keep
        return out

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        out = []
        with self.lock:
            for r in reqs:
                prefix, text = scored_tokens(lambda t: self.tokenize(t, special=False), self.begin, r.text, r.context)
                seq, lps = prefix + text, []
                wins = rolling_windows(len(prefix), len(seq), self.window) if text else []
                for lo, start, hi in wins:
                    lps += self._score(seq[lo:hi], start - lo)
                out.append(LogLikelihood(float(sum(lps)), tuple(lps), len(r.text.encode()), len(prefix) - 1,
                                         max(len(wins), 1), 0, self.spec.name, self.quantisation, self.LOGPROB_KIND))
        return out

    def close(self) -> None:
        """Free the batch, the context and the model now (once); also at interpreter exit (heavy.close_at_exit)."""
        batch, ctx, llm = (self.__dict__.pop(k, None) for k in ("batch", "ctx", "llm"))
        try:
            batch is not None and self.lc.llama_batch_free(batch)
            ctx is not None and self.lc.llama_free(ctx)
            llm is not None and llm.close()
        except Exception:   # noqa: BLE001 - freeing is best effort
            pass

    __del__ = close
