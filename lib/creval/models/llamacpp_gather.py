"""Generation for the llama.cpp backend when it gathers: the ``sample`` and ``chat`` requests of every unit in flight
decode together, each sequence one token per shared ``llama_decode``.

A gathered batch is a list of :class:`Job` (one per sequence: a sample of a request, or a chat reply). It runs in
rounds that fit the KV cache (:func:`take_round`: at most :data:`~creval.models.llamacpp_load.MAX_SEQ` sequences,
their prompts counted whole plus every token they may add). In a round:

1. **Prefix reuse.** Every distinct prompt looks for the longest prefix it shares with a sequence the cache still
   holds from the previous round (a prompt, or a prompt and its reply: the next turn of a discussion) or with an
   earlier prompt of this round (:func:`plan_prefill`). That prefix is shared, not decoded again
   (``llama_memory_seq_cp`` of a position range: the cache is unified, so the cells are shared, not copied); only
   the rest is prefilled, the suffixes of many prompts in the same ``llama_decode`` calls.
2. **Siblings.** The other samples of a prompt take its whole sequence.
3. **Decode.** Every live sequence advances one token per ``llama_decode``; sampling (temperature, top-p, each
   sequence's seeded generator, the raw log-prob) runs in numpy on the copied logits, exactly as one request at a
   time does, with the same token budget and stop rule per sequence.

What the sequences hold afterwards stays in the cache for later rounds (a unit's next turn usually comes a round or
two later): a sequence that a prompt of the round extends whole is freed once shared, the others are kept, the
oldest freed first when the round needs their cells or ids. Greedy replies can differ from one request at a time
only through float rounding of the batched arithmetic (docs/performance.md counts how often); the call cache keeps
what was computed first, so a rerun reads back the same records.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from creval.models.base import Sample
from creval.models.llamacpp_load import MAX_SEQ, N_BATCH, N_SEQ
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


def take_round(jobs: Sequence[Job], cells: int, max_seq: int = MAX_SEQ) -> int:
    """How many of ``jobs`` (from the first, in order) run in one round: at most ``max_seq`` sequences whose
    distinct prompts (counted whole, whatever they share) and budgets fit ``cells - 1`` cache cells; at least one."""
    seen: set[tuple[int, ...]] = set()
    used = 0
    for k, j in enumerate(jobs):
        need = j.budget + (0 if j.prompt in seen else len(j.prompt))
        if k and (k == max_seq or used + need > cells - 1):
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


class GatherMixin:
    """``_generate_many`` of :class:`~creval.models.llamacpp.LlamaCppBackend` (see the module doc)."""

    def _generate_many(self, jobs: Sequence[Job]) -> list[Sample]:
        """One :class:`~creval.models.base.Sample` per job, in order, in as many rounds as the cache needs."""
        out: list[Sample] = []
        at = 0
        while at < len(jobs):
            k = take_round(jobs[at:], self.cells)
            out += self._round(list(jobs[at:at + k]))
            at += k
        return out

    def _round(self, jobs: list[Job]) -> list[Sample]:
        lc, mem = self.lc, self.mem
        held = dict(self.kept)                          # oldest first
        for s in range(N_SEQ):                          # whatever else a sequence still holds is stale
            if s not in held:
                lc.llama_memory_seq_rm(mem, s, -1, -1)
        distinct: dict[tuple[int, ...], int] = {}
        lead_of = [distinct.setdefault(j.prompt, len(distinct)) for j in jobs]
        prompts = list(distinct)
        plan = plan_prefill(prompts, held)
        donors = {src.ref for src in plan if src is not None and src.old}
        whole = {src.ref for src in plan if src is not None and src.old and src.length == len(held[src.ref])}
        kept = [s for s in held if s not in whole]      # kept for a later round while there is room, unless a
        #                                                 prompt of this round extends all of it
        need = sum(len(p) for p in prompts) + sum(j.budget for j in jobs)
        spare = [s for s in kept if s not in donors]    # donors stay until their prefix is copied
        while spare and (need + sum(len(held[s]) for s in kept) > self.cells - 1
                         or N_SEQ - len(kept) - len(whole) < len(jobs)):
            gone = spare.pop(0)
            kept.remove(gone)
            lc.llama_memory_seq_rm(mem, gone, -1, -1)
        seqs = [s for s in range(N_SEQ) if s not in whole and s not in kept][:len(jobs)]
        lead_seq: dict[int, int] = {}
        for k, d in enumerate(lead_of):
            lead_seq.setdefault(d, seqs[k])
        for d, src in enumerate(plan):
            if src is not None and src.old:
                lc.llama_memory_seq_cp(mem, src.ref, lead_seq[d], 0, src.length)
        for s in whole:                                 # each lives on in the prompt that extends it
            lc.llama_memory_seq_rm(mem, s, -1, -1)
        self.kept = {s: held[s] for s in kept}
        self.reused_tokens += sum(src.length for src in plan if src is not None)
        first = self._prefill_levels(prompts, plan, lead_seq)
        for k, d in enumerate(lead_of):
            if seqs[k] != lead_seq[d]:
                lc.llama_memory_seq_cp(mem, lead_seq[d], seqs[k], -1, -1)
        samples, fed = self._advance(jobs, seqs, [first[d] for d in lead_of])
        self.kept.update({s: list(j.prompt) + f for s, j, f in zip(seqs, jobs, fed)})
        return samples

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

    def _advance(self, jobs: list[Job], seqs: list[int], first: list[np.ndarray]) -> tuple[list[Sample], list]:
        """Advance every job's sequence (which holds its prompt) together: one token per live sequence and
        ``llama_decode``. Returns the samples and, per job, the tokens its sequence was fed."""
        n = len(jobs)
        rngs = [np.random.default_rng(j.seed) for j in jobs]
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        fed: list[list[int]] = [[] for _ in range(n)]
        done: list[str | None] = [None if j.budget > 0 else "length" for j in jobs]
        rows = dict(enumerate(first))
        while True:
            entries = []
            for k in range(n):
                if done[k] is not None:
                    continue
                j = jobs[k]
                t, lp = sample_token(rows[k], j.temperature, j.top_p, rngs[k])
                toks[k].append(t)
                lps[k].append(lp)
                if self.is_eog(t):
                    done[k] = "stop"
                    toks[k].pop()          # the end token's log-prob counts; its text does not
                elif j.stop and any(x in self.detok(toks[k][-8:]) for x in j.stop):
                    done[k] = "stop"
                elif len(toks[k]) >= j.budget:
                    done[k] = "length"
                else:
                    entries.append((t, len(j.prompt) + len(fed[k]), [seqs[k]], k))
                    fed[k].append(t)
            if not entries:
                break
            rows = {}
            for c0 in range(0, len(entries), N_BATCH):
                chunk = entries[c0:c0 + N_BATCH]
                self._decode([(t, p, sq, True) for t, p, sq, _ in chunk])
                rows.update({e[3]: self._logits(i) for i, e in enumerate(chunk)})
        out = []
        for k, j in enumerate(jobs):
            text = self.detok(toks[k])
            for x in j.stop:
                if x in text:
                    text = text[:text.index(x)]
            out.append(Sample(text, tuple(lps[k]), done[k] or "length"))
        return out, fed
