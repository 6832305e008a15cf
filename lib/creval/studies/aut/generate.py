"""Alternative uses at three creativity levels (Rabeyah et al. 2024 §3.1, prompts after Góes et al. 2023).

``common`` and ``creative`` are one turn each; ``highly_creative`` is one long turn that defines the scale and
gives five heuristics (shape, size, material, physics, another domain), followed by ``aut_forceful_turns``
escalating follow-ups in the same conversation; the list of the last turn that is not a refusal is the
level's set. All wording is ours. Every turn is stored (:class:`TurnRecord`); a list shorter than asked is
re-asked at most ``retries`` times, then kept and flagged ``short``; a refusal is detected and flagged.
The turns of every object go out together (one ``chat_many`` per turn), so the local backend decodes them in
one batch.
"""
from __future__ import annotations

import hashlib
import re
from typing import Sequence

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


def _ask(model, convos: list[list[dict]], n: int, *, temperature: float, max_tokens: int, seed: int, retries: int,
         tags: list[dict]) -> tuple[list[list[str]], list[list[dict]], list[list[str]]]:
    """One turn for every conversation, with bounded re-asks for short lists (batched per round).
    Returns per conversation: the parsed uses, the conversation including the final reply, every reply."""
    uses: list[list[str]] = [[] for _ in convos]
    replies: list[list[str]] = [[] for _ in convos]
    convos = [list(c) for c in convos]
    todo = list(range(len(convos)))
    for attempt in range(retries + 1):
        if not todo:
            break
        with LEDGER.tagged(attempt=attempt):
            comps = model.chat_many([convos[k] for k in todo], temperature=temperature, max_tokens=max_tokens,
                                    seed=seed, tags=[tags[k] for k in todo])
        nxt = []
        for k, c in zip(todo, comps):
            replies[k].append(c.text)
            got = parse_use_list(c.text, n)
            if len(got) > len(uses[k]) or attempt == 0:
                uses[k] = got
            convos[k] = convos[k] + [{"role": "assistant", "content": c.text}]
            if len(uses[k]) < n and not is_refusal(c.text) and attempt < retries:
                convos[k] = convos[k] + [{"role": "user", "content": REASK.format(n=n)}]
                nxt.append(k)
        todo = nxt
    return uses, convos, replies


def generate_uses(model, generator: str, objects: Sequence[str], n: int, *, forceful_turns: int = 4,
                  temperature: float = 0.7, max_tokens: int = 96, retries: int = 2,
                  seed: int = 0) -> tuple[list[UseRecord], list[TurnRecord]]:
    """Uses of every object at the three levels by one generator, and every turn of every conversation."""
    uses: list[UseRecord] = []
    turns: list[TurnRecord] = []

    def keep(obj, level, turn, items, replies, refused):
        for a, r in enumerate(replies):
            turns.append(TurnRecord(obj, generator, level, turn, a, r, len(parse_use_list(r, n)), is_refusal(r)))
        return items

    # common and creative: one turn each, all objects in one batch
    single = [(o, lvl) for o in objects for lvl in ("common", "creative")]
    convos = [[{"role": "user", "content": (COMMON if lvl == "common" else CREATIVE).format(n=n, object=o)}]
              for o, lvl in single]
    got, _, reps = _ask(model, convos, n, temperature=temperature, max_tokens=max_tokens, seed=seed, retries=retries,
                        tags=[{"object": o, "level": lvl, "turn": 0} for o, lvl in single])
    final: dict[tuple[str, str], tuple[list[str], int, bool]] = {}
    for (o, lvl), items, rr in zip(single, got, reps):
        keep(o, lvl, 0, items, rr, is_refusal(rr[-1]))
        final[(o, lvl)] = (items, 0, is_refusal(rr[-1]) and not items)
    # highly creative: the forceful chain, turn by turn, all objects in one batch per turn
    convos = [[{"role": "user", "content": HIGHLY.format(n=n, object=o)}] for o in objects]
    best: dict[str, tuple[list[str], int, bool]] = {o: ([], 0, True) for o in objects}
    for t in range(forceful_turns + 1):
        got, convos, reps = _ask(model, convos, n, temperature=temperature, max_tokens=max_tokens, seed=seed,
                                 retries=retries, tags=[{"object": o, "level": "highly_creative", "turn": t}
                                                        for o in objects])
        for i, o in enumerate(objects):
            keep(o, "highly_creative", t, got[i], reps[i], is_refusal(reps[i][-1]))
            if got[i] and not is_refusal(reps[i][-1]):
                best[o] = (got[i], t, False)
        if t < forceful_turns:
            convos = [c + [{"role": "user", "content": FOLLOWUPS[min(t, len(FOLLOWUPS) - 1)].format(n=n)}]
                      for c in convos]
    for o in objects:
        final[(o, "highly_creative")] = best[o]
    for o in objects:
        for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3)):
            items, turn, refused = final[(o, lvl)]
            for i, text in enumerate(items):
                uses.append(UseRecord(au_id(o, generator, lvl, i), o, generator, lvl, code, i, text, turn,
                                      refused, len(items) < n))
    return uses, turns
