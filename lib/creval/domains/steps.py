"""Step-wise prompting: the prompts that ask a model for its next unit (step or sentence), and the
cleaning of what it answers (paper sections 3.2 and 5). Used by the divergent study and chapter 01."""
from __future__ import annotations

import re
from typing import Sequence

from creval.core.text import split_sentences
from creval.domains import Domain, Problem

_MARKER_RE = re.compile(r"^\s*(?:(?:step|sentence)\s*\d+\s*[:.)\-]?|\d+\s*[.):]|[-*•])\s*", re.I)
_STEP_LINE_RE = re.compile(r"^\s*(?:(?:step)\s*\d+|\d+\s*[.):]|[-*•])\s*\S", re.I)
_STOP_RE = re.compile(r"^\W*stop\b", re.I)


def clean_step(text: str, unit: str = "step") -> str:
    """The text of one unit: first non-empty line, numbering marker removed, whitespace collapsed;
    for ``unit == "sentence"`` only its first sentence (closed with a period if unterminated)."""
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    t = lines[0]
    for _ in range(2):   # "Step 3: 3. do x" happens
        t = _MARKER_RE.sub("", t, count=1)
    t = " ".join(t.split()).strip().strip('"').strip()
    if unit == "sentence" and t:
        t = split_sentences(t)[0]
        if t[-1] not in ".!?\"'”’":
            t += "."
    return t


def is_stop_vote(clean: str) -> bool:
    """A sample votes STOP when its cleaned text is empty or starts with the word STOP."""
    return not clean or bool(_STOP_RE.match(clean))


def count_units(answer: str, unit: str) -> int:
    """Units in a complete answer: sentences for ``"sentence"``; step-like lines (else non-empty lines)."""
    if unit == "sentence":
        return len(split_sentences(answer))
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    steps = [ln for ln in lines if _STEP_LINE_RE.match(ln)]
    return len(steps) if steps else len(lines)


def _norm(t: str) -> str:
    return " ".join(t.lower().split())


def has_consecutive_duplicates(steps: Sequence[str]) -> bool:
    """True when two consecutive units are identical (case and whitespace ignored)."""
    return any(_norm(a) == _norm(b) for a, b in zip(steps, steps[1:]))


def render_so_far(steps: Sequence[str], unit: str) -> str:
    if unit == "sentence":
        return " ".join(steps) if steps else "(nothing yet)"
    return "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps)) if steps else "(none yet)"


def step_messages(domain: Domain, problem: Problem, chosen: Sequence[str], max_steps: int) -> list[dict]:
    """The prompt asking for the unit after ``chosen`` (the STOP option is offered from the second unit on).
    Chapter 01 samples its first step with this same prompt."""
    k = len(chosen)
    prompt = domain.render(domain.step_prompt, problem, k=k + 1, so_far=render_so_far(chosen, domain.unit),
                           stop_rule=domain.stop_rule if k > 0 else "", max_steps=max_steps)
    return [{"role": "system", "content": domain.system_prompt}, {"role": "user", "content": prompt}]


def join_solution(steps: Sequence[str], unit: str) -> str:
    return " ".join(steps) if unit == "sentence" else "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps))
