"""Request shaping from a model spec: what a server needs in every request body (``request:`` in the spec).

```yaml
request:
  body: {chat_template_kwargs: {enable_thinking: false}}   # merged into every request body (vLLM's extra_body)
  token_limit: max_completion_tokens                         # the reply-length field's name (default max_tokens)
  drop: [temperature, top_p, stop]                           # parameters the model refuses: never sent
  timeout: 600                                               # seconds to wait for one reply (default 120)
```

Reasoning models (models/replies.py): ``reasoning_effort`` in the spec is sent with every chat-endpoint request
(OpenAI: https://platform.openai.com/docs/api-reference/chat/create; Ollama's OpenAI API turns a model's thinking
off only with ``"none"``: https://docs.ollama.com/api/openai-compatibility) and ``reasoning_room`` is added to every
chat reply's budget, so that reasoning does not eat the answer.

Sources (docs/servers.md): OpenAI's o-series and gpt-5.x answer 400 "Unsupported
parameter: 'max_tokens' ... Use 'max_completion_tokens' instead" and reject ``temperature``/``top_p``/``stop``/
``logprobs`` (simonw/llm#724, openai/openai-python#2104, koosoli/ESPHomeDesigner#379); a thinking model on vLLM or
SGLang switches its thinking off per request with ``chat_template_kwargs: {enable_thinking: false}``
(QwenLM/Qwen3#1300, vLLM's Qwen3 reasoning-parser docs). Dropping ``logprobs`` leaves the verbs that need them
impossible: :mod:`creval.models.capabilities` says so before any call.
"""
from __future__ import annotations

import copy

from creval.core.errors import CrevalError
from creval.models.spec import ModelSpec

DEFAULT_TIMEOUT = 120.0
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
THINKING_OFF = {"chat_template_kwargs": {"enable_thinking": False}}
# verbs that read the reply's first tokens: thinking text there would be read as the answer (issue 32)
NO_THINKING_VERBS = ("sample", "choice")


def merge(into: dict, extra: dict) -> dict:
    """``into`` with ``extra`` merged in, nested mappings merged key by key (``extra`` wins)."""
    out = dict(into)
    for k, v in extra.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def settings(spec: ModelSpec) -> dict:
    """The spec's ``request`` checked: a wrong field is one clear error naming the fix."""
    req = dict(spec.request or {})
    unknown = set(req) - {"body", "token_limit", "drop", "timeout"}
    if unknown:
        raise CrevalError(f"model {spec.name}: unknown request fields {sorted(unknown)}",
                          "use body, token_limit, drop and timeout (see docs/servers.md)")
    if req.get("token_limit", "max_tokens") not in TOKEN_FIELDS:
        raise CrevalError(f"model {spec.name}: request.token_limit must be one of {TOKEN_FIELDS}",
                          "OpenAI's reasoning models take max_completion_tokens; most servers max_tokens")
    if not isinstance(req.get("body", {}), dict) or not isinstance(req.get("drop", []), list):
        raise CrevalError(f"model {spec.name}: request.body must be a mapping and request.drop a list",
                          "e.g. request: {body: {chat_template_kwargs: {enable_thinking: false}}, drop: [stop]}")
    return req


def timeout(spec: ModelSpec) -> float:
    """Seconds to wait for one reply: the spec's ``request.timeout`` (a queueing server may need long)."""
    return float(settings(spec).get("timeout", DEFAULT_TIMEOUT))


def thinking_off(spec: ModelSpec, verb: str, path: str) -> bool:
    """Whether a ``verb`` request to ``path`` switches a thinking model's thinking off: sample and choice requests
    of a ``thinking: true`` spec on the chat endpoint, unless the spec says the server cannot
    (``can: {thinking_off: false}``)."""
    return (spec.thinking and verb in NO_THINKING_VERBS and path == "/chat/completions"
            and spec.can.get("thinking_off", True) is not False)


def shape(spec: ModelSpec, verb: str, path: str, body: dict) -> dict:
    """The body sent for one ``verb`` request: parameters the model refuses dropped, a chat reply's budget raised by
    the spec's ``reasoning_room``, its ``reasoning_effort`` asked for on the chat endpoint, the token limit under
    the field the model takes, thinking switched off where it must be, the spec's own body fields merged in last."""
    req = settings(spec)
    drop = set(req.get("drop") or ())
    out = {k: v for k, v in body.items() if k not in drop}
    if "logprobs" in drop:
        out.pop("top_logprobs", None)
    cap = (spec.can or {}).get("top_logprobs")
    if cap:                 # the most alternatives the model lists (OpenAI's legacy completions: 5)
        for k in ("top_logprobs", "logprobs"):
            if isinstance(out.get(k), int) and not isinstance(out[k], bool):
                out[k] = min(out[k], int(cap))
    if verb == "chat" and spec.reasoning_room and "max_tokens" in out:    # room for reasoning before the answer
        out["max_tokens"] = int(out["max_tokens"]) + int(spec.reasoning_room)
    if spec.reasoning_effort and path == "/chat/completions" and "reasoning_effort" not in drop:
        out["reasoning_effort"] = spec.reasoning_effort
    field = req.get("token_limit", "max_tokens")
    if field != "max_tokens" and "max_tokens" in out:
        out[field] = out.pop("max_tokens")
    if thinking_off(spec, verb, path):
        out = merge(out, THINKING_OFF)
    return merge(out, req.get("body") or {})
