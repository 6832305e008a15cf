"""Reading verdicts and confidences from free text, with bounded retries and an explicit 'unparsed'.

Formats the judges ask for (see ``prompts/*.txt``): a verdict ``[[YES]]`` / ``[[NO]]``, a confidence or
probability ``[[0.7]]`` or ``([0.7])``, a stance ``([YES])``. Lenient fallbacks accept single brackets,
``verdict: yes``, ``fulfilled`` / ``not fulfilled``, ``probability: 0.7``, ``70%`` and a reply that starts
with a bare yes/no. A reply that names both YES and NO in the same (lenient) pattern is ambiguous and
does not parse.

:func:`ask_parsed` asks once; if the reply does not parse it re-asks at most ``retries`` times (the bad
reply plus a short format reminder, temperature ``retry_temperature`` > 0 and a different seed, so
the call cache cannot hand back the same reply), then gives up with ``unparsed=True`` and value
``None``. Never a silent default, never an endless loop.

Optional log-prob path (``verdict_via``): ``"logprobs"`` reads the verdict from
``model.choice_logprobs(messages, ["[[YES]]", "[[NO]]"])`` (one scored call, no generation);
``"text+logprobs"`` parses the text first and only falls back to log-probs when every attempt failed.
Each result records the path that produced it: ``text``, ``text-retry``, ``logprobs`` or ``unparsed``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from creval.core.ledger import LEDGER

_YN = r"(YES|NO)"
VERDICT_STRICT = re.compile(r"\[\[\s*" + _YN + r"\s*\]\]", re.I)
VERDICT_LENIENT = [
    re.compile(r"\[\s*" + _YN + r"\s*\]", re.I),
    re.compile(r"\b(?:verdict|answer|judg(?:e)?ment|decision)\s*[:=\-]?\s*\**\s*" + _YN + r"\b", re.I),
]
FULFIL = re.compile(r"\b(not\s+fulfil+ed|unfulfil+ed|fulfil+ed)\b", re.I)
LEADING = re.compile(r"^\W*(yes|no)\b", re.I)
_NUM = r"(1(?:\.0+)?|0?\.\d+|0)"
CONF_STRICT = re.compile(r"\[\[\s*" + _NUM + r"\s*\]\]")
CONF_LENIENT = [
    re.compile(r"\(\s*\[\s*" + _NUM + r"\s*\]\s*\)"),
    re.compile(r"\[\s*" + _NUM + r"\s*\]"),
    re.compile(r"\b(?:confidence|certainty|probability|score)\s*(?:score|level)?\s*(?:is|of|[:=])?\s*" + _NUM
               + r"\b", re.I),
]
PERCENT = re.compile(r"\b(\d{1,3})\s*%")
STANCE = re.compile(r"\(\s*\[\s*" + _YN + r"\s*\]\s*\)", re.I)


def _single(matches: list[str]) -> str | None:
    vals = {m.upper() for m in matches}
    return vals.pop() if len(vals) == 1 else None


def parse_verdict(text: str) -> bool | None:
    """``True`` for YES, ``False`` for NO, ``None`` when absent or ambiguous."""
    if not text:
        return None
    m = VERDICT_STRICT.findall(text)
    if m:
        v = _single(m)
        if v is None:  # both [[YES]] and [[NO]] (e.g. echoing "[[YES]] or [[NO]]"): take the last one only
            v = m[-1].upper()       # if the reply does not also echo the instruction pattern
            if re.search(r"\[\[\s*YES\s*\]\]\s*(or|/)\s*\[\[\s*NO\s*\]\]", text, re.I):
                rest = re.sub(r"\[\[\s*YES\s*\]\]\s*(or|/)\s*\[\[\s*NO\s*\]\]", "", text, flags=re.I)
                return parse_verdict(rest)
            return None
        return v == "YES"
    for pat in VERDICT_LENIENT:
        v = _single(pat.findall(text))
        if v:
            return v == "YES"
    f = {x.lower().split()[0] for x in FULFIL.findall(text)}
    if f:
        f = {"no" if x in ("not", "unfulfilled", "unfulfiled") else "yes" for x in f}
        if len(f) == 1:
            return f.pop() == "yes"
        return None
    m = LEADING.match(text.strip())
    if m:
        return m.group(1).lower() == "yes"
    return None


def parse_confidence(text: str) -> float | None:
    """A number in [0, 1] from ``[[0.7]]`` (or lenient forms); ``None`` if absent."""
    if not text:
        return None
    for pat in [CONF_STRICT, *CONF_LENIENT]:
        m = pat.findall(text)
        if m:
            return max(0.0, min(1.0, float(m[-1])))
    m = PERCENT.findall(text)
    if m and 0 <= int(m[-1]) <= 100:
        return int(m[-1]) / 100
    return None


def parse_stance(text: str) -> bool | None:
    m = STANCE.findall(text or "")
    v = _single(m) if m else None
    return None if v is None else v == "YES"


def parse_verdict_and_probability(text: str) -> tuple[bool, float | None] | None:
    """For the baselines: the verdict must parse; the probability is optional (``None`` if missing)."""
    v = parse_verdict(text)
    if v is None:
        return None
    return v, parse_confidence(text)


@dataclass
class Parsed:
    value: Any                     # the parsed value, None when unparsed
    text: str                      # the reply that produced it (last reply when unparsed)
    attempts: int                  # 1 + retries used
    path: str                      # text | text-retry | logprobs | unparsed
    replies: list[str] = field(default_factory=list)
    p_yes: float | None = None     # from log-probs, when that path was used
    input_tokens: int = 0          # all attempts together (for transcripts; the ledger has each call)
    output_tokens: int = 0

    @property
    def unparsed(self) -> bool:
        return self.path == "unparsed"


REMINDER = ("Your reply did not follow the required format. Answer again, briefly, and end with {fmt} "
            "exactly as written.")


def ask_parsed(model, messages: list[dict], parse: Callable[[str], Any], *, fmt: str, max_tokens: int,
               retries: int = 2, seed: int = 0, temperature: float = 0.0, retry_temperature: float = 0.7,
               first=None) -> Parsed:
    """Ask ``messages``; re-ask at most ``retries`` times while ``parse`` returns ``None``.

    ``first`` may carry an already obtained :class:`Completion` for the first attempt (batched turns).
    """
    replies = []
    for attempt in range(retries + 1):
        if attempt == 0:
            with LEDGER.tagged(attempt=0):
                comp = first if first is not None else model.chat(messages, temperature=temperature,
                                                                  max_tokens=max_tokens, seed=seed)
            convo = list(messages)
        else:
            convo = convo + [{"role": "assistant", "content": replies[-1]},
                             {"role": "user", "content": REMINDER.format(fmt=fmt)}]
            with LEDGER.tagged(attempt=attempt):
                comp = model.chat(convo, temperature=retry_temperature, max_tokens=max_tokens,
                                  seed=seed * 1000 + 7919 * attempt)
        replies.append(comp.text)
        value = parse(comp.text)
        if value is not None:
            return Parsed(value, comp.text, attempt + 1, "text" if attempt == 0 else "text-retry", replies)
    return Parsed(None, replies[-1] if replies else "", len(replies), "unparsed", replies)


def logprob_verdict(model, messages: list[dict]) -> Parsed:
    """Verdict read from the log-probs of ``[[YES]]`` vs ``[[NO]]`` as the start of the reply."""
    with LEDGER.tagged(attempt="logprobs"):
        lp = model.choice_logprobs(messages, ["[[YES]]", "[[NO]]"]).logprobs
    a, b = lp["[[YES]]"], lp["[[NO]]"]
    if math.isinf(a) and math.isinf(b) or math.isnan(a) or math.isnan(b):
        # neither choice is among the model's likely replies: the log-probs say nothing, so no verdict
        return Parsed(None, "[logprobs] neither [[YES]] nor [[NO]] among the likely replies", 1, "unparsed")
    p_yes = 1.0 / (1.0 + math.exp(min(700.0, b - a)))
    return Parsed(p_yes >= 0.5, f"[logprobs] P(YES)={p_yes:.3f}", 1, "logprobs", [], p_yes)


def ask_verdict(model, messages, parse=parse_verdict, *, via: str = "text", fmt: str = "[[YES]] or [[NO]]",
                max_tokens: int = 64, retries: int = 2, seed: int = 0, first=None) -> Parsed:
    """A verdict by the chosen path (``text`` | ``logprobs`` | ``text+logprobs``), with the tokens of all
    its attempts (``first``, when given, was made and recorded by the caller)."""
    if via not in ("text", "logprobs", "text+logprobs"):
        raise ValueError(f"verdict_via must be text, logprobs or text+logprobs, not {via!r}")
    with LEDGER.collect() as tally:
        res = _ask_verdict(model, messages, parse, via, fmt, max_tokens, retries, seed, first)
    calls = tally.records
    res.input_tokens = sum(r.input_tokens for r in calls) + (first.input_tokens if first is not None else 0)
    res.output_tokens = sum(r.output_tokens for r in calls) + (first.output_tokens if first is not None else 0)
    return res


def _ask_verdict(model, messages, parse, via, fmt, max_tokens, retries, seed, first) -> Parsed:
    if via == "logprobs":
        return logprob_verdict(model, messages)
    res = ask_parsed(model, messages, parse, fmt=fmt, max_tokens=max_tokens, retries=retries, seed=seed,
                     first=first)
    if res.unparsed and via == "text+logprobs":
        lp = logprob_verdict(model, messages)
        lp.replies = res.replies
        lp.attempts = res.attempts + 1
        if lp.unparsed:
            lp.text = res.text
            return lp
        if parse is not parse_verdict:       # callers expecting (verdict, probability)
            lp.value = (lp.value, lp.p_yes)
        return lp
    return res
