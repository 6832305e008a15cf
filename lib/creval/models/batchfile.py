"""Reading a batch engine's answers into the call cache (``creval run --batch-in FILE``).

``FILE`` is an OpenAI batch *output* file: one JSON object a line, ``custom_id`` and ``response``
(``status_code``, ``body``) or ``error``, as OpenAI's and other providers' Batch APIs, ``vllm run-batch`` and Ray
Data LLM write it. Each ``custom_id`` is the cache key of a request that ``--batch-out`` wrote
(:mod:`creval.core.deferral`); its answer is parsed exactly as a live reply would be and stored under that key,
so a study finished through files has the records of the same study run live. A response for a request no
study asked is reported and ignored; an error answer is reported and the request is written again next wave;
nothing already cached is overwritten; a line that is not a batch answer is one error naming the line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from creval.core.cache import CallCache, default_cache
from creval.core.errors import CrevalError
from creval.models.base import ChatRequest, ChoiceRequest, LoglikelihoodRequest, ModelSpec
from creval.models.openai_compat import OpenAIBackend


@dataclass
class ReadIn:
    stored: int = 0                     # answers put into the cache
    already: int = 0                    # answers for calls already cached (kept as they were)
    unknown: list[str] = field(default_factory=list)    # custom_ids no study asked
    failed: list[str] = field(default_factory=list)     # custom_ids answered with an error (asked again next wave)

    def line(self) -> str:
        out = f"{self.stored} answers stored in the call cache"
        if self.already:
            out += f", {self.already} already there (kept)"
        if self.failed:
            out += f", {len(self.failed)} answered with an error (they are written again in the next wave)"
        if self.unknown:
            out += f", {len(self.unknown)} for requests no study asked (ignored: {', '.join(self.unknown[:3])})"
        return out


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
        resp = row.get("response") or {}
        if row.get("error") or resp.get("status_code", 200) != 200 or not isinstance(resp.get("body"), dict):
            out.failed.append(cid)
            continue
        spec = ModelSpec(**meta["spec"])
        be = backends.get(spec.name) or backends.setdefault(spec.name, OpenAIBackend.for_parsing(spec))
        try:
            result = be.parse_reply(kind, _item(kind, meta.get("item") or {}), resp["body"])
        except (KeyError, IndexError, TypeError) as e:
            raise CrevalError(f"{path}, line {n}: the answer to {cid} is not a {kind} reply ({type(e).__name__}: {e})",
                              "give the output file of the batch engine, unchanged") from None
        if cache.put_new(cid, kind, _value(kind, result, meta)):
            out.stored += 1
        else:
            out.already += 1
    return out
