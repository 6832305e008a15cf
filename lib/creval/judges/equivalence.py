"""An equivalence judge that partitions k answers into distinct ones (NoveltyBench's protocol, Zhang et al. 2025).

The answers are taken one by one in an order shuffled with ``order_seed`` (the judge's input order, so that the
partition does not inherit the order the answers were made in); each answer is compared with the first member
(the representative) of every class found so far, in the order the classes were made, and joins the first class
whose representative the judge calls the same; otherwise it starts a new class. The number of classes is the
number of distinct answers among the k (NoveltyBench's ``distinct_k`` with an LLM judge instead of a trained
classifier). Identical texts (up to whitespace and case) join without a call.

One comparison reads the log-probabilities of the replies ``"Yes"`` and ``"No"`` (``choice_logprobs_many``), so
nothing free-form is parsed; a comparison with no finite log-probability is ``unparsed``, counted and treated as
"different" (a new class is the conservative choice: it can only raise the count), and the number of unparsed
comparisons is reported beside the partition. Prompts: ``prompts/equivalence_system.txt`` and
``prompts/equivalence_user.txt`` (written for this project). The comparisons of one partition depend on the
answers before them, so they go one round at a time (one call per round; the calls of different partitions
can be batched by the caller).
"""
from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from creval.judges.base import clip_words, render, template

TEMPLATES = ("equivalence_system", "equivalence_user")


def prompt_hash() -> str:
    return hashlib.sha256("\n\x00\n".join(template(t) for t in TEMPLATES).encode()).hexdigest()[:16]


def messages(task: str, first: str, second: str) -> list[dict]:
    return [{"role": "system", "content": template("equivalence_system")},
            {"role": "user", "content": render("equivalence_user", task=task, first=first, second=second)}]


def same(lp: dict) -> bool | None:
    """Yes above No: True; No above Yes: False; missing or not finite: None (unparsed)."""
    y, n = lp.get("Yes"), lp.get("No")
    if y is None or n is None or not (math.isfinite(y) and math.isfinite(n)):
        return None
    return y > n


def _key(text: str) -> str:
    return " ".join(str(text).lower().split())


@dataclass
class Partition:
    """The classes of k answers: ``labels[i]`` is answer i's class (in the answers' original order)."""
    labels: list[int]
    order: list[int]               # the order the answers were judged in (shuffled by the seed)
    calls: int = 0
    unparsed: int = 0
    log: list = field(default_factory=list)   # (answer, representative, same) per comparison

    @property
    def distinct(self) -> int:
        return len(set(self.labels))


class EquivalenceJudge:
    """Partitions answers with ``model`` (anything with ``choice_logprobs_many``); answers clipped to ``words``."""

    def __init__(self, model, words: int = 80, order_seed: int = 0):
        self.model, self.words, self.order_seed = model, int(words), int(order_seed)

    def partition(self, task: str, answers: Sequence[str], salt: str = "") -> Partition:
        """NoveltyBench's greedy partition of ``answers`` (see the module doc); ``salt`` varies the shuffle per
        prompt while keeping it reproducible."""
        order = list(range(len(answers)))
        random.Random(f"{self.order_seed}|{salt}").shuffle(order)
        reps: list[int] = []                      # answer index of each class's representative
        labels = [-1] * len(answers)
        part = Partition(labels, order)
        for i in order:
            text = clip_words(answers[i], self.words)
            for c, r in enumerate(reps):
                if _key(answers[i]) == _key(answers[r]):
                    verdict = True
                else:
                    lp = self.model.choice_logprobs_many([(messages(task, clip_words(answers[r], self.words), text),
                                                           ["Yes", "No"])])[0].logprobs
                    part.calls += 1
                    verdict = same(lp)
                    part.unparsed += verdict is None
                part.log.append((i, r, verdict))
                if verdict:
                    labels[i] = c
                    break
            if labels[i] < 0:
                labels[i] = len(reps)
                reps.append(i)
        return part


def pair_agreement(a: Sequence[int], b: Sequence[int]) -> float:
    """Rand index of two partitions of the same answers: the share of answer pairs that both put in one class or
    both split (1: the same partition). NaN for fewer than two answers."""
    n = len(a)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return float("nan")
    return sum((a[i] == a[j]) == (b[i] == b[j]) for i, j in pairs) / len(pairs)
