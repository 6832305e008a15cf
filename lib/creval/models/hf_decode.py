"""The transformers backend's batched decode and scoring loops (:mod:`creval.models.hf`), on torch tensors.

``decode``: left-padded prompts, one prefill forward, then one forward per token for the whole batch with the
KV cache. Only the chosen token's log-prob is kept at each step (never the whole vocabulary for every step),
and the host reads the device once every :data:`SYNC_EVERY` tokens (to stop when every row has ended), so one
stream is bound by the model, not by Python. Sampling draws one uniform number per row and step from a hash of
the row's seed and the step (:func:`uniforms`) and inverts the cumulative distribution of the temperature-scaled,
top-p-truncated probabilities: each row has its own seeded stream, whatever shares its batch.

``score_rows``: teacher-forced log-probs of a span of each row, left-padded rows in forward passes of at most
:data:`LOGIT_BUDGET` logits, keeping only the last positions' logits (those that score a span).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

SYNC_EVERY = 8
"""Decode steps between two reads of "has every row ended?" (each read waits for the device)."""
LOGIT_BUDGET = 1 << 23
"""Logits (rows x kept positions x vocabulary) one scoring forward may produce at most (32 MiB in float32). On 48
passages of 120 words under SmolLM2-135M: 294 tokens/s and a 1,459 MB peak here, against 283 tokens/s and 1,892 MB
at 256 MiB (2 shared cores, 2026-11-29): a bigger block buys no speed on a CPU, only memory."""
_M32 = 0xFFFFFFFF


@dataclass
class Counter:
    """Forward passes run and the rows they carried (a batch of 10 rows is one forward)."""
    forward: int = 0
    rows: int = 0

    def add(self, rows: int) -> None:
        self.forward += 1
        self.rows += rows


def _fmix(h):
    """MurmurHash3's 32-bit finaliser on an int64 tensor holding values in [0, 2^32)."""
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & _M32
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


def uniforms(seeds, step: int):
    """One number in (0, 1) per row for decode step ``step``: a hash of (row seed, step), float32."""
    h = _fmix((seeds * 0x9E3779B1 + step * 0x7FEB352D + 0x165667B1) & _M32)
    h = _fmix((h ^ (seeds >> 7)) & _M32)
    return ((h >> 8).float() + 0.5) / float(1 << 24)


def pick(torch, logits, seeds, step: int, temperature: float, top_p: float):
    """Next token per row: the arg-max when ``temperature <= 0``, else a draw from softmax(logits / temperature)
    restricted to the smallest set of most likely tokens whose mass reaches ``top_p`` (the nucleus)."""
    if temperature <= 0:
        return logits.argmax(-1)
    probs = (logits / temperature).softmax(-1)
    order = None
    if top_p < 1.0:
        probs, order = probs.sort(-1, descending=True)
        before = probs.cumsum(-1) - probs
        probs = probs.masked_fill(before >= top_p, 0.0)
    cum = probs.cumsum(-1)
    target = uniforms(seeds, step) * cum[:, -1]
    idx = torch.searchsorted(cum, target[:, None].contiguous()).clamp_(max=cum.shape[-1] - 1)
    return (idx if order is None else order.gather(-1, idx))[:, 0]


def cache_name(lm) -> str:
    """The keyword (and output field) of ``lm``'s KV cache: ``cache`` from transformers 5.2x,
    ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(lm.forward).parameters else "past_key_values"


def _left_pad(torch, rows: list[list[int]], pad: int, device: str):
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=device)
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def decode(lm, torch, prompts: list[list[int]], seeds: list[int], *, temperature: float, top_p: float,
           max_tokens: int, eos: list[int], pad: int, device: str, counter: Counter | None = None):
    """``(tokens, logprobs)`` per row: ``max_tokens`` tokens (a row's tokens after its end-of-sequence are filler,
    cut by the caller) and the raw log-prob of each."""
    if max_tokens < 1 or not prompts:
        return [[] for _ in prompts], [[] for _ in prompts]
    ids, mask, pos = _left_pad(torch, prompts, pad, device)
    seeds_t = torch.tensor(seeds, dtype=torch.int64, device=device) & _M32
    ends = torch.tensor(eos or [-1], device=device)
    alive = torch.ones(len(prompts), dtype=torch.bool, device=device)
    toks, lps, past, kv = [], [], None, cache_name(lm)
    with torch.no_grad():
        for step in range(max_tokens):
            out = lm(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1,
                     **{kv: past})
            if counter is not None:
                counter.add(len(prompts))
            past, logits = getattr(out, kv), out.logits[:, -1, :].float()
            nxt = pick(torch, logits, seeds_t, step, temperature, top_p)
            toks.append(nxt)
            lps.append(logits.log_softmax(-1).gather(-1, nxt[:, None])[:, 0])
            alive &= ~torch.isin(nxt, ends)
            if (step + 1) % SYNC_EVERY == 0 and not bool(alive.any()):
                break
            ids, pos = nxt[:, None], pos[:, -1:] + 1
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
    return torch.stack(toks, 1).tolist(), torch.stack(lps, 1).tolist()


def _chunks(rows: list[list[int]], keep: list[int], vocab: int) -> list[list[int]]:
    """Row indices (longest first) in groups whose padded logits stay within :data:`LOGIT_BUDGET`."""
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i]))
    out: list[list[int]] = []
    for i in order:
        if out and (len(out[-1]) + 1) * max(keep[j] for j in out[-1] + [i]) * vocab <= LOGIT_BUDGET:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def score_rows(lm, torch, rows: list[list[int]], spans: list[tuple[int, int]], *, pad: int, device: str,
               counter: Counter | None = None) -> list[list[float]]:
    """For each row and its span ``(a, b)``: log p(row[j] | row[:j]) for j in a..b-1 (``a >= 1``)."""
    fed = [r[:-1] for r in rows]
    keep = [len(f) - a + 1 for f, (a, _) in zip(fed, spans)]      # positions a-1 .. end of each fed row
    vocab = int(lm.get_output_embeddings().weight.shape[0])
    out: list[list[float]] = [[] for _ in rows]
    with torch.no_grad():
        for chunk in _chunks(fed, keep, vocab):
            ids, mask, pos = _left_pad(torch, [fed[i] for i in chunk], pad, device)
            k = max(keep[i] for i in chunk)
            logits = lm(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=k).logits
            if counter is not None:
                counter.add(len(chunk))
            for n, i in enumerate(chunk):            # one row at a time: no second copy of the chunk's logits
                a, b = spans[i]
                first = k - keep[i]                     # kept position of fed[a-1]
                tgt = torch.tensor(rows[i][a:b], device=device)
                row = logits[n, first:first + (b - a)].float()
                got = row.gather(-1, tgt[:, None])[:, 0] - row.logsumexp(-1)     # log-softmax at the target only
                out[i] = got.tolist()
            del logits
    return out
