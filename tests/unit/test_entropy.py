import math

import numpy as np
import pytest

from creval.measures.entropy import aggregate, class_log_probs, discrete_entropy, naive_entropy, semantic_entropy


def test_one_cluster_is_zero():
    assert semantic_entropy([-0.3, -1.2, -2.0, -0.1], [0, 0, 0, 0]) == pytest.approx(0.0, abs=1e-12)


def test_distinct_equal_likelihood_gives_ln_n():
    for n in (2, 5, 10):
        assert semantic_entropy([-0.7] * n, list(range(n))) == pytest.approx(math.log(n))
        assert naive_entropy([-0.7] * n) == pytest.approx(math.log(n))


def test_worked_three_cluster_example():
    # Five samples with mean token log-probs l = ln(p_i) for p = (0.4, 0.2, 0.2, 0.1, 0.1)
    # (already summing to 1, so the normalisation is a no-op), clusters [0, 0, 1, 2, 2]:
    #   P(C0) = 0.4 + 0.2 = 0.6, P(C1) = 0.2, P(C2) = 0.1 + 0.1 = 0.2
    #   H = -(0.6 ln 0.6 + 2 * 0.2 ln 0.2) = 0.306495 + 0.643775 = 0.950271
    lp = np.log([0.4, 0.2, 0.2, 0.1, 0.1])
    assert semantic_entropy(lp, [0, 0, 1, 2, 2]) == pytest.approx(0.950270539, abs=1e-8)
    # Shifting every log-likelihood by a constant (un-normalised mass) changes nothing.
    assert semantic_entropy(lp - 3.0, [0, 0, 1, 2, 2]) == pytest.approx(0.950270539, abs=1e-8)
    # Naive entropy of the same samples: -(0.4 ln 0.4 + 2*0.2 ln 0.2 + 2*0.1 ln 0.1) = 1.470808
    assert naive_entropy(lp) == pytest.approx(1.4708084, abs=1e-6)
    # Counts only: (2/5, 1/5, 2/5) -> -(2*0.4 ln 0.4 + 0.2 ln 0.2) = 1.054920
    assert discrete_entropy([0, 0, 1, 2, 2]) == pytest.approx(1.0549202, abs=1e-6)


def test_class_log_probs_normalised_and_labels_arbitrary():
    lp = [-0.5, -1.0, -2.0]
    got = class_log_probs(lp, [7, 3, 7])
    assert set(got) == {7, 3}
    assert sum(math.exp(v) for v in got.values()) == pytest.approx(1.0)
    expected7 = math.log((math.exp(-0.5) + math.exp(-2.0)) / (math.exp(-0.5) + math.exp(-1.0) + math.exp(-2.0)))
    assert got[7] == pytest.approx(expected7)


def test_duplicates_count_each_time_and_bounds():
    # the same text drawn twice with equal likelihood, as its own cluster: mass 2/3 vs 1/3
    h = semantic_entropy([-1.0, -1.0, -1.0], [0, 0, 1])
    assert h == pytest.approx(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)))
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        lp = rng.normal(-1.5, 1.0, n)
        ids = rng.integers(0, 4, n)
        h = semantic_entropy(lp, ids)
        assert -1e-12 <= h <= math.log(n) + 1e-9
        assert semantic_entropy(lp, ids) <= naive_entropy(lp) + 1e-9  # merging never adds entropy


def test_errors():
    with pytest.raises(ValueError):
        semantic_entropy([], [])
    with pytest.raises(ValueError):
        semantic_entropy([-1.0, -2.0], [0])
    with pytest.raises(ValueError):
        aggregate([1.0], how="median")


def test_aggregate():
    assert aggregate([0.5, 1.5, 1.0]) == pytest.approx(1.0)
    assert aggregate([0.5, 1.5, 1.0], "min") == 0.5
    assert aggregate([0.5, 1.5, float("nan")], "max") == 1.5
    assert math.isnan(aggregate([]))
