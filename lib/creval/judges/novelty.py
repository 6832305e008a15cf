"""Pairwise LLM novelty judge (paper appendices C.6 and L) and O(n log n) ranking by comparisons.

A comparison shows the judge two (question, answer) pairs labelled A and B and reads its preference from
the log-probabilities of the replies ``"A"`` and ``"B"`` (``model.choice_logprobs``; no free text is
parsed). Each pair is asked in both presentation orders to control position bias: the pair wins only if
both orders prefer it; if the orders disagree (the judge just prefers a position) the comparison is a tie.
Every call goes through the model's call cache, so re-ranking the same items costs nothing.

The paper inserted its judge into a bubble sort (n(n-1)/2 comparisons); here a merge sort needs at most
``n ceil(log2 n)`` comparisons, and the merges of one level of the sort advance together: each round asks
the next comparison of every merge of the level in one batch (:func:`merge_sort_levels`), so a server
answers a level in about as many rounds as its longest merge has comparisons. Ties (and any intransitive
preferences) are resolved the same way every time: a tie never moves an item, so tied items keep their input
order (the sort is stable). Callers that care should shuffle the input with a seed first
(:func:`rank_by_novelty` does) so that ties do not inherit a meaningful order.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable, Sequence

import pandas as pd

from creval.core.errors import CrevalError
from creval.models.records import no_evidence

SYSTEM = ("You rate how novel answers are. You are shown two answers, labelled A and B, each with the task it "
          "responds to. Decide which answer is more novel under the definition you are given. Reply with a "
          "single letter, A or B, and nothing else. You must pick one; never say they are equal.")

DEFINITIONS = {
    "macgyver": ("An answer is novel when it puts the available objects to surprising uses: an object used for "
                 "something it was not made for, or combined with another in a clever way, counts; a plain, "
                 "textbook use of an object does not. Judge only how inventive the object uses are. Do not "
                 "reward or punish whether the plan would work, its safety, wording, length or rule-following."),
    "aut": ("An answer is novel when the use it proposes for the object is unusual and surprising, far from "
            "the first uses most people would list. Do not judge spelling, wording, length or practicality."),
    "hypogen": ("An answer is novel when the research idea departs from the obvious next step: a surprising "
                "mechanism, an unexpected combination of fields or a reframing of the problem. Do not judge "
                "feasibility, correctness, wording or length."),
    "bookmia": ("An answer is novel when the story continuation takes an unexpected but meaningful turn: fresh "
                "images, events or perspectives rather than the most predictable continuation. Do not judge "
                "grammar, length or whether it reaches a given ending."),
    "default": ("An answer is novel when it is original and unexpected compared with the answers most people "
                "would give. Do not judge correctness, wording or length."),
}

USER = ("Definition of novelty: {definition}\n\n"
        "Answer A\nTask: {q1}\nResponse: {a1}\n\n"
        "Answer B\nTask: {q2}\nResponse: {a2}\n\n"
        "Which response is more novel, A or B? Reply with the letter only.")


def judge_messages(first: tuple[str, str], second: tuple[str, str], definition: str) -> list[dict]:
    """The chat shown to the judge: ``first`` is presented as A, ``second`` as B."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": USER.format(definition=definition, q1=first[0], a1=first[1],
                                                   q2=second[0], a2=second[1])}]


@dataclass
class Comparison:
    """One two-order comparison of items x and y. ``winner``: +1 x more novel, -1 y more novel, 0 tie."""
    winner: int
    votes: tuple[int, int]        # order (x as A), order (y as A): +1 means that order preferred x
    p_x: float                    # position-debiased P(x more novel): mean over both orders


class NoveltyJudge:
    """Pairwise novelty comparisons by ``model`` (any object with ``choice_logprobs_many``).

    ``compare(x, y)`` takes two ``(question, answer)`` pairs. ``definition`` picks a domain text from
    :data:`DEFINITIONS` (or give your own sentence)."""

    def __init__(self, model, domain: str = "default", definition: str | None = None):
        self.model = model
        self.definition = definition or DEFINITIONS.get(domain, DEFINITIONS["default"])
        self.calls = 0

    def compare(self, x: tuple[str, str], y: tuple[str, str]) -> Comparison:
        return self.compare_many([(x, y)])[0]

    def compare_many(self, pairs: Sequence[tuple[tuple[str, str], tuple[str, str]]]) -> list[Comparison]:
        """Each ``(x, y)`` compared in both orders, all of them in one batch call."""
        asks = [(judge_messages(a, b, self.definition), ["A", "B"]) for x, y in pairs for a, b in ((x, y), (y, x))]
        scores = self.model.choice_logprobs_many(asks) if asks else []
        self.calls += len(asks)
        bad = [s for s in scores if no_evidence(s.logprobs)]
        if bad:     # a choice without a log-prob: no comparison, never a tie (issue 32)
            neither = sum(1 for s in bad if not any(v is not None and math.isfinite(v)
                                                     for v in (s.logprobs or {}).values()))
            what = (f"neither A nor B a log-prob in {neither}" if neither == len(bad) else
                    f"only one of A and B a log-prob in {len(bad) - neither}" if not neither else
                    f"neither A nor B a log-prob in {neither} and only one of them in {len(bad) - neither}")
            raise CrevalError(f"novelty judge {getattr(self.model, 'name', '?')} gave {what} of {len(scores)} "
                              "comparisons (the server returned no log-probs, or its replies start elsewhere), "
                              "so novelty cannot be ranked",
                              "use a judge model whose server returns log-probs (`creval check MODEL`)")
        lp = [s.logprobs for s in scores]
        return [_comparison(lp[2 * k], lp[2 * k + 1]) for k in range(len(pairs))]


def _comparison(xy: dict, yx: dict) -> Comparison:
    """The two-order verdict from the choice log-probs of x shown as A (``xy``) and as B (``yx``)."""
    v1 = _sign(xy["A"] - xy["B"])      # +1: x (shown as A) preferred
    v2 = _sign(yx["B"] - yx["A"])      # +1: x (shown as B) preferred
    p = (_p_first(xy["A"], xy["B"]) + _p_first(yx["B"], yx["A"])) / 2
    return Comparison(v1 if v1 == v2 else 0, (v1, v2), p)


def _sign(d: float) -> int:
    return 1 if d > 0 else -1 if d < 0 else 0


def _p_first(a: float, b: float) -> float:
    m = max(a, b)
    ea, eb = math.exp(a - m), math.exp(b - m)
    return ea / (ea + eb)


# -- sorting by comparisons ------------------------------------------------------------------------------
def merge_sort(items: Sequence, cmp: Callable[[object, object], int]) -> tuple[list, int]:
    """Stable merge sort of ``items`` ascending under ``cmp(a, b)`` (<0: a before b, >0: b before a,
    0: tie). Returns (sorted list, number of ``cmp`` calls). A tie keeps the left (earlier) item first,
    so tied items keep their input order. At most ``n ceil(log2 n)`` comparisons for any ``cmp``, even an
    intransitive one."""
    return merge_sort_levels(items, lambda pairs: [cmp(a, b) for a, b in pairs])


def _splits(lo: int, hi: int, depth: int, out: list) -> None:
    """The merges of a top-down merge sort of ``[lo, hi)`` as ``(depth, lo, mid, hi)`` (left half the smaller)."""
    if hi - lo > 1:
        mid = lo + (hi - lo) // 2
        out.append((depth, lo, mid, hi))
        _splits(lo, mid, depth + 1, out)
        _splits(mid, hi, depth + 1, out)


def merge_sort_levels(items: Sequence, cmp_many: Callable[[list[tuple]], list[int]]) -> tuple[list, int]:
    """:func:`merge_sort` (the same splits, comparisons and result) with the merges of one level run
    together, deepest level first: each round calls ``cmp_many([(a, b), ...])`` once with the next
    comparison of every unfinished merge of the level (``cmp(a, b)`` semantics per pair)."""
    xs, merges = list(items), []
    _splits(0, len(xs), 0, merges)
    runs = {(i, i + 1): [x] for i, x in enumerate(xs)}
    count = 0
    for depth in sorted({m[0] for m in merges}, reverse=True):
        level = [[runs.pop((lo, mid)), runs.pop((mid, hi)), [], (lo, hi)]
                 for d, lo, mid, hi in merges if d == depth]
        live = level
        while live:
            verdicts = cmp_many([(right[0], left[0]) for left, right, _, _ in live])
            count += len(live)
            for (left, right, out, _), v in zip(live, verdicts):
                out.append(right.pop(0) if v < 0 else left.pop(0))   # only a strictly-before right item jumps ahead
            live = [m for m in live if m[0] and m[1]]
        for left, right, out, span in level:
            runs[span] = out + left + right
    return (runs.popitem()[1] if runs else []), count


def bubble_sort(items: Sequence, cmp: Callable[[object, object], int]) -> tuple[list, int]:
    """The paper's bubble sort (for comparison only): always n(n-1)/2 comparisons. Returns (list, count)."""
    xs, count = list(items), 0
    for end in range(len(xs) - 1, 0, -1):
        for i in range(end):
            count += 1
            if cmp(xs[i + 1], xs[i]) < 0:
                xs[i], xs[i + 1] = xs[i + 1], xs[i]
    return xs, count


@dataclass
class NoveltyRanking:
    """Result of :func:`rank_by_novelty`. ``order``: item indices from MOST to least novel; ``rank[i]``:
    1 = most novel; ``score[i]`` in [0, 1], 1 = most novel (``(n - rank) / (n - 1)``)."""
    order: list[int]
    rank: list[int]
    score: list[float]
    comparisons: int
    ties: int
    llm_calls: int
    log: list[dict] = field(default_factory=list)


def rank_by_novelty(items: Sequence[tuple[str, str]], judge: NoveltyJudge, seed: int = 0) -> NoveltyRanking:
    """Rank ``(question, answer)`` pairs by novelty with a merge sort driven by ``judge``.

    The input is shuffled with ``seed`` first so that tied items end up in a random (but reproducible)
    order rather than the caller's. Each comparison (two LLM calls, both orders) is memoised; the comparisons
    of one round of a merge-sort level go to the judge in one batch."""
    n = len(items)
    if n == 0:
        return NoveltyRanking([], [], [], 0, 0, 0)
    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    memo: dict[tuple[int, int], Comparison] = {}
    log: list[dict] = []
    calls0 = judge.calls

    def cmp_many(pairs: list[tuple[int, int]]) -> list[int]:
        # a placed before b (<0) when a is MORE novel: the sorted list runs from most to least novel
        keys = [(min(a, b), max(a, b)) for a, b in pairs]
        new = list(dict.fromkeys(k for k in keys if k not in memo))
        for k, c in zip(new, judge.compare_many([(items[x], items[y]) for x, y in new])):
            memo[k] = c
            log.append({"x": k[0], "y": k[1], "winner": c.winner, "votes": list(c.votes), "p_x": c.p_x})
        return [-memo[k].winner if a == k[0] else memo[k].winner for (a, _), k in zip(pairs, keys)]

    order, count = merge_sort_levels(idx, cmp_many)
    rank = [0] * n
    for r, i in enumerate(order, start=1):
        rank[i] = r
    score = [(n - rank[i]) / (n - 1) if n > 1 else 0.5 for i in range(n)]
    ties = sum(1 for e in log if e["winner"] == 0)
    return NoveltyRanking(order, rank, score, count, ties, judge.calls - calls0, log)


def rank_groups(questions: Sequence[str], answers: Sequence[str], groups: Sequence, judge: NoveltyJudge,
                seed: int = 0) -> "pd.DataFrame":
    """Rank the answers within each group (e.g. one AUT object) and return, aligned with the input,
    ``novelty_rank`` (1 = most novel in its group), ``novelty_score`` (in [0, 1] within the group) and
    per-row ``group_comparisons`` / ``group_ties`` / ``group_size`` of its group."""
    out = pd.DataFrame({"novelty_rank": 0, "novelty_score": float("nan"), "group_comparisons": 0, "group_ties": 0,
                        "group_size": 0}, index=range(len(answers)))
    for g in dict.fromkeys(groups):
        idx = [i for i, x in enumerate(groups) if x == g]
        r = rank_by_novelty([(questions[i], answers[i]) for i in idx], judge, seed=seed)
        for k, i in enumerate(idx):
            out.loc[i, ["novelty_rank", "novelty_score", "group_comparisons", "group_ties", "group_size"]] = \
                [r.rank[k], r.score[k], r.comparisons, r.ties, len(idx)]
    return out
