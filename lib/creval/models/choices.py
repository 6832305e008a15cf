"""Choice scores from a server's greedy reply and its top alternatives (the server path of ``choice_logprobs``).

A server cannot score a given text as a reply; it can say which tokens it would have put at each step of its own
reply (``top_logprobs``, up to 20). :func:`score_choices` reads each choice along that reply. Two alternatives that
differ only by a leading space (``"B"`` and ``" B"``, which tokenizers keep as distinct tokens) both stand for the
choice at a reply's start; the choice takes the **larger** of their log-probs. We take the max rather than the
log-sum-exp of the variants: a local backend scores the choice's own tokens (one spelling), and the max is the
spelling the model prefers, never below it; log-sum-exp would add the other spelling's mass, which a local backend
does not count. A different case is a different answer (``"yes"`` is not ``"Yes"``), as on a local backend.
Nothing here turns missing log-probs into a number: a choice no listed token continues is -inf, and a set of
choices with any -inf is ``unparsed`` (:attr:`creval.models.records.ChoiceScores.unparsed`): P(YES) is never 1.0
because NO was not listed.
"""
from __future__ import annotations

import math
from typing import Sequence

Step = tuple[str, float, dict[str, float]]


def token_steps(choice: dict) -> list[Step]:
    """``(token, logprob, {alternative: logprob})`` for each generated token of a reply (chat or completions
    shape). A reply without log-probs has no steps."""
    lp = choice.get("logprobs") or {}
    if isinstance(lp.get("content"), list):
        return [(t.get("token", ""), _num(t.get("logprob")), _best({a.get("token", ""): _num(a.get("logprob"))
                                                                   for a in t.get("top_logprobs") or []}.items()))
                for t in lp["content"]]
    toks, lps, tops = lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []
    return [(t, _num(x), {k: _num(v) for k, v in (alt or {}).items()})
            for t, x, alt in zip(toks, lps, list(tops) + [{}] * (len(toks) - len(tops)))]


def _num(x) -> float:
    return -math.inf if x is None else float(x)


def _best(pairs) -> dict[str, float]:
    """``{token: logprob}`` from pairs, keeping the larger log-prob where a token string repeats."""
    out: dict[str, float] = {}
    for k, v in pairs:
        out[k] = max(v, out.get(k, -math.inf))
    return out


def _variants(alts: dict[str, float], at_start: bool) -> dict[str, float]:
    """The alternatives as the choice text they would continue: at the reply's start a leading space is dropped,
    and variants that then coincide keep their larger log-prob (see the module doc)."""
    return _best(((a.lstrip() if at_start else a), lp) for a, lp in alts.items())


def score_choices(steps: list[Step], choices: Sequence[str]) -> dict[str, float]:
    """The log-prob of each choice as the start of a reply (:func:`_along`). A reply that opens with
    whitespace-only tokens (``"\\n"``, ``" "``) reaches the choice one step later: each choice takes the better of
    its score at the first step and its score after those tokens (their log-probs added), so it is read at the
    token where the reply's answer starts."""
    out = _along(steps, choices)
    k = next((i for i, (t, _, _) in enumerate(steps) if t.strip()), len(steps))
    if 0 < k < len(steps):
        lead = sum(lp for _, lp, _ in steps[:k])
        out = {c: max(v, lead + w) for (c, v), w in zip(out.items(), _along(steps[k:], choices).values())}
    return out


def _along(steps: list[Step], choices: Sequence[str]) -> dict[str, float]:
    """The log-prob of each choice as the start of a reply, from the greedy reply's token steps.

    Walk the reply: while a choice's text continues along the generated tokens, add their log-probs; at the
    first step where it parts from the reply, add the best alternative token (among the step's top ones)
    that continues it and stop (its later tokens are taken as certain); a choice that no listed token
    continues gets -inf. A choice the reply spells out whole gets its exact log-prob. Two choices sharing
    their first tokens are thus compared where they differ, not on the shared ``[[``."""
    out: dict[str, float] = {}
    where: dict[str, tuple[int, str]] = {}        # (step, token) that decided a choice cut short
    for c in choices:
        pos, total, score = 0, 0.0, -math.inf
        for step, (raw, lp, alts) in enumerate(steps):
            tok = raw.lstrip() if pos == 0 else raw         # a reply may open with a space
            rest = c[pos:]
            alt = _variants(alts, pos == 0)
            if tok and rest.startswith(tok):
                lp = max(lp, alt.get(tok, -math.inf))       # " B" generated, "B" listed higher: the better one
                total += lp
                pos += len(tok)
                if pos >= len(c):
                    score = total
                    break
                continue
            if tok and tok.startswith(rest):             # the reply's token covers the rest of the choice
                score = total + max(lp, alt.get(tok, -math.inf))
                break
            cont = {a: a_lp for a, a_lp in alt.items() if a and (rest.startswith(a) or a.startswith(rest))}
            if cont:
                best = max(cont, key=cont.get)
                score = total + cont[best]
                if len(best) < len(rest):
                    where[c] = (step, best)
            break
        out[c] = score
    # two choices cut short at the same step by the same token (the shared "[[") are not told apart: say so
    for c, w in where.items():
        if any(o != c and where.get(o) == w for o in where):
            out[c] = -math.inf
    return out
