"""Greedy bidirectional-entailment clustering (Farquhar et al. 2024; paper section 3.1, app. C.2.3).

The reference algorithm walks the samples in order. Each sample is compared with the existing classes
in the order they were created and joins the first class it is *equivalent* to; if none, it opens a
new class. Two texts are equivalent when

- ``strict=True``: each entails the other (entailment in both directions);
- ``strict=False``: neither direction is a contradiction and they are not neutral both ways.

``compare="first"`` tests a sample against each class's first member; ``compare="all"`` requires it to
be equivalent to every member the class has at that moment.

:func:`cluster` returns the same ids as that reference (:func:`cluster_naive`, one NLI call per
directed pair, as in the papers' code) but is much cheaper:

1. Texts identical after whitespace normalisation are merged before any NLI call: a text is taken to
   be equivalent to itself. (If an NLI model ever failed to say that a sentence entails itself, the
   naive run could differ; no sane model does.)
2. Every pair decision is memoised; both directions of a pair are asked together.
3. Batching. The greedy pass is sequential, so which pairs it needs depends on earlier answers. We
   replay the pass with the answers known so far; when it stops at an unknown pair we send, in ONE
   ``nli.classify`` call, every unknown pair that any still-unplaced text needs for the next class on
   its way (texts already settled on a class ask for nothing). With ``compare="first"`` this requests
   exactly the pairs the sequential reference evaluates - no speculation at all - in at most one batch
   per class. With ``compare="all"`` a text asks about all current members of its next class at once
   (the reference stops at the first member that fails, so a few asked pairs may go unused) and a
   class can grow after a text has asked about it, so a few more rounds can be needed.
   ``prefetch="all"`` instead asks every pair of distinct texts in a single batch: one call, but up to
   ``m(m-1)`` directed pairs for ``m`` distinct texts. That only pays off where the per-call overhead
   dominates and extra pairs are nearly free; the default ``"rounds"`` never evaluates a pair the
   greedy pass would not.

Results are identical as long as the NLI model is deterministic per pair (a cross-encoder may, in
principle, flip a near-tie between batch sizes because of padding; through the cache each pair is
answered once).
"""
from __future__ import annotations

from typing import Sequence

from creval.measures.nli.backends import NLI, Label

__all__ = ["cluster", "cluster_naive", "equivalent", "normalise", "CountingNLI"]


def normalise(text: str) -> str:
    """Collapse runs of whitespace and strip the ends (what counts as an exact duplicate)."""
    return " ".join(str(text).split())


def equivalent(ab: Label, ba: Label, strict: bool = True) -> bool:
    """Whether two texts are the same meaning given the labels of both directions."""
    if strict:
        return ab == Label.ENTAILMENT and ba == Label.ENTAILMENT
    return Label.CONTRADICTION not in (ab, ba) and not (ab == Label.NEUTRAL and ba == Label.NEUTRAL)


def _check_args(compare: str, prefetch: str = "rounds") -> None:
    if compare not in ("first", "all"):
        raise ValueError(f"compare must be 'first' or 'all', not {compare!r}")
    if prefetch not in ("rounds", "all"):
        raise ValueError(f"prefetch must be 'rounds' or 'all', not {prefetch!r}")


class CountingNLI:
    """Wraps an NLI backend and counts ``classify`` calls and pairs (for tests and benchmarks)."""

    def __init__(self, inner: NLI):
        self.inner, self.name = inner, inner.name
        self.calls = 0
        self.pairs = 0

    def classify(self, pairs):
        pairs = list(pairs)
        self.calls += 1
        self.pairs += len(pairs)
        return self.inner.classify(pairs)


def cluster_naive(texts: Sequence[str], nli: NLI, strict: bool = True, compare: str = "first") -> list[int]:
    """The reference greedy clustering, done the papers' way: each directed pair is its own
    ``nli.classify`` call, both directions every time, no merging of duplicates and no memo."""
    _check_args(compare)
    classes: list[list[int]] = []
    ids: list[int] = []

    def same(a: str, b: str) -> bool:
        ab = nli.classify([(a, b)])[0]
        ba = nli.classify([(b, a)])[0]
        return equivalent(ab, ba, strict)

    for i, t in enumerate(texts):
        for k, members in enumerate(classes):
            probe = members[:1] if compare == "first" else members
            if all(same(texts[m], t) for m in probe):
                members.append(i)
                ids.append(k)
                break
        else:
            classes.append([i])
            ids.append(len(classes) - 1)
    return ids


def merge_duplicates(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    """(the distinct texts, each the original of its first occurrence; for each text, the index of its distinct
    text), where texts equal after :func:`normalise` are one."""
    first_of: dict[str, int] = {}
    distinct: list[str] = []
    slot: list[int] = []
    for t in texts:
        k = normalise(t)
        if k not in first_of:
            first_of[k] = len(distinct)
            distinct.append(str(t))
        slot.append(first_of[k])
    return distinct, slot


def cluster(texts: Sequence[str], nli: NLI, strict: bool = True, compare: str = "first",
            *, prefetch: str = "rounds") -> list[int]:
    """Cluster ``texts`` by bidirectional entailment; ids are ``0..k-1`` in order of first appearance.

    Same result as :func:`cluster_naive` with far fewer NLI pairs and calls (see the module docstring
    for how the batches are formed and for ``prefetch``).
    """
    _check_args(compare, prefetch)
    if not texts:
        return []
    # 1. merge exact duplicates
    distinct, slot = merge_duplicates(texts)
    m = len(distinct)

    # 2. memo of directed labels between distinct texts
    labels: dict[tuple[int, int], Label] = {}

    def known(a: int, b: int) -> bool | None:
        if (a, b) in labels and (b, a) in labels:
            return equivalent(labels[(a, b)], labels[(b, a)], strict)
        return None

    def ask(pairs: set[tuple[int, int]]) -> None:
        directed = list(dict.fromkeys(d for a, b in sorted(pairs) for d in ((a, b), (b, a)) if d not in labels))
        if directed:
            out = nli.classify([(distinct[a], distinct[b]) for a, b in directed])
            labels.update(zip(directed, out))

    if prefetch == "all":
        ask({(a, b) for a in range(m) for b in range(a + 1, m)})

    classes: list[list[int]] = []
    assign: list[int] = [-1] * m

    def walk(j: int) -> tuple[int | None, set[tuple[int, int]]]:
        """Replay j's greedy decision: (class index or len(classes) for a new class, None if blocked;
        the unknown pairs of the first class whose verdict is not yet known)."""
        for c, members in enumerate(classes):
            probe = members[:1] if compare == "first" else members
            missing: set[tuple[int, int]] = set()
            rejected = False
            for mem in probe:
                e = known(mem, j)
                if e is False:
                    rejected = True
                    break
                if e is None:
                    missing.add((mem, j))
            if rejected:
                continue
            if missing:
                return None, missing
            return c, set()
        return len(classes), set()

    pos = 0
    while pos < m:
        # replay the sequential pass as far as the known answers allow
        while pos < m:
            c, _ = walk(pos)
            if c is None:
                break
            if c == len(classes):
                classes.append([pos])
            else:
                classes[c].append(pos)
            assign[pos] = c
            pos += 1
        if pos == m:
            break
        # blocked: ask, in one batch, what every unplaced text needs for its next undecided class
        need: set[tuple[int, int]] = set()
        for j in range(pos, m):
            c, missing = walk(j)
            need |= missing
        ask(need)
    return [assign[s] for s in slot]
