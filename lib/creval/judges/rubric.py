"""Rubric LLM judges of Rethinking creativity evaluation (App. G: "multi-aspect rubric + CoT"), in our words.

A dialogue per text: turn 1 asks for an analysis of every aspect (no scores), then each aspect is scored on
its own anchored scale, the answer written as ``[[Aspect: X]]``.

- Local model (``logprob_kind == "raw"``): the score is the EXPECTED VALUE of the model's distribution over
  the allowed answers ``[[Aspect: v]]`` (exact log-probs via ``Model.choice_logprobs``, renormalised over
  the allowed values), so no score is ever unparsed; the arg-max value is kept too.
- Server (no raw log-probs): the reply is parsed; up to ``reasks`` re-asks quote the expected form; then
  the score is ``None`` with ``state = "unparsed"`` (never a silent default). Every question of a round goes
  out in one batch (the server's in-flight budget overlaps them), then one batch of re-asks per round.

Domains and aspects (the paper's Table 2 column in bold): creative writing ``cw`` (Background Setup,
Logic, Development, **Originality**; 1-5), problem solving ``ps`` (Problem Difficulty,
**Unconventionality**, Efficiency; 1-5), research ideation ``ri`` (Soundness 1-4 by halves, Presentation
1-4, **Contribution** 1-4, Overall 1-10).

Also: :func:`twist_test` (ask "is it conventional?" and "is it unconventional?"; a consistent judge says
yes to exactly one); the rubric itself, its record and :func:`~creval.measures.rubric.rerun_consistency` (the
analysis sampled k times at temperature 1) are in :mod:`creval.measures.rubric`, where reports read them.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from creval.judges.base import render, template
from creval.measures.rubric import ASPECTS, RubricRecord, rerun_consistency  # noqa: F401 (the rubric and its record)
from creval.models.records import no_evidence

HEADLINE = {"cw": "Originality", "ps": "Unconventionality", "ri": "Contribution"}


def _fmt(v) -> str:
    if isinstance(v, str):
        return v
    return str(int(v)) if float(v).is_integer() else str(v)


def answer(aspect: str, v) -> str:
    return f"[[{aspect}: {_fmt(v)}]]"


def parse_score(reply: str, aspect: str, values: Sequence) -> float | None:
    """The value in ``[[Aspect: X]]`` (also ``Aspect: X``) if it is an allowed value, else None."""
    allowed = {float(v) for v in values}
    for pat in (rf"\[\[\s*{re.escape(aspect)}\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*\]\]",
                rf"{re.escape(aspect)}\s*:\s*([0-9]+(?:\.[0-9]+)?)"):
        m = re.search(pat, reply, flags=re.I)
        if m and float(m.group(1)) in allowed:
            return float(m.group(1))
    return None


def _analyse_messages(domain: str, text: str, problem: str | None) -> list[dict]:
    if domain not in ASPECTS:
        raise ValueError(f"rubric domain must be one of {sorted(ASPECTS)}, got {domain!r}")
    user = render(f"rubric_{domain}_analyse", text=text, problem=problem or "")
    return [{"role": "system", "content": template("rubric_system")}, {"role": "user", "content": user}]


def _score_messages(base: list[dict], analysis: str, aspect: str, values, anchors: str) -> list[dict]:
    ask = render("rubric_score", aspect=aspect, anchors=anchors, values=", ".join(_fmt(v) for v in values))
    return [*base, {"role": "assistant", "content": analysis}, {"role": "user", "content": ask}]


def expected_scores(model, items: Sequence[tuple[list[dict], str, tuple]]) -> list[tuple[float | None, float | None]]:
    """(expected value, arg-max) of each ``(messages, aspect, values)`` from the label log-probs; ``(None, None)``
    (unparsed) where no label has a log-prob."""
    res = model.choice_logprobs_many([(m, [answer(a, v) for v in vals]) for m, a, vals in items])
    out = []
    for (m, a, vals), r in zip(items, res):
        if no_evidence(r.logprobs):
            out.append((None, None))
            continue
        lp = np.array([r.logprobs[answer(a, v)] for v in vals], dtype=float)
        p = np.exp(lp - lp.max())
        p /= p.sum()
        out.append((float(np.dot(p, np.asarray(vals, dtype=float))), float(vals[int(np.argmax(p))])))
    return out


def _each(model, fn, xs: Sequence) -> list:
    """``[fn(x) for x in xs]``, the calls overlapping on a server (threads that carry the caller's context:
    its ledger tags and tallies); in order on a local model, which computes one request at a time anyway."""
    if not getattr(model, "concurrent", False) or len(xs) < 2:
        return [fn(x) for x in xs]
    import concurrent.futures
    import contextvars
    with concurrent.futures.ThreadPoolExecutor(min(len(xs), 64)) as ex:
        return list(ex.map(lambda x: contextvars.copy_context().run(fn, x), xs))


def parsed_scores(model, items: Sequence[tuple[list[dict], str, tuple]], reasks: int = 2) -> list[tuple]:
    """(parsed score or None, tries) of each ``(messages, aspect, values)`` from the greedy replies: every
    question in one batch, then one batch per round of re-asks (quoting the expected form) for the replies
    that did not parse, up to ``reasks``."""
    convs = [list(m) for m, _, _ in items]
    scores, tries = [None] * len(items), [0] * len(items)
    todo = list(range(len(items)))
    while todo:
        replies = model.chat_many([convs[j] for j in todo], temperature=0.0, max_tokens=24)
        left = []
        for j, c in zip(todo, replies):
            _, a, vals = items[j]
            tries[j] += 1
            scores[j] = parse_score(c.text, a, vals)
            if scores[j] is None and tries[j] <= reasks:
                convs[j] += [{"role": "assistant", "content": c.text},
                             {"role": "user", "content": f"Write only {answer(a, 'X')} with X one of "
                                                         f"{', '.join(_fmt(v) for v in vals)}."}]
                left.append(j)
        todo = left
    return list(zip(scores, tries))


def rubric_judge(model, items: Sequence[dict], domain: str, analysis_tokens: int = 200, reasks: int = 2,
                 samples: int = 0, seed: int = 0) -> list[RubricRecord]:
    """Score ``items`` (dicts with ``id``, ``text`` and for ``ps`` a ``problem``) on the domain's rubric.

    ``samples = 0``: one greedy analysis per item (variant 0). ``samples = k``: k analyses sampled at
    temperature 1 (variants 1..k), for :func:`rerun_consistency`. All calls go through the model cache."""
    bases = [_analyse_messages(domain, it["text"], it.get("problem")) for it in items]
    if samples:
        analyses = _each(model, lambda b: [s.text for s in model.sample(b, samples, temperature=1.0,
                                                                         max_tokens=analysis_tokens, seed=seed)], bases)
    else:
        analyses = [[c.text] for c in model.chat_many(bases, temperature=0.0, max_tokens=analysis_tokens)]
    local = getattr(model, "logprob_kind", "raw") == "raw"
    aspects = ASPECTS[domain]
    jobs = [(i, k, a, vals, anch) for i in range(len(items)) for k in range(len(analyses[i]))
            for a, vals, anch in aspects]
    asks = [(_score_messages(bases[i], analyses[i][k], a, vals, anch), a, vals) for i, k, a, vals, anch in jobs]
    if local:
        scored = [(ev, arg, 0) for ev, arg in expected_scores(model, asks)]
    else:
        scored = [(score, score, tries) for score, tries in parsed_scores(model, asks, reasks)]
    per: dict = {}
    for (i, k, a, _, _), v in zip(jobs, scored):
        per.setdefault((i, k), {})[a] = v
    out = []
    for i, it in enumerate(items):
        for k in range(len(analyses[i])):
            s = per[(i, k)]
            state = "ok" if all(v[0] is not None for v in s.values()) else "unparsed"
            out.append(RubricRecord(str(it["id"]), domain, {a: v[0] for a, v in s.items()},
                                    {a: v[1] for a, v in s.items()}, state, "logprobs" if local else "parsed",
                                    analyses[i][k], model.name, k + 1 if samples else 0,
                                    {a: v[2] for a, v in s.items()}))
    return out


def twist_test(model, items: Sequence[dict]) -> list[dict]:
    """P(yes) to "is this solution conventional?" and to "... unconventional?" for each item; a consistent
    judge answers yes to exactly one (``contradiction``: both yes or both no, by P(yes) > 0.5). Where neither
    "Yes" nor "No" has a log-prob the item is ``unparsed``: its P(yes) and verdicts are NaN, never a label."""
    asks = []
    for it in items:
        for pol in ("conventional", "unconventional"):
            asks.append(([{"role": "user", "content": render("rubric_twist", problem=it.get("problem", ""),
                                                                text=it["text"], polarity=pol)}], ["Yes", "No"]))
    res = model.choice_logprobs_many(asks)
    out = []
    for j, it in enumerate(items):
        py = []
        for r in res[2 * j:2 * j + 2]:
            a, b = r.logprobs["Yes"], r.logprobs["No"]
            py.append(float("nan") if no_evidence(r.logprobs) else float(1 / (1 + np.exp(min(700.0, b - a)))))
        bad = any(np.isnan(py))
        out.append({"id": it["id"], "p_yes_conventional": py[0], "p_yes_unconventional": py[1],
                    "says_unconventional": float("nan") if bad else float(py[1] > 0.5),
                    "says_conventional": float("nan") if bad else float(py[0] > 0.5),
                    "contradiction": float("nan") if bad else float((py[0] > 0.5) == (py[1] > 0.5)),
                    "unparsed": bad})
    return out
