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

The verbs live beside this module: loading in :mod:`~creval.models.llamacpp_load`, ``sample``/``chat`` in
:mod:`~creval.models.llamacpp_sample`, ``loglikelihood``/``choice_logprobs`` in :mod:`~creval.models.llamacpp_score`;
this one holds the tokenizer and the decoding primitives they share.

Gathering (opt-in: ``CREVAL_LLAMACPP_GATHER=1``): the ``sample`` and ``chat`` requests of every unit in flight
queue while the model is busy (:mod:`~creval.models.gather`) and decode together as the sequences of one streamed
batch that admits later requests as they come (:mod:`~creval.models.llamacpp_gather`), each prompt reusing what
the cache still holds; studies then keep
several units in flight (:func:`creval.models.width.width` reads :attr:`LlamaCppBackend.GATHERS`). Off, every
request runs alone, one at a time, as before (the two are compared by ``benchmarks/bench_engines.py``).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Sequence

import numpy as np

from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.base import BackendBase
from creval.models.document import document_start
from creval.models.gather import UNLOCKED, Gatherer, Switch
from creval.models.llamacpp_gather import GatherMixin
from creval.models.llamacpp_load import GATHER_CELLS, MAX_SEQ, N_BATCH, N_SEQ, choose_threads, new_context, open_model
from creval.models.llamacpp_sample import SamplingMixin
from creval.models.llamacpp_score import ScoringMixin, target_logprobs
from creval.models.spec import ModelSpec
from creval.models.weights import check_local, locate_weights

RECHECK = 5.0        # seconds between two choices of the thread count (each reads /proc/loadavg for ~50 ms)

GATHER_ENV = "CREVAL_LLAMACPP_GATHER"
"""The switch: ``1`` turns gathering on; unset or ``0``, one request at a time, one unit at a time (the default:
on 2 CPU cores gathering was not faster side by side, 0.65x on AUT generation and 0.93x on 16 fixed chats, and
batched greedy replies part from the serial ones in 11 of 16; docs/performance.md, "Second pass")."""

__all__ = ["LlamaCppBackend", "MAX_SEQ", "N_BATCH", "choose_threads", "target_logprobs"]


class GatherLock:
    """A backend's ``CALL_LOCK`` that follows its gathering switch, readable on the class (nothing loaded).

    When it gathers the backend must be handed no lock: its gatherer takes the local-compute lock itself after
    queueing. Given that lock by :func:`~creval.core.cache.cached_batch`, a caller would already hold it on
    reaching the gatherer, which then runs that caller's requests alone, at once: nothing is ever gathered.
    Off, the lock is the default one (None: :func:`~creval.core.cache.cached_batch` takes the local-compute lock)."""

    def __init__(self, switch: Switch):
        self.switch = switch

    def __get__(self, obj, owner=None):
        return UNLOCKED if self.switch.__get__(obj, owner) else None


class LlamaCppBackend(GatherMixin, SamplingMixin, ScoringMixin, BackendBase):
    check = staticmethod(check_local)   # is a spec of this backend usable here (nothing loaded)
    LOGPROB_KIND = "raw"
    GATHERS = Switch(GATHER_ENV, default=False)     # opt-in: CREVAL_LLAMACPP_GATHER=1
    CALL_LOCK = GatherLock(GATHERS)                 # read on the class before loading (registry.LazyBackend)

    def __init__(self, spec: ModelSpec):
        llama_cpp = heavy.llama_cpp()
        self.spec, self.lc = spec, llama_cpp
        self.path = locate_weights(spec)
        self.threads = choose_threads(spec)     # CREVAL_THREADS, the spec, else the idle cores
        self.fixed_threads = bool(os.environ.get("CREVAL_THREADS") or spec.threads)
        self.threads_checked = time.monotonic()
        self.llm, self.formatter, self.version, self.quantisation = open_model(spec, self.path, self.threads)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.begin = self._document_start()
        self.n_ctx = spec.context         # the longest prompt and reply of one sequence; the scoring window
        self.window = self.n_ctx - 1      # tokens per forward pass of ``loglikelihood``
        # batched: sample and chat requests (of one call and of every unit in flight) decode together; off, one
        # request at a time. Requests reach the backend through the gatherer, which takes the local-compute lock
        self.batched = self.GATHERS
        self.cells = max(self.n_ctx, GATHER_CELLS) if self.batched else self.n_ctx
        self.CALL_LOCK = UNLOCKED if self.batched else None     # as the class said when this one was made
        self.gather = self._gatherer()
        self.ctx = new_context(spec, self.llm, self.cells, self.threads)
        self.mem = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(max(N_BATCH, MAX_SEQ * 8), 0, MAX_SEQ)
        self.lock = threading.Lock()
        self.kept: dict[int, list[int]] = {}   # sequence id -> the tokens it holds (positions 0..len-1)
        self.reused_tokens = 0            # prompt tokens served from the KV cache (prefix reuse)
        heavy.close_at_exit(self)

    # -- text <-> tokens ----------------------------------------------------------------------
    def _special(self, text: str) -> int | None:      # the id of the single special token spelled ``text``
        ids = self.llm.tokenize(text.encode(), add_bos=False, special=True)
        return ids[0] if len(ids) == 1 and self.llm.detokenize(ids, special=True).decode() == text else None

    def _document_start(self) -> int:
        """The token every scored text follows (:func:`~creval.models.document.document_start`, or the spec's
        ``document_start`` where it names one: e.g. to match a server that prepends its own BOS)."""
        bos, eos = (int(f(self.vocab)) for f in (self.lc.llama_vocab_bos, self.lc.llama_vocab_eos))
        name = {i: self.llm.detokenize([i], special=True).decode() for i in (bos, eos) if i >= 0}
        text = self.spec.document_start or document_start(name.get(bos), name.get(eos),
                                                          lambda t: self._special(t) is not None, self.spec.name)
        return [i for i, t in name.items() if t == text][0] if text in name.values() else self._special(text)

    @property
    def _held(self) -> list[int]:
        """The tokens sequence 0 holds (the serial paths use sequence 0 only)."""
        return self.kept.get(0, [])

    @_held.setter
    def _held(self, tokens: list[int]) -> None:     # the serial paths: sequence 0 alone holds anything reusable
        self.kept = {0: list(tokens)} if tokens else {}

    def _gatherer(self) -> Gatherer:
        """The queue of requests from the units in flight: ``generate`` requests stream (a unit's next request joins
        the sequences already decoding), choices and log-likelihoods run a batch at a time."""
        return Gatherer(self._run, limit=MAX_SEQ, stream=self._stream, streams=lambda group: group[0] == "generate")

    def _run(self, group: tuple, items: list) -> list:
        """A gathered batch (:class:`~creval.models.gather.Gatherer`, holding the local-compute lock)."""
        if group[0] == "generate":
            return self._generate_many(items)
        if group[0] == "choice":
            return self._choices(items)
        return self._loglikelihoods(items)

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
        self._follow_load(ctx)
        b.n_tokens = len(entries)
        for i, (tok, pos, seqs, logits) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = tok, pos, len(seqs), logits
            for j, s in enumerate(seqs):
                b.seq_id[i][j] = s
        if self.lc.llama_decode(ctx if ctx is not None else self.ctx, b) != 0:
            raise CrevalError(f"model {self.spec.name}: llama_decode failed (context of {self.n_ctx} tokens full?)",
                              "shorten the prompt or raise `context` in the model spec")

    def _follow_load(self, ctx=None) -> None:
        """Re-choose the thread count every :data:`RECHECK` seconds (unless fixed by ``CREVAL_THREADS`` or the
        spec): a long run keeps both cores once another process that held one has finished, and drops to one
        while a core is taken. Threads change speed only, never the values."""
        if self.fixed_threads or time.monotonic() - self.threads_checked < RECHECK:
            return
        self.threads_checked = time.monotonic()
        want = choose_threads(self.spec)
        if want != self.threads:
            self.threads = want
            for c in {id(x): x for x in (self.ctx, ctx) if x is not None}.values():
                self.lc.llama_set_n_threads(c, want, want)

    def _logits(self, i: int, ctx=None) -> np.ndarray:
        ptr = self.lc.llama_get_logits_ith(ctx if ctx is not None else self.ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()  # float32, copied out of llama.cpp's buffer

    def _logit_rows(self, n: int) -> np.ndarray:
        """The logits of the last decode's ``n`` outputs, one row each in batch order (a view: read it first)."""
        ptr = self.lc.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n, self.n_vocab))

    def _reuse_prefix(self, usable: list[int]) -> int:
        """Keep the longest prefix of ``usable`` that sequence 0 already holds, empty every other sequence,
        and return how many tokens were kept (0 when llama.cpp cannot trim sequence 0)."""
        pairs = list(zip(self._held, usable))
        keep = next((i for i, (a, b) in enumerate(pairs) if a != b), len(pairs))
        for s in range(1, N_SEQ):
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
