"""Creativity index: equal to a brute-force set-of-tuples computation on random texts, for every L and
both aggregations, with and without leave-group-out; the DJ-Search loop gives the same values."""
import random

import numpy as np
import pytest

from creval.measures import creativity_index as C
from creval.measures.ngram_index import NgramIndex, word_tokenize


def brute_uniq(tokens, docs, L, exclude=None):
    ref = set()
    for g, toks in docs:
        if exclude is not None and g == exclude:
            continue
        ref.update(tuple(toks[i:i + L]) for i in range(len(toks) - L + 1))
    n = len(tokens)
    if n < L:
        return 1.0
    cov = set()
    for i in range(n - L + 1):
        if tuple(tokens[i:i + L]) in ref:
            cov.update(range(i, i + L))
    return 1 - len(cov) / n


def random_corpus(rng, n_docs=25, vocab=4, groups=6):
    words = [f"w{i}" for i in range(vocab)]
    return [(f"g{rng.randrange(groups)}", [rng.choice(words) for _ in range(rng.randrange(0, 30))])
            for _ in range(n_docs)]


@pytest.mark.parametrize("seed", range(6))
def test_equal_to_brute_force_every_L_both_aggregations(seed):
    rng = random.Random(seed)
    docs = random_corpus(rng)
    idx = NgramIndex.build([(g, " ".join(t)) for g, t in docs], lengths=range(1, 9))
    texts = [[rng.choice(["w0", "w1", "w2", "w3"]) for _ in range(rng.randrange(0, 25))] for _ in range(15)]
    groups = [rng.choice([None, "g0", "g1", "g2", "g9"]) for _ in texts]
    for lo in range(1, 9):
        for hi in range(lo, 9):
            Ls = C.l_range(lo, hi)
            fast = C.creativity_index_many([" ".join(t) for t in texts], idx, Ls, "mean", groups)
            for t, g, rec in zip(texts, groups, fast):
                want = {L: brute_uniq(t, docs, L, g) for L in Ls}
                assert rec.l_uniq == pytest.approx(want)
                assert rec.ci == pytest.approx(np.mean(list(want.values())))
                one = C.creativity_index(t, idx, Ls, "sum", g)
                assert one.ci == pytest.approx(sum(want.values()))
                assert one.agg == "sum" and rec.agg == "mean"


@pytest.mark.parametrize("seed", range(4))
def test_dj_search_loop_gives_the_same_values(seed):
    rng = random.Random(100 + seed)
    docs = random_corpus(rng, vocab=3)
    idx = NgramIndex.build([(g, " ".join(t)) for g, t in docs], lengths=range(1, 10))
    for _ in range(20):
        t = [rng.choice(["w0", "w1", "w2"]) for _ in range(rng.randrange(0, 30))]
        g = rng.choice([None, "g1"])
        for lo, hi in [(2, 4), (3, 3), (5, 7), (2, 9)]:
            spans = C.dj_search_spans(t, idx, lo, hi, g)
            for agg in C.AGGREGATIONS:
                assert C.ci_from_spans(spans, len(t), C.l_range(lo, hi), agg) == pytest.approx(
                    C.creativity_index(t, idx, C.l_range(lo, hi), agg, g).ci)


def test_hand_computed_example_and_leave_group_out():
    idx = NgramIndex.build([("p1", "tie the rope to the chair"), ("p2", "use the rope to climb")], lengths=[2, 3])
    toks = word_tokenize("grab the rope to the door")          # 6 tokens
    # L=3: "the rope to" (both groups) -> tokens 1..3; "rope to the" (p1 only) -> tokens 2..4
    assert C.l_uniqueness(toks, idx, 3) == pytest.approx(1 - 4 / 6)
    assert C.l_uniqueness(toks, idx, 3, exclude_group="p1") == pytest.approx(1 - 3 / 6)   # only p2's window
    assert C.l_uniqueness(toks, idx, 3, exclude_group="p2") == pytest.approx(1 - 4 / 6)
    assert C.reused_spans(toks, idx, 3) == [(1, 5)]
    assert C.highlight("grab the rope to the door", idx, 3) == "grab [the rope to the] door"
    assert C.l_uniqueness(["a", "b"], idx, 3) == 1.0                   # shorter than L
    with pytest.raises(ValueError):
        C.aggregate({3: 0.5}, "median")


def test_ngrams_do_not_cross_documents_and_index_round_trips(tmp_path):
    idx = NgramIndex.build([("a", "one two"), ("b", "three four")], lengths=[2])
    assert not idx.contains(["two", "three"])
    assert idx.contains(["one", "two"]) and not idx.contains(["one", "two"], exclude_group="a")
    f = idx.save(tmp_path / "i.npz")
    back = NgramIndex.load(f)
    assert back.corpus_hash == idx.corpus_hash and back.contains(["three", "four"])
    assert NgramIndex.build([("a", "one two"), ("b", "three five")], lengths=[2]).corpus_hash != idx.corpus_hash


def test_tokenizer():
    assert word_tokenize("Don\u2019t tie it<br>\u2014 use a well-known knot, Step1: 3.5 m...") == \
        ["Don't", "tie", "it", "-", "use", "a", "well-known", "knot", ",", "Step1", ":", "3.5", "m", "..."]
