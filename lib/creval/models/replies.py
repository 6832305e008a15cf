"""Every server reply checked for what it must hold before it is recorded (issue 45: no silent number).

A server can answer HTTP 200 with nothing a study can use, and a study would record it as "ok":

- **An empty answer because the budget ran out.** A reasoning model (OpenAI's o-series and gpt-5.x) spends its
  ``max_completion_tokens`` on hidden reasoning first; when they run out it returns ``content: ""`` with
  ``finish_reason: "length"`` (https://platform.openai.com/docs/guides/reasoning, "Allocating space for
  reasoning"). That is one error naming the budget and the fix (the spec's ``reasoning_room`` and
  ``reasoning_effort``), never an empty reply.
- **Thinking where the answer was expected.** Qwen3 on vLLM without a reasoning parser writes its thinking into
  ``content`` between ``<think>`` and ``</think>`` (https://docs.vllm.ai/en/latest/features/reasoning_outputs.html;
  https://qwen.readthedocs.io/en/latest/deployment/vllm.html); with a parser, or on Ollama, it comes in a
  ``reasoning_content`` or ``reasoning`` field (https://docs.ollama.com/api/openai-compatibility). A spec that
  declares ``thinking: true`` has its chat replies stripped of ``<think>...</think>`` (the rule it declares); any
  other reply carrying a thinking mark is refused with one sentence. A sample or a choice score is never stripped:
  its token log-probs would include the thinking, so one that carries thinking is refused.

Each check raises :class:`~creval.core.errors.CrevalError` (the unit fails with that sentence, nothing is cached);
the HTTP retries of models/retry.py are for transport errors, since the same request gives the same reply.
"""
from __future__ import annotations

import re

from creval.core.errors import CrevalError
from creval.models.spec import ModelSpec

THINK_MARKS = ("<think>", "</think>")
EFFORTS = ("none", "minimal", "low", "medium", "high")

THINK_RE = re.compile(r"<think>(.*?)(</think>|$)", re.S)


def split_thinking(text: str) -> tuple[str, str]:
    """Return (answer, reasoning) with ``<think>...</think>`` blocks removed from the answer."""
    reasoning = "\n".join(m.group(1).strip() for m in THINK_RE.finditer(text))
    return THINK_RE.sub("", text).strip(), reasoning



def has_thinking(text: str) -> bool:
    """Whether ``text`` carries a thinking mark (``<think>`` or ``</think>``, Qwen3 / DeepSeek-R1 templates)."""
    return any(m in (text or "") for m in THINK_MARKS)


def _switch_off(spec: ModelSpec) -> str:
    return ("switch thinking off for this server: `request: {body: {chat_template_kwargs: {enable_thinking: false}}}`"
            " on vLLM or SGLang, `reasoning_effort: none` on Ollama, or a model without thinking"
            + ("" if spec.thinking else "; or set `thinking: true` so that chat replies are stripped of it"))


def empty_budget(spec: ModelSpec, budget: int | None, reasoning_tokens: int) -> CrevalError:
    """The one sentence for an empty answer whose budget ran out."""
    spent = f" after {reasoning_tokens} tokens of reasoning" if reasoning_tokens else ""
    size = f"its {budget + spec.reasoning_room}-token budget" if budget else "its token budget"
    return CrevalError(
        f"model {spec.name}: the reply is empty because {size} ran out (finish_reason \"length\"){spent}, so there "
        "is no answer to record",
        f"give the reasoning room in the spec (`reasoning_room: {max(2000, 2 * spec.reasoning_room)}` adds that many "
        "tokens to every chat budget) "
        "and/or ask for less of it (`reasoning_effort: minimal` on OpenAI, `none` on Ollama)")


def checked_chat(spec: ModelSpec, text: str, reasoning: str, finish_reason: str, budget: int | None = None,
                 reasoning_tokens: int = 0) -> tuple[str, str]:
    """``(answer, reasoning)`` of a chat reply once checked: thinking in the answer stripped where the spec
    declares it (``thinking: true``) and refused otherwise; an empty answer whose budget ran out refused."""
    if has_thinking(text):
        if not spec.thinking:
            raise CrevalError(f"model {spec.name}: the reply carries thinking ({_mark(text)}) and the spec does not "
                              "say to strip it, so it would be read as the answer", _switch_off(spec))
        text, more = split_thinking(text)
        reasoning = "\n".join(r for r in (reasoning, more) if r)
    if not text.strip():
        if finish_reason == "length":
            raise empty_budget(spec, budget, reasoning_tokens)
        if reasoning.strip():
            raise CrevalError(f"model {spec.name}: the reply has thinking and no answer (the answer field is "
                              "empty), so there is nothing to record", _switch_off(spec))
    return text, reasoning


def checked_sample(spec: ModelSpec, text: str, reasoning: str) -> None:
    """Refuse a sample that carries thinking (in its text or a reasoning field): its token log-probs would be the
    thinking's, never the answer's."""
    if has_thinking(text) or reasoning.strip():
        where = _mark(text) if has_thinking(text) else "a reasoning field"
        raise CrevalError(f"model {spec.name}: a sample carries thinking ({where}), so neither its text nor its "
                          "log-probs are an answer", _switch_off(spec))


def checked_choice(spec: ModelSpec, reply: str) -> None:
    """Refuse a choice score whose greedy reply opens with thinking: the choices would be read off the thinking."""
    if reply.lstrip().startswith(THINK_MARKS):
        raise CrevalError(f"model {spec.name}: the reply scored for a choice opens with thinking ({_mark(reply)}), "
                          "so the choices' log-probs are the thinking's", _switch_off(spec))


def _mark(text: str) -> str:
    return next(m for m in THINK_MARKS if m in text)


def checked_effort(spec: ModelSpec) -> None:
    """A bad ``reasoning_effort`` or ``reasoning_room`` is one clear error before any call."""
    if spec.reasoning_effort and spec.reasoning_effort not in EFFORTS:
        raise CrevalError(f"model {spec.name}: reasoning_effort must be one of {', '.join(EFFORTS)}, not "
                          f"{spec.reasoning_effort!r}", "OpenAI's gpt-5 takes minimal..high; Ollama turns thinking "
                                                        "off with none")
    if not isinstance(spec.reasoning_room, int) or isinstance(spec.reasoning_room, bool) or spec.reasoning_room < 0:
        raise CrevalError(f"model {spec.name}: reasoning_room must be a whole number of tokens >= 0, not "
                          f"{spec.reasoning_room!r}", "e.g. reasoning_room: 2000")
