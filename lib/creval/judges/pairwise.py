"""A pairwise judge: which of two models' answers to the same item is better, asked in both presentation orders.

One comparison shows the judge the item's task and two answers, labelled A and B, and reads its preference from
the log-probabilities of the replies ``"A"`` and ``"B"`` (``model.choice_logprobs_many``; no free text is
parsed). Each pair is asked twice, once with each answer first (as arena-hard-auto and MT-Bench do):

- both orders prefer the same answer: that answer wins (score 1 or 0);
- the orders disagree (a **flip**: the judge preferred a position, not an answer): a tie (score 0.5), counted;
- either order has no finite log-probability for A and B: ``unparsed`` (no score, left out of every fit).

The **position-bias rate** of a set of comparisons is the share of flips; ``first_rate`` is the share of single
judgements that picked the answer shown first (0.5 when the judge has no position preference).

Every comparison carries the judge's provenance (:func:`provenance`): its model spec and version, the hash of the
prompt templates, the sampling settings and the order seed; numbers whose provenance differs are not compared.
Prompts: ``prompts/pairwise_system.txt`` and ``prompts/pairwise_user.txt`` (written for this project).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import Sequence

from creval.judges.base import clip_words, render, template

STANDARDS = {
    "macgyver": ("The better answer is a plan that would actually solve the stated problem with only the items "
                 "listed, in few, clear, safe steps. A plan that fails, needs items that are not listed, or "
                 "gives up on a problem that can be solved is worse."),
    "ttcw": ("The better answer is the better short story: a fresh, surprising take on the plot, vivid and "
             "specific writing, characters with depth and an ending that feels earned. Cliches, generic "
             "phrasing and a flat structure make a story worse."),
    "default": "The better answer is the more correct, useful and original one.",
}
TEMPLATES = ("pairwise_system", "pairwise_user")
CHOICES = ("A", "B")
UNPARSED = "unparsed"


def prompt_hash() -> str:
    """The first 16 hex digits of sha256 over the judge's prompt templates (a changed prompt, a new hash)."""
    return hashlib.sha256("\n\x00\n".join(template(t) for t in TEMPLATES).encode()).hexdigest()[:16]


def judge_version(model) -> str:
    """A hash of the judge's output-changing spec fields (weights, backend, context); ``model`` is a loaded
    model or its spec (anything else: a hash of its name)."""
    spec = getattr(model, "spec", model)
    ident = spec.identity() if hasattr(spec, "identity") else {"name": str(model)}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]


def provenance(model, order_seed: int, words: int, standard: str) -> dict:
    """What a pairwise number depends on: the judge's spec name and a hash of its output-changing fields (its
    version: weights, backend, context), the prompt templates' hash, the standard's hash, the sampling
    settings and the order seed."""
    spec = getattr(model, "spec", None)
    return {"judge_model": getattr(spec, "name", str(model)), "judge_version": judge_version(model),
            "prompt_sha": prompt_hash(), "standard_sha": hashlib.sha256(standard.encode()).hexdigest()[:16],
            "sampling": f"choice log-probs of {'/'.join(CHOICES)} (no sampling); answers clipped to {words} words",
            "order_seed": int(order_seed)}


def messages(task: str, first: str, second: str, standard: str) -> list[dict]:
    """The chat shown to the judge: ``first`` as Answer A, ``second`` as Answer B."""
    return [{"role": "system", "content": template("pairwise_system")},
            {"role": "user", "content": render("pairwise_user", standard=standard, task=task, first=first,
                                               second=second)}]


@dataclass
class PairJudgement:
    """One item's comparison of ``a`` and ``b`` in both orders. ``votes``: (order a-first, order b-first),
    each ``"a"``, ``"b"`` or ``"unparsed"``; ``score``: 1 a wins, 0 b wins, 0.5 a flip (tie), None unparsed."""
    item: str
    a: str
    b: str
    votes: tuple[str, str]
    score: float | None
    flip: bool
    first_picks: int          # single judgements (of the parsed ones) that picked the answer shown first
    parsed_orders: int
    state: str = "ok"          # ok | unparsed

    def to_dict(self) -> dict:
        d = asdict(self)
        d["votes"] = list(self.votes)
        return d


def _pick(lp: dict) -> str:
    """``"first"``/``"second"`` from the choice log-probs, or unparsed when either is missing or not finite."""
    x, y = lp.get("A"), lp.get("B")
    if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)) or x == y:
        return UNPARSED
    return "first" if x > y else "second"


def combine(item: str, a: str, b: str, lp_ab: dict, lp_ba: dict) -> PairJudgement:
    """The two-order verdict from the choice log-probs of (a shown first) and (b shown first)."""
    p1, p2 = _pick(lp_ab), _pick(lp_ba)
    v1 = UNPARSED if p1 == UNPARSED else ("a" if p1 == "first" else "b")
    v2 = UNPARSED if p2 == UNPARSED else ("b" if p2 == "first" else "a")
    firsts = sum(p == "first" for p in (p1, p2))
    parsed = sum(p != UNPARSED for p in (p1, p2))
    if UNPARSED in (v1, v2):
        return PairJudgement(item, a, b, (v1, v2), None, False, firsts, parsed, UNPARSED)
    flip = v1 != v2
    return PairJudgement(item, a, b, (v1, v2), 0.5 if flip else (1.0 if v1 == "a" else 0.0), flip, firsts, 2)


class PairwiseJudge:
    """Pairwise comparisons by ``model`` (anything with ``choice_logprobs_many``), answers clipped to ``words``."""

    def __init__(self, model, domain: str = "default", words: int = 200, order_seed: int = 0):
        self.model, self.words = model, int(words)
        self.standard = STANDARDS.get(domain, STANDARDS["default"])
        self.provenance = provenance(model, order_seed, self.words, self.standard)

    def judge_many(self, jobs: Sequence[tuple[str, str, str, str, str, str]]) -> list[PairJudgement]:
        """``jobs``: ``(item, task, a, answer_a, b, answer_b)``; both orders of every job in one batch."""
        asks = []
        for _, task, _, xa, _, xb in jobs:
            xa, xb = clip_words(xa, self.words), clip_words(xb, self.words)
            asks += [(messages(task, xa, xb, self.standard), list(CHOICES)),
                     (messages(task, xb, xa, self.standard), list(CHOICES))]
        lp = [s.logprobs for s in self.model.choice_logprobs_many(asks)] if asks else []
        return [combine(it, a, b, lp[2 * k], lp[2 * k + 1]) for k, (it, _, a, _, b, _) in enumerate(jobs)]


def position_bias(judgements: Sequence[PairJudgement]) -> dict:
    """``flip_rate``: share of parsed two-order comparisons whose orders disagree; ``first_rate``: share of
    parsed single judgements that picked the answer shown first; ``unparsed``: comparisons left out."""
    ok = [j for j in judgements if j.state == "ok"]
    singles = sum(j.parsed_orders for j in judgements)
    return {"comparisons": len(ok), "unparsed": len(judgements) - len(ok),
            "flip_rate": sum(j.flip for j in ok) / len(ok) if ok else float("nan"),
            "first_rate": sum(j.first_picks for j in judgements) / singles if singles else float("nan")}
