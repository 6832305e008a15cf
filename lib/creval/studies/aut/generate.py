"""Alternative uses at three creativity levels (Rabeyah et al. 2024 §3.1, prompts after Góes et al. 2023).

``common`` and ``creative`` are one turn each; ``highly_creative`` is one long turn that defines the scale and
gives five heuristics (shape, size, material, physics, another domain), followed by ``aut_forceful_turns``
escalating follow-ups in the same conversation; the list of the last turn that is not a refusal is the
level's set. All wording is ours. Every turn is stored (:class:`TurnRecord`); a list shorter than asked is
re-asked at most ``retries`` times, then kept and flagged ``short``; a refusal is detected and flagged.
One object x generator x level is one unit of the study's run (:func:`generate_level`): its turns are a chain.
"""
from __future__ import annotations

import hashlib
import re

from creval.core.ledger import LEDGER
from creval.studies.aut.records import TurnRecord, UseRecord

FORMAT = ("Give exactly {n} uses as a numbered list, one per line, each use about five words long and "
          "without adjectives. Write nothing else.")
COMMON = "What are {n} common, everyday uses of a {object}? " + FORMAT
CREATIVE = "Think of {n} creative alternative uses of a {object}. " + FORMAT
HIGHLY = (
    "I want {n} highly creative alternative uses of a {object}.\n"
    "A use is less creative when it is close to what a {object} is normally used for, or when it is "
    "imaginary or physically impossible. A use is more creative when it is unexpected and still feasible "
    "and practical.\n"
    "Ways to find such uses:\n"
    "1. Shape: think of things with a similar shape that a {object} could replace while keeping their function.\n"
    "2. Size: think of things of a similar size that a {object} could replace without breaking the structure "
    "they belong to.\n"
    "3. Material: think of things made of the same material as a {object}.\n"
    "4. Reality: the overall structure must stay intact and no law of physics may be broken.\n"
    "5. Another domain: take something from a field where a {object} is never used, whose element resembles a "
    "{object}, and put the {object} in its place.\n" + FORMAT)
FOLLOWUPS = (
    "Is that really the best you can do? I doubt it. Give me {n} new uses that are more creative. " + FORMAT,
    "Honestly, that is disappointing. Make a real effort this time: {n} uses that are truly creative yet "
    "feasible. " + FORMAT,
    "No more excuses. I need {n} uses that nobody else would think of and that would actually work. " + FORMAT,
    "This is your final chance. Give me the {n} most creative and still practical uses you can find. " + FORMAT,
)
LEVELS = {"common": 1, "creative": 2, "highly_creative": 3}   # the oracle's order
REASK = "Your answer did not contain {n} uses. " + FORMAT

_REFUSAL = re.compile(r"\b(I(?:'m| am) sorry|I can(?:no|')t (?:assist|help|do|provide|comply)|I cannot|as an AI|"
                      r"I(?:'m| am) (?:not able|unable))\b", re.I)
_ITEM = re.compile(r"^\s*(?:\d+\s*[.):\-]|[-*\u2022])\s*(.+)$")


def is_refusal(text: str) -> bool:
    """True for a reply that declines (apology or inability phrases) rather than answering."""
    return bool(_REFUSAL.search(text or ""))


def _clean(s: str) -> str:
    s = re.sub(r"\*\*|__", "", s).strip().strip("\"'\u201c\u201d").strip()
    s = re.sub(r"\s+", " ", s)
    return s.rstrip(".;,").strip()


def parse_use_list(text: str, n: int) -> list[str]:
    """Up to ``n`` uses from a reply: numbered or bulleted lines (numbering, bold and quotes stripped); if the
    reply has none, its non-empty lines that do not end with a colon. Empty items and case-insensitive
    duplicates are dropped."""
    lines = (text or "").splitlines()
    items = [m.group(1) for m in map(_ITEM.match, lines) if m]
    if not items:
        items = [ln for ln in lines if ln.strip() and not ln.strip().endswith(":") and not is_refusal(ln)]
    out, seen = [], set()
    for it in items:
        c = _clean(it)
        if c and len(c) <= 200 and c.lower() not in seen:
            seen.add(c.lower())
            out.append(c)
    return out[:n]


def au_id(obj: str, generator: str, level: str, idx: int) -> str:
    return hashlib.sha256(f"{obj}|{generator}|{level}|{idx}".encode()).hexdigest()[:12]


def _ask(model, convo: list[dict], n: int, *, temperature: float, max_tokens: int, seed: int, retries: int,
         tag: dict) -> tuple[list[str], list[dict], list[str]]:
    """One turn of one conversation, re-asked at most ``retries`` times while its list is short (a chain).
    Returns the parsed uses, the conversation including the final reply, and every reply."""
    uses: list[str] = []
    replies: list[str] = []
    for attempt in range(retries + 1):
        with LEDGER.tagged(attempt=attempt):
            c = model.chat_many([convo], temperature=temperature, max_tokens=max_tokens, seed=seed, tags=[tag])[0]
        replies.append(c.text)
        got = parse_use_list(c.text, n)
        if len(got) > len(uses) or attempt == 0:
            uses = got
        convo = convo + [{"role": "assistant", "content": c.text}]
        if len(uses) >= n or is_refusal(c.text) or attempt == retries:
            break
        convo = convo + [{"role": "user", "content": REASK.format(n=n)}]
    return uses, convo, replies


def generate_level(model, generator: str, obj: str, level: str, n: int, *, forceful_turns: int = 4,
                   temperature: float = 0.7, max_tokens: int = 96, retries: int = 2,
                   seed: int = 0) -> tuple[list[UseRecord], list[TurnRecord]]:
    """The uses of one object at one level by one generator, and every reply of its conversation.
    ``common``/``creative``: one turn; ``highly_creative``: the forceful chain, whose last list that is not a
    refusal is kept."""
    turns: list[TurnRecord] = []

    def ask(convo: list[dict], turn: int) -> tuple[list[str], list[dict], list[str]]:
        got, convo, replies = _ask(model, convo, n, temperature=temperature, max_tokens=max_tokens, seed=seed,
                                   retries=retries, tag={"object": obj, "level": level, "turn": turn})
        turns.extend(TurnRecord(obj, generator, level, turn, a, r, len(parse_use_list(r, n)), is_refusal(r))
                     for a, r in enumerate(replies))
        return got, convo, replies

    if level == "highly_creative":
        convo = [{"role": "user", "content": HIGHLY.format(n=n, object=obj)}]
        items, kept, refused = [], 0, True
        for t in range(forceful_turns + 1):
            got, convo, replies = ask(convo, t)
            if got and not is_refusal(replies[-1]):
                items, kept, refused = got, t, False
            if t < forceful_turns:
                convo = convo + [{"role": "user", "content": FOLLOWUPS[min(t, len(FOLLOWUPS) - 1)].format(n=n)}]
    else:
        prompt = (COMMON if level == "common" else CREATIVE).format(n=n, object=obj)
        items, _, replies = ask([{"role": "user", "content": prompt}], 0)
        kept, refused = 0, is_refusal(replies[-1]) and not items
    uses = [UseRecord(au_id(obj, generator, level, i), obj, generator, level, LEVELS[level], i, text, kept, refused,
                      len(items) < n) for i, text in enumerate(items)]
    return uses, turns
