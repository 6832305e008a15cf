"""Reading a batch engine's answers into the call cache (``creval run --batch-in FILE``).

``FILE`` is an OpenAI batch *output* file: one JSON object a line, ``custom_id`` and ``response``
(``status_code``, ``body``) or ``error``, as OpenAI's Batch API and ``vllm run-batch`` write it. Each
``custom_id`` is the cache key of a request that ``--batch-out`` wrote (:mod:`creval.core.deferral`); its
answer is parsed exactly as a live reply would be and stored under that key, so a study finished through
files has the records of the same study run live.

A response for a request no study asked is reported and ignored. An error answer is listed with its reason:
after a server error (5xx, or no status) the request is written again next wave; after a client error (4xx:
the engine refuses the request as written) it is held back until ``--batch-retry-failed``. Nothing already
cached is overwritten; a line that is not a batch answer is one error naming the line, and an HTTP 200 answer that
does not parse or fails a reply check (models/replies.py) is listed and held back like a 4xx, the file's other
answers still read. Each answer stored is
billed once, at the spec's ``batch_price`` (a fraction of the live price; OpenAI's Batch API: 50%), from the
token usage the engine reported, by the first run that reads it (:func:`creval.core.cache.cached_batch`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from creval.core.cache import CallCache, default_cache
from creval.core.errors import CrevalError
from creval.models.openai_compat import OpenAIBackend
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest
from creval.models.spec import ModelSpec


@dataclass
class ReadIn:
    stored: int = 0                     # answers put into the cache
    already: int = 0                    # answers for calls already cached (kept as they were)
    unknown: list[str] = field(default_factory=list)    # custom_ids no study asked
    failed: dict[str, str] = field(default_factory=dict)   # custom_id -> reason, for answers that are errors
    cost_usd: float = 0.0               # what the answers stored cost, at the batch price

    def line(self) -> str:
        out = f"{self.stored} answers stored in the call cache"
        if self.already:
            out += f", {self.already} already there (kept)"
        if self.cost_usd:
            out += f" (${self.cost_usd:.4f} at the batch price)"
        if self.unknown:
            out += f", {len(self.unknown)} for requests no study asked (ignored: {', '.join(self.unknown[:3])})"
        if self.failed:
            out += f", {len(self.failed)} answered with an error:"
            out += "".join(f"\n  {cid}: {why}" for cid, why in list(self.failed.items())[:20])
            if len(self.failed) > 20:
                out += f"\n  ... and {len(self.failed) - 20} more"
        return out


def failure(row: dict) -> tuple[int, str] | None:
    """``(status, reason)`` when a batch output line is an error (status 0: none given), None for an answer.
    OpenAI puts a request's failure in ``error`` (``code``, ``message``) or a non-200 ``response``; vLLM
    writes ``error`` as a string or the server's error body."""
    resp = row.get("response") or {}
    status = int(resp.get("status_code") or 0)
    err, body = row.get("error"), resp.get("body")
    if not err and status == 200 and isinstance(body, dict):
        return None
    if isinstance(err, dict):
        why = err.get("message") or err.get("code") or json.dumps(err)
    elif err:
        why = str(err)
    elif isinstance(body, dict) and isinstance(body.get("error"), dict):
        why = body["error"].get("message") or json.dumps(body["error"])
    else:
        why = "no answer body" if status == 200 else (str(body)[:200] if body else "no reason given")
    return status, " ".join(str(why).split())[:300]


def _item(kind: str, d: dict):
    if kind == "chat":
        return ChatRequest(tuple(d["messages"]), d["temperature"], d["max_tokens"], d["seed"])
    if kind == "choice":
        return ChoiceRequest(tuple(d["messages"]), tuple(d["choices"]))
    if kind == "loglikelihood":
        return LoglikelihoodRequest(d["text"], d["context"])
    return None


def _value(kind: str, result, meta: dict) -> dict:
    if kind == "sample":
        result = replace(result, prompt_tokens=result.prompt_tokens or int(meta.get("prompt_tokens", 0)))
    return result.to_dict()


def read_in(path: str | Path, cache: CallCache | None = None) -> ReadIn:
    """Put the answers of the batch output file ``path`` into the call cache (see the module doc)."""
    cache = cache if cache is not None else default_cache()
    path, out = Path(path), ReadIn()
    if not path.is_file():
        raise CrevalError(f"batch output file {path} does not exist", "give the file the batch engine wrote")
    backends: dict[str, OpenAIBackend] = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            cid = row["custom_id"]
        except (ValueError, KeyError, TypeError):
            raise CrevalError(f"{path}, line {n}: not a batch answer (a JSON object with a custom_id)",
                              "give the output file of the batch engine, unchanged") from None
        pend = cache.pending(cid)
        if pend is None:
            out.unknown.append(str(cid))
            continue
        kind, meta = pend
        bad = failure(row)
        if bad is not None:
            status, why = bad
            out.failed[cid] = f"HTTP {status}: {why}" if status else why
            cache.put_pending(cid, kind, {**meta, "failed": {"status": status, "reason": why}})
            continue
        resp = row["response"]
        spec = ModelSpec(**meta["spec"])
        be = backends.get(spec.name) or backends.setdefault(spec.name, OpenAIBackend.for_parsing(spec))
        try:
            result = be.parse_reply(kind, _item(kind, meta.get("item") or {}), resp["body"])
        except (KeyError, IndexError, TypeError, CrevalError) as e:    # held back, as a refused line: the rest count
            why = e.problem if isinstance(e, CrevalError) else f"not a {kind} reply ({type(e).__name__}: {e})"
            out.failed[cid] = f"line {n}: {why}"
            cache.put_pending(cid, kind, {**meta, "failed": {"status": 200, "reason": why}})
            continue
        if cache.put_new(cid, kind, _value(kind, result, meta)):
            out.stored += 1
            use = resp["body"].get("usage") or {}
            cost = spec.cost(int(use.get("prompt_tokens") or 0), int(use.get("completion_tokens") or 0))
            cost *= spec.batch_price
            if cost:
                cache.put_batch_cost(cid, cost)
                out.cost_usd += cost
        else:
            out.already += 1
    return out
