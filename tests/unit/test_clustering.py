import random

import pytest

from creval.measures.clustering import CountingNLI, cluster, cluster_naive, equivalent, normalise
from creval.measures.nli.backends import Label


class FakeNLI:
    """Meaning = the set of lower-case words. 'no' in exactly one text with otherwise equal words is a
    contradiction; the premise entails the hypothesis when it contains all the hypothesis's words."""
    name = "fake"

    def __init__(self):
        self.calls, self.seen = 0, []

    def classify(self, pairs):
        self.calls += 1
        out = []
        for p, h in pairs:
            self.seen.append((p, h))
            wp, wh = set(p.lower().split()), set(h.lower().split())
            if ("no" in wp) != ("no" in wh) and wp - {"no"} == wh - {"no"}:
                out.append(Label.CONTRADICTION)
            elif wh <= wp:
                out.append(Label.ENTAILMENT)
            else:
                out.append(Label.NEUTRAL)
        return out


def test_equivalence_rules():
    E, N, C = Label.ENTAILMENT, Label.NEUTRAL, Label.CONTRADICTION
    assert equivalent(E, E, True) and not equivalent(E, N, True)
    assert equivalent(E, N, False) and not equivalent(N, N, False) and not equivalent(E, C, False)


def test_strict_vs_nonstrict():
    texts = ["a b", "b a", "a", "a b c", "x", "no a b"]
    assert cluster(texts, FakeNLI(), strict=True) == [0, 0, 1, 2, 3, 4]
    # non-strict: one-way entailment with neutral the other way is enough; contradiction never is
    assert cluster(texts, FakeNLI(), strict=False) == [0, 0, 0, 0, 1, 2]


def test_first_vs_all():
    texts = ["a", "a b", "a c"]
    # first: "a c" is compared with "a" only -> joins; all: it is neutral both ways with "a b" -> new class
    assert cluster(texts, FakeNLI(), strict=False, compare="first") == [0, 0, 0]
    assert cluster(texts, FakeNLI(), strict=False, compare="all") == [0, 0, 1]
    assert cluster_naive(texts, FakeNLI(), strict=False, compare="all") == [0, 0, 1]


def test_duplicates_merged_before_any_call():
    nli = FakeNLI()
    texts = ["a b", " a  b ", "x", "a b", "x"]
    assert cluster(texts, nli) == [0, 0, 1, 0, 1]
    # only the two distinct texts are compared, both directions, in one call
    assert nli.calls == 1
    assert sorted(nli.seen) == [("a b", "x"), ("x", "a b")]
    assert all(p != h for p, h in nli.seen)
    assert normalise("  a \n b\t") == "a b"


def test_all_identical_makes_no_call():
    nli = FakeNLI()
    assert cluster(["same step"] * 10, nli) == [0] * 10
    assert nli.calls == 0


def test_ids_in_first_appearance_order():
    ids = cluster(["x", "y", "x", "z", "y"], FakeNLI())
    assert ids == [0, 1, 0, 2, 1]
    assert cluster([], FakeNLI()) == []


def _random_texts(rng, n):
    vocab = ["a", "b", "c", "d", "no"]
    return [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(n)]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("compare", ["first", "all"])
@pytest.mark.parametrize("prefetch", ["rounds", "all"])
def test_identical_to_naive(strict, compare, prefetch):
    rng = random.Random(1)
    for _ in range(60):
        texts = _random_texts(rng, rng.randint(1, 12))
        fast, slow = CountingNLI(FakeNLI()), CountingNLI(FakeNLI())
        got = cluster(texts, fast, strict=strict, compare=compare, prefetch=prefetch)
        assert got == cluster_naive(texts, slow, strict=strict, compare=compare), texts
        assert slow.calls == slow.pairs  # the naive way: one pair per call
        if prefetch == "rounds" and compare == "first":
            # no speculation in "first" mode: never more pairs, at most one batch per class
            assert fast.pairs <= slow.pairs
            assert fast.calls <= max(got) + 1
        if prefetch == "all":
            assert fast.calls <= 1


def test_first_mode_asks_exactly_the_reference_pairs():
    # distinct texts: batching changes how the pairs are sent, not which are evaluated
    texts = ["a", "b", "c", "a b", "b a c", "d", "c b", "no a", "d a"]
    fast, slow = CountingNLI(FakeNLI()), CountingNLI(FakeNLI())
    ids = cluster(texts, fast)
    assert ids == cluster_naive(texts, slow)
    assert fast.pairs == slow.pairs
    assert fast.calls <= max(ids) + 1  # at most one batch per class
    assert slow.calls == slow.pairs > fast.calls


def test_bad_arguments():
    with pytest.raises(ValueError):
        cluster(["a"], FakeNLI(), compare="some")
    with pytest.raises(ValueError):
        cluster(["a"], FakeNLI(), prefetch="never")
