"""NeoGauge metrics against hand-computed values."""
import math

import pytest

from creval.measures import neogauge as ng


def test_follow_and_novelty():
    assert ng.follows(["for loop", "if statement"], {"while loop"})
    assert not ng.follows(["for loop", "if statement"], ["if statement"])
    assert ng.follows([], ["for loop"])
    # duplicates count in the denominator (the paper's code divides by the list length)
    assert ng.novelty(["for loop", "heap", "heap"], {"for loop"}) == pytest.approx(1 / 3)
    assert ng.novelty(["heap", "tuple"], {"for loop"}) == 1.0
    assert ng.novelty([], {"for loop"}) == 0.0


def test_state_aggregates():
    correct = [1, 1, 0, 1]
    follow = [1, 0, 1, 1]
    nov = [0.5, 1.0, 1.0, 0.0]
    assert ng.pass_at_1(correct) == 0.75
    assert ng.constraint_following(follow) == 0.75
    assert ng.convergent(follow, correct) == 0.5          # problems 1 and 4
    assert ng.divergent(nov) == 0.625
    assert ng.neogauge(follow, correct, nov) == pytest.approx(0.5 / 4)   # only problem 1 contributes 0.5
    assert ng.cumulative([0.1, 0.2, float("nan"), 0.3]) == pytest.approx([0.1, 0.3, 0.3, 0.6])


def test_state_metrics_mask_and_ci():
    m = ng.state_metrics([1, 0, 1, 1], [1, 1, 0, 1], [1.0, 0.0, 0.5, 0.5], creative_mask=[1, 1, 1, 0],
                         n_boot=200, seed=1)
    assert m["pass@1"] == 0.75 and m["constraint following"] == 0.75
    assert m["convergent"] == pytest.approx(1 / 3)       # masked: problems 1..3 -> only problem 1
    assert m["divergent"] == pytest.approx(0.5)
    assert m["NeoGauge"] == pytest.approx(1 / 3)
    # 3 creative problems (4 in all) are fewer than stats.MIN_N = 5: no interval, every one of them
    assert all(math.isnan(x) for k in m if k.endswith(" CI") for x in m[k])


def test_state_metrics_intervals():
    # every problem alike: each resample has the same value, so the interval is that value exactly
    same = ng.state_metrics([1] * 12, [1] * 12, [0.5] * 12, n_boot=400, seed=1)
    assert same["divergent CI"] == (0.5, 0.5) and same["NeoGauge CI"] == (0.5, 0.5)
    assert same["pass@1 CI"] == (1.0, 1.0)
    correct = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0]
    follow = [1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1]
    nov = [1, 0, 0.5, 0.5, 1, 0, 0.5, 1, 0, 0.5, 1, 0.5]
    m = ng.state_metrics(correct, follow, nov, n_boot=400, seed=1)
    assert m["pass@1"] == pytest.approx(8 / 12) and m["divergent"] == pytest.approx(6.5 / 12)
    for key in ("pass@1", "constraint following", "convergent", "divergent", "NeoGauge"):
        lo, hi = m[f"{key} CI"]
        assert 0.0 <= lo < m[key] < hi <= 1.0, key
    # percentiles of 400 seeded resamples of 12 problems: multiples of 1/12 (1/24 for the novelty mean)
    assert m["pass@1 CI"] == pytest.approx((5 / 12, 11 / 12))
    assert m["divergent CI"] == pytest.approx((4 / 12, 9 / 12))
    assert m == ng.state_metrics(correct, follow, nov, n_boot=400, seed=1)     # seeded: the same again


def test_human_convergent_eq5():
    lists = [[["for loop"], ["while loop"], ["for loop", "if statement"]], [["sorting"]]]
    banned = [{"for loop"}, {"heap"}]
    # problem 1: only the while-loop solution avoids the ban; problem 2: its one solution does -> 2/4
    assert ng.human_convergent(lists, banned) == 0.5
    assert math.isnan(ng.human_convergent([], []))


def test_human_divergent_eq6():
    lists = [["a", "b"], ["a"], ["c"]]
    # j=0: {a,b} - {a,c} = {b} -> 1/2; j=1: {a} - {a,b,c} = {} -> 0; j=2: {c} - {a,b} -> 1
    assert ng.human_loo_novelty(lists) == pytest.approx([0.5, 0.0, 1.0])
    assert ng.human_divergent([lists, [["x"]]]) == pytest.approx((0.5 + 0 + 1 + 1) / 4)
