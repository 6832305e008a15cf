"""Generation for the llama.cpp backend when it gathers: the ``sample`` and ``chat`` requests of every unit in flight
decode together, each sequence one token per shared ``llama_decode``.

The gatherer (:mod:`~creval.models.gather`) hands the engine a *stream* of requests: the ones queued when it starts,
then every request that queues while it runs (a unit whose reply was just finished sends its next turn, which joins
the sequences still decoding at the next step instead of waiting for all of them to end). A request is a list of
:class:`Job` (one per sequence: a sample of a request, or a chat reply). Between two decode steps the engine admits
the waiting jobs that fit (:func:`take_round`: at most :data:`~creval.models.llamacpp_load.MAX_SEQ` live sequences,
their distinct prompts counted whole plus every token they may add, within the KV cache):

1. **Prefix reuse.** Every distinct prompt looks for the longest prefix it shares with a sequence the cache holds
   (a finished one: a prompt and its reply, e.g. the previous turn of a discussion; or the prompt of a live one)
   or with an earlier prompt admitted with it (:func:`plan_prefill`). That prefix is shared, not decoded again
   (``llama_memory_seq_cp`` of a position range: the cache is unified, so the cells are shared, not copied); only
   the rest is prefilled, the suffixes of many prompts in the same ``llama_decode`` calls.
2. **Siblings.** The other samples of a prompt take its whole sequence.
3. **Decode.** Every live sequence advances one token per ``llama_decode``; sampling (temperature, top-p, each
   sequence's seeded generator, the raw log-prob) runs in numpy on the copied logits, exactly as one request at a
   time does, with the same token budget and stop rule per sequence. A request is handed its samples as soon as
   its last sequence ends.

What a finished sequence holds stays in the cache for later requests: it is freed when a new prompt extends it
whole, or oldest first when new sequences need its cells or id. Greedy replies can differ from one request at a
time only through float rounding of the batched arithmetic (docs/performance.md counts how often); the call cache
keeps what was computed first, so a rerun reads back the same records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from creval.models.llamacpp_load import MAX_SEQ, N_BATCH, N_SEQ
from creval.models.records import Sample
from creval.models.sampling import sample_token


@dataclass(frozen=True)
class Job:
    """One sequence to generate: ``budget`` tokens at most (already bounded by the context, as the serial path
    bounds it), ``seed`` its own generator's seed."""
    prompt: tuple[int, ...]
    seed: int
    temperature: float
    top_p: float
    budget: int
    stop: tuple[str, ...] = ()


def lcp(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the common prefix of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


def take_round(jobs: Sequence[Job], cells: int, max_seq: int = MAX_SEQ, least: int = 1) -> int:
    """How many of ``jobs`` (from the first, in order) start together: at most ``max_seq`` sequences whose
    distinct prompts (counted whole, whatever they share) and budgets fit ``cells - 1`` cache cells; at least
    ``least`` (one: a job alone always fits the context; zero while other sequences are running)."""
    seen: set[tuple[int, ...]] = set()
    used = 0
    for k, j in enumerate(jobs):
        need = j.budget + (0 if j.prompt in seen else len(j.prompt))
        if k >= least and (k >= max_seq or used + need > cells - 1):
            return k
        seen.add(j.prompt)
        used += need
    return len(jobs)


@dataclass(frozen=True)
class Source:
    """Where a prompt's first ``length`` tokens come from: a sequence held from before (``old``: its sequence id)
    or an earlier prompt of the round (its index); ``level`` 0 prefills at once, level k after level k-1."""
    old: bool
    ref: int
    length: int
    level: int


def plan_prefill(prompts: Sequence[Sequence[int]], held: dict[int, Sequence[int]]) -> list[Source | None]:
    """For each distinct prompt, the longest prefix it can take from a held sequence or an earlier prompt (never its
    last token: its logits are needed), or None. Ties go to a held sequence (ready at once)."""
    arrs = [np.asarray(p, dtype=np.int64) for p in prompts]
    old = {s: np.asarray(t, dtype=np.int64) for s, t in held.items() if len(t)}
    out: list[Source | None] = []
    for d, p in enumerate(arrs):
        usable = p[:-1]
        best: Source | None = None
        for s, t in old.items():
            n = lcp(usable, t)
            if n and (best is None or n > best.length):
                best = Source(True, s, n, 0)
        for e in range(d):
            n = lcp(usable, arrs[e])
            if n and (best is None or n > best.length):
                level = 1 + (out[e].level if out[e] is not None else 0)
                best = Source(False, e, n, level)
        out.append(best)
    return out


@dataclass
class _Live:
    """A sequence being generated: its job, which request (``handle``) and item it answers, what it has drawn."""
    job: Job
    seq: int
    handle: object
    index: int
    rng: np.random.Generator
    row: np.ndarray                             # the raw logits of its next token
    toks: list = field(default_factory=list)
    lps: list = field(default_factory=list)
    fed: list = field(default_factory=list)     # the tokens its sequence holds after the prompt


class _Fixed:
    """A feed of a fixed list of jobs, all given at once (:meth:`GatherMixin._generate_many`)."""

    def __init__(self, jobs: Sequence[Job]):
        self.jobs, self.samples = list(jobs), None

    def take(self, room: int) -> list:
        jobs, self.jobs = self.jobs, []
        return [(self, jobs)] if jobs else []

    def finish(self, handle, samples) -> None:
        self.samples = list(samples)


class GatherMixin:
    """``_generate_many`` and ``_stream`` of :class:`~creval.models.llamacpp.LlamaCppBackend` (see the module
    doc)."""

    def _generate_many(self, jobs: Sequence[Job]) -> list[Sample]:
        """One :class:`~creval.models.records.Sample` per job, in order."""
        feed = _Fixed(jobs)
        with self.lock:
            self._streaming(feed)
        return feed.samples if jobs else []

    def _stream(self, group, feed) -> None:
        """The gatherer's streamed batch of ``generate`` requests (:class:`~creval.models.gather.Feed`)."""
        with self.lock:
            self._streaming(feed)

    def _streaming(self, feed) -> None:
        """Generate every job the feed gives, admitting new ones between decodes while sequences and cells allow,
        and finishing each request as soon as its own jobs are done."""
        for s in range(N_SEQ):                          # whatever a sequence holds beyond the kept ones is stale
            if s not in self.kept:
                self.lc.llama_memory_seq_rm(self.mem, s, -1, -1)
        live: list[_Live] = []
        waiting: list[tuple[object, int, Job]] = []
        answers: dict[int, list] = {}
        while True:
            room = MAX_SEQ - len(live) - len(waiting)
            for handle, jobs in feed.take(max(room, 0)):
                if not jobs:
                    feed.finish(handle, [])
                    continue
                answers[id(handle)] = [None] * len(jobs)
                waiting += [(handle, i, j) for i, j in enumerate(jobs)]
            if waiting:
                new = self._admit(waiting, live)
                live += new
                waiting = waiting[len(new):]
            if not live:
                if waiting:
                    continue
                return
            entries = []
            for lv in list(live):
                how = self._step(lv)
                if how is None:
                    entries.append((lv.toks[-1], len(lv.job.prompt) + len(lv.fed), [lv.seq], lv))
                    continue
                live.remove(lv)
                self.kept[lv.seq] = list(lv.job.prompt) + lv.fed
                got = answers[id(lv.handle)]
                got[lv.index] = self._sample_of(lv, how)
                if all(x is not None for x in got):
                    feed.finish(lv.handle, got)
            for c0 in range(0, len(entries), N_BATCH):
                chunk = entries[c0:c0 + N_BATCH]
                self._decode([(t, p, sq, True) for t, p, sq, _ in chunk])
                for i, e in enumerate(chunk):
                    e[3].fed.append(e[0])
                    e[3].row = self._logits(i)

    def _step(self, lv: _Live) -> str | None:
        """Draw ``lv``'s next token; the finish reason if that ends it, else None (the token is to be fed)."""
        j = lv.job
        if j.budget <= 0:
            return "length"
        t, lp = sample_token(lv.row, j.temperature, j.top_p, lv.rng)
        lv.toks.append(t)
        lv.lps.append(lp)
        if self.is_eog(t):
            lv.toks.pop()                  # the end token's log-prob counts; its text does not
            return "stop"
        if j.stop and any(x in self.detok(lv.toks[-8:]) for x in j.stop):
            return "stop"
        return "length" if len(lv.toks) >= j.budget else None

    def _sample_of(self, lv: _Live, how: str) -> Sample:
        text = self.detok(lv.toks)
        for x in lv.job.stop:
            if x in text:
                text = text[:text.index(x)]
        return Sample(text, tuple(lv.lps), how)

    def _admit(self, waiting: list[tuple[object, int, Job]], live: list[_Live], limit: int = MAX_SEQ) -> list[_Live]:
        """Start the first of ``waiting`` that fit beside ``live`` (sequence ids, cells; at least one when nothing
        is live), each on its own sequence holding its prompt: prefixes shared with what the cache holds, the rest
        prefilled together. Held sequences are freed, oldest first, when the new ones need their room."""
        lc, mem = self.lc, self.mem
        jobs = [w[2] for w in waiting]
        lead_live = {}
        for lv in live:
            lead_live.setdefault(lv.job.prompt, lv)
        live_need = sum(len(p) for p in lead_live) + sum(lv.job.budget for lv in live)
        k = min(limit, take_round(jobs, self.cells - live_need, MAX_SEQ - len(live), least=0 if live else 1))
        if k == 0:
            return []
        jobs = jobs[:k]
        held = dict(self.kept)                          # oldest first
        sources = {**held, **{lv.seq: list(p) for p, lv in lead_live.items()}}
        distinct: dict[tuple[int, ...], int] = {}
        lead_of = [distinct.setdefault(j.prompt, len(distinct)) for j in jobs]
        prompts = list(distinct)
        plan = plan_prefill(prompts, sources)
        donors = {src.ref for src in plan if src is not None and src.old}
        whole = {src.ref for src in plan if src is not None and src.old and src.ref in held
                 and src.length == len(held[src.ref])}
        kept = [s for s in held if s not in whole]      # kept for later while there is room, unless a new prompt
        #                                                 extends all of it
        need = live_need + sum(len(p) for p in prompts) + sum(j.budget for j in jobs)
        spare = [s for s in kept if s not in donors]    # donors stay until their prefix is copied
        while spare and (need + sum(len(held[s]) for s in kept) > self.cells - 1
                         or N_SEQ - len(kept) - len(whole) - len(live) < len(jobs)):
            gone = spare.pop(0)
            kept.remove(gone)
            lc.llama_memory_seq_rm(mem, gone, -1, -1)
        busy = {lv.seq for lv in live}
        free = [s for s in range(N_SEQ) if s not in whole and s not in kept and s not in busy]
        if len(free) < len(jobs):                       # ids for fewer: plan again for those (the others wait)
            self.kept = {s: held[s] for s in held if s in kept or s in whole}
            return self._admit(waiting, live, len(free))
        seqs = free[:len(jobs)]
        lead_seq: dict[int, int] = {}
        for n, d in enumerate(lead_of):
            lead_seq.setdefault(d, seqs[n])
        for d, src in enumerate(plan):
            if src is not None and src.old:
                lc.llama_memory_seq_cp(mem, src.ref, lead_seq[d], 0, src.length)
        for s in whole:                                 # each lives on in the prompt that extends it
            lc.llama_memory_seq_rm(mem, s, -1, -1)
        self.kept = {s: held[s] for s in kept}
        self.reused_tokens += sum(src.length for src in plan if src is not None)
        first = self._prefill_levels(prompts, plan, lead_seq)
        for n, d in enumerate(lead_of):
            if seqs[n] != lead_seq[d]:
                lc.llama_memory_seq_cp(mem, lead_seq[d], seqs[n], -1, -1)
        return [_Live(j, seqs[n], waiting[n][0], waiting[n][1], np.random.default_rng(j.seed), first[lead_of[n]])
                for n, j in enumerate(jobs)]

    def _prefill_levels(self, prompts: list[tuple[int, ...]], plan: list[Source | None],
                        lead_seq: dict[int, int]) -> dict[int, np.ndarray]:
        """Prefill each prompt's own part on its lead sequence, level by level (a prompt that shares an earlier
        prompt's prefix after it), many prompts per ``llama_decode``; the logits after each prompt's last token."""
        first: dict[int, np.ndarray] = {}
        top = max((src.level for src in plan if src is not None), default=0)
        for level in range(top + 1):
            entries = []
            for d, p in enumerate(prompts):
                src = plan[d]
                if (src.level if src is not None else 0) != level:
                    continue
                start = src.length if src is not None else 0
                if src is not None and not src.old:
                    self.lc.llama_memory_seq_cp(self.mem, lead_seq[src.ref], lead_seq[d], 0, start)
                entries += [(t, start + i, [lead_seq[d]], start + i == len(p) - 1, d)
                            for i, t in enumerate(p[start:])]
            for c0 in range(0, len(entries), N_BATCH):
                chunk = entries[c0:c0 + N_BATCH]
                self._decode([e[:4] for e in chunk])
                first.update({e[4]: self._logits(i) for i, e in enumerate(chunk) if e[3]})
        return first
