"""Named provider behaviours of the stand-in server (``StandIn(behaviour=...)``), each taken from what the provider
documents or was seen to do (sources in docs/servers.md and below; the error texts below are the providers'
own where a source quotes them, paraphrased where it does not, and say so).

- ``openai-reasoning``: an o-series / gpt-5.x model. Rejects ``max_tokens`` ("Use 'max_completion_tokens'
  instead", simonw/llm#724, koosoli/ESPHomeDesigner#379), a ``temperature`` other than the default 1 ("Only the
  default (1) value is supported", openai/openai-python#2104), ``top_p`` and
  ``stop`` (NeMo Guardrails' list), ``logprobs`` ("logprobs are not supported with reasoning models", quoted in
  vllm-project/vllm#23319), each with a 400 ``invalid_request_error``; counts ``reasoning_tokens``; no
  ``/completions`` (404, as every chat model).
- ``openai-chat``: gpt-4o-like: chat log-probs, but ``/completions`` answers 404 "This is a chat model and not
  supported in the v1/completions endpoint" (servers.md 2.1).
- ``openai-instruct``: legacy completions (gpt-3.5-turbo-instruct): ``logprobs`` at most 5 (openai-python#38; our
  wording) and ``echo`` with ``logprobs`` refused: "Setting 'echo' and 'logprobs' at the same time is not
  supported for this model." (keirp/automatic_prompt_engineer#25).
- ``quota``: every request answers 429 ``insufficient_quota`` (OpenAI's body; not retriable).
- ``rate-ms`` / ``rate-seconds`` / ``rate-date``: the first ``rate_first`` requests answer 429
  ``rate_limit_exceeded`` with ``retry-after-ms``, ``retry-after`` in seconds, or ``retry-after`` as an HTTP-date
  (the forms openai-python reads, ``_parse_retry_after_header``); then answers normally.
- ``ollama-old``: Ollama before 0.12.11: ``logprobs``/``top_logprobs``/``echo``/``n`` silently ignored (no error,
  no log-probs; ``docs/api/openai-compatibility.mdx``, commit 59241c5).
- ``ollama-truncate``: Ollama's 4096-token default context: older messages that do not fit are dropped silently
  (``server/prompt.go::chatPrompt``; the reported ``prompt_tokens`` shrink).
- ``sglang``: log-probs scaled by the request's temperature (SGLang's sampler, PRs #2664/#8375): here each listed
  log-prob is divided by the temperature (greedy requests get the raw ones, as on SGLang).
- ``vllm-spaces``: vLLM between PRs #19209 and #48674: echoed token strings lose a SentencePiece leading space
  (``▁true`` comes back as ``true``; issue vllm-project/vllm#44319), so they no longer give the prompt back; token
  ids (``return_tokens_as_token_ids``, which every stand-in honours) still do.
- ``vllm-qwen3`` / ``ollama-think``: Qwen3's thinking in the content, or in a ``reasoning`` field (:func:`thinking`).
- ``llama-server``: llama.cpp's C++ server: ``echo`` answers HTTP 500 "Only no echo is supported"
  (``oaicompat_completion_params_parse`` and ``ex_wrapper``, servers.md 2.5).
"""
from __future__ import annotations

import email.utils
import time

BEHAVIOURS = ("openai-reasoning", "openai-chat", "openai-instruct", "quota", "rate-ms", "rate-seconds", "rate-date",
              "ollama-old", "ollama-truncate", "sglang", "vllm-spaces", "llama-server", "vllm-qwen3", "ollama-think")
OLLAMA_CONTEXT = 4096


def openai_error(message: str, kind: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


NOT_CHAT = ("This is a chat model and not supported in the v1/completions endpoint. Did you mean to use "
            "v1/chat/completions?")
REASONING_REFUSES = {
    "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                  "'max_completion_tokens' instead.",
    "temperature": "Unsupported parameter: 'temperature' is not supported with this model.",
    "top_p": "Unsupported parameter: 'top_p' is not supported with this model.",
    "stop": "Unsupported parameter: 'stop' is not supported with this model.",
    "logprobs": "logprobs are not supported with reasoning models",
}


def headers_of(behaviour: str) -> dict:
    """The headers a provider's replies carry (OpenAI's name the API version; the others a server name)."""
    if behaviour.startswith("openai") or behaviour in ("quota",) or behaviour.startswith("rate"):
        return {"openai-version": "2020-10-01", "openai-processing-ms": "12", "openai-organization": "user-x"}
    names = {"ollama-old": "ollama/0.12.3", "ollama-truncate": "ollama/0.13.0", "sglang": "sglang",
             "llama-server": "llama.cpp", "ollama-think": "ollama/0.13.0"}
    return {"server": names.get(behaviour, "creval-standin")}


def version_of(behaviour: str) -> dict | None:
    """The reply to ``GET /version`` (vLLM's route) or ``/api/version`` (Ollama's); None: no such route."""
    if behaviour.startswith("ollama"):
        return {"version": "0.12.3" if behaviour == "ollama-old" else "0.13.0", "name": "ollama"}
    if behaviour in ("", "sglang", "vllm-spaces", "vllm-qwen3"):
        return {"version": "standin-0", "name": {"": "creval-standin", "sglang": "sglang"}.get(behaviour, "vllm")}
    return None


def version_reply(behaviour: str, path: str) -> tuple[int, dict]:
    """``(status, body)`` of ``GET path`` (``/version`` or ``/api/version``): only the provider's own route answers."""
    v = version_of(behaviour)
    if v is not None and (path == "/api/version") == behaviour.startswith("ollama"):
        return 200, v
    return 404, {"detail": "Not Found"}


def retry_header(behaviour: str, seconds: float) -> dict:
    if behaviour == "rate-ms":
        return {"retry-after-ms": str(int(seconds * 1000))}
    if behaviour == "rate-seconds":
        return {"retry-after": str(seconds)}
    return {"retry-after": email.utils.formatdate(time.time() + seconds, usegmt=True)}


def refusal(behaviour: str, kind: str, body: dict, served: int, rate_first: int = 2) -> tuple[int, dict, dict] | None:
    """``(status, body, headers)`` of the provider's refusal of this request, or None when it answers it.
    ``served``: requests this server has seen before this one; ``rate_first``: how many a ``rate-*`` server
    refuses first."""
    if behaviour == "quota":
        return 429, openai_error("You exceeded your current quota, please check your plan and billing details.",
                                 "insufficient_quota", "insufficient_quota"), {}
    if behaviour.startswith("rate-") and served < rate_first:
        return 429, openai_error("Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.",
                                 "requests", "rate_limit_exceeded"), retry_header(behaviour, 1.0)
    if kind == "text" and behaviour in ("openai-reasoning", "openai-chat"):
        return 404, openai_error(NOT_CHAT), {}
    if behaviour == "openai-reasoning":
        for p, msg in REASONING_REFUSES.items():
            v = body.get(p)
            if v is None or v is False or (p == "temperature" and v == 1):   # only the default temperature passes
                continue
            if p == "temperature":
                msg = (f"Unsupported value: 'temperature' does not support {v} with this model. Only the default "
                       "(1) value is supported.")
            return 400, openai_error(msg, code="unsupported_parameter", param=p), {}
    if behaviour == "openai-instruct" and kind == "text":
        if body.get("echo") and body.get("logprobs") is not None:
            return 400, openai_error("Setting 'echo' and 'logprobs' at the same time is not supported for this "
                                     "model.", param="echo"), {}
        if int(body.get("logprobs") or 0) > 5:
            return 400, openai_error("logprobs must be at most 5 for this model.", param="logprobs"), {}
    if behaviour == "llama-server" and kind == "text" and body.get("echo"):
        return 500, {"error": {"code": 500, "message": "Only no echo is supported", "type": "server_error"}}, {}
    return None


def accepted(behaviour: str, body: dict) -> dict:
    """The request as the provider reads it: what it ignores removed, what it drops from the prompt dropped."""
    if behaviour.startswith("ollama"):
        body = {k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs", "echo", "n")} \
            if behaviour == "ollama-old" else {k: v for k, v in body.items() if k not in ("echo", "n")}
    if behaviour == "ollama-truncate" and isinstance(body.get("messages"), list):
        body = {**body, "messages": fit(body["messages"], OLLAMA_CONTEXT)}
    return body


def fit(messages: list[dict], context: int) -> list[dict]:
    """Ollama's ``chatPrompt``: drop the oldest non-system messages until the rest fits ``context`` tokens (here
    about 4 characters a token), keeping the last message whatever its size."""
    def size(ms):
        return sum(len(str(m.get("content", ""))) for m in ms) // 4
    msgs = list(messages)
    while size(msgs) > context and len(msgs) > 1:
        drop = next((i for i, m in enumerate(msgs[:-1]) if m.get("role") != "system"), None)
        if drop is None:
            break
        msgs.pop(drop)
    return msgs


def shown_tokens(behaviour: str, tokens: list[str], body: dict) -> list[str]:
    """Echoed tokens as the server writes them: ``token_id:<id>`` when asked (vLLM's
    ``return_tokens_as_token_ids``; the stand-in's id of a token is a hash of its text), else their strings (without
    the space they carry on ``vllm-spaces``: the stand-in's tokens carry it at their end)."""
    if body.get("return_tokens_as_token_ids"):
        import hashlib
        return [f"token_id:{int(hashlib.sha256(t.encode()).hexdigest()[:6], 16)}" for t in tokens]
    return [t.strip(" ") for t in tokens] if behaviour == "vllm-spaces" else list(tokens)   # the space a token carries


def tempered(behaviour: str, lp: float, temperature: float) -> float:
    """A listed log-prob as the provider reports it: SGLang's are scaled by a sampled request's temperature."""
    if behaviour == "sglang" and temperature > 0:
        return lp / temperature
    return lp


# hidden reasoning tokens an OpenAI reasoning model spends per reply, by `reasoning_effort` (medium is the default;
# the numbers are the stand-in's, the behaviour OpenAI's: https://platform.openai.com/docs/guides/reasoning)
EFFORT_TOKENS = {"minimal": 0, "low": 8, "medium": 16, "high": 64}
OLLAMA_THOUGHT = "Okay, the user asks a short question. Let me think about what they want before I answer it."
QWEN3_THOUGHT = "<think>\nOkay, let me think about this.\n</think>\n\n"


def thinking(behaviour: str, kind: str, body: dict) -> tuple[str, str, int]:
    """``(inline, field, spent)`` for one chat reply: thinking written into the content before the answer, thinking
    in a ``reasoning`` field, and the budget tokens spent on thinking outside the content.

    - ``openai-reasoning``: hidden reasoning (``EFFORT_TOKENS`` by ``reasoning_effort``) spent before the answer;
      a budget it uses up leaves ``content: ""`` with ``finish_reason: "length"``
      (https://platform.openai.com/docs/guides/reasoning, "Allocating space for reasoning").
    - ``vllm-qwen3``: Qwen3 on vLLM without a reasoning parser: ``<think>...</think>`` in the content unless the
      request says ``chat_template_kwargs: {enable_thinking: false}``
      (https://qwen.readthedocs.io/en/latest/deployment/vllm.html; https://docs.vllm.ai/en/latest/features/reasoning_outputs.html).
    - ``ollama-think``: a thinking model on Ollama's OpenAI API: thinking in ``message.reasoning``, switched off only
      by ``reasoning_effort: "none"``; ``chat_template_kwargs`` is ignored
      (https://docs.ollama.com/api/openai-compatibility; ollama/ollama#12004)."""
    if kind != "chat":
        return "", "", 0
    if behaviour == "openai-reasoning":
        return "", "", EFFORT_TOKENS.get(str(body.get("reasoning_effort") or "medium"), 16)
    if behaviour == "vllm-qwen3" and (body.get("chat_template_kwargs") or {}).get("enable_thinking") is not False:
        return QWEN3_THOUGHT, "", 0
    if behaviour == "ollama-think" and body.get("reasoning_effort") != "none":
        return "", OLLAMA_THOUGHT, len(OLLAMA_THOUGHT) // 4
    return "", "", 0


def reasoning_usage(behaviour: str, kind: str, body: dict) -> dict:
    """The usage's ``completion_tokens_details`` where the provider reports reasoning tokens (OpenAI)."""
    if behaviour != "openai-reasoning" or kind != "chat":
        return {}
    budget = int(body.get("max_completion_tokens") or 256)
    return {"completion_tokens_details": {"reasoning_tokens": min(budget, thinking(behaviour, kind, body)[2])}}
