"""The one verdict rule (issue 33): each degenerate case gives *not testable here* with its reason; a claim is
read off the value and its interval; "excludes chance" needs interval and test together."""
import math

import pytest

from creval.measures import stats as S
from creval.measures.verdicts import TESTABLE


def test_no_merge_makes_semantic_entropy_untestable():
    why = S.no_merge([10] * 14, 10)
    assert why == "no two samples merged on any of the 14 steps (10 classes of 10): the check is empty"
    v = S.decide(True, 140, degenerate=why)
    assert (v.word, v.reason) == (TESTABLE, why) and not v.testable
    assert S.no_merge([10, 9, 10], 10) is None             # one step merged two samples: the check says something
    assert S.no_merge([3, 4], [3, 5]) is None
    assert "as many classes as samples" in S.no_merge([3, 5], [3, 5])


def test_all_ties_and_a_constant_score_are_untestable():
    assert S.all_tied([0, 0, 0]) == "all 3 comparisons tied: the order is the tie-break's"
    assert S.all_tied([0, 1, 0]) is None and S.all_tied([]) is None
    assert S.all_tied(["tie", "tie"], tie="tie").startswith("all 2 comparisons tied")
    assert S.constant([3, 3.0, float("nan"), 3]) == "a constant score (3 on all 3 items)"
    assert S.constant([3, 4]) is None and S.constant([3]) is None
    v = S.decide(True, 50, degenerate=S.first_reason(None, S.all_tied([0] * 3), S.constant([1, 1])))
    assert v.word == TESTABLE and v.reason.startswith("all 3 comparisons tied")


def test_a_judge_that_copies_the_order_is_untestable():
    why = S.copies_order(means=[0.5] * 60)
    assert why == ("the judge copies the order it was shown (every one of 60 items averages exactly 0.5 under "
                   "order swapping)")
    assert S.copies_order(means=[0.5] * 59 + [0.75]) is None
    shown = [["a", "b", "c"], ["d", "e", "f"]]
    assert "all 2 rankings equal the presentation order" in S.copies_order(ranks=shown, shown=shown)
    assert S.copies_order(ranks=[["a", "b", "c"], ["e", "d", "f"]], shown=shown) is None
    v = S.decide(False, 60, degenerate=why)
    assert str(v) == f"{TESTABLE} ({why})"


def test_too_few_items_and_an_uncomputable_number():
    v = S.decide(False, 8)
    assert (v.word, v.reason) == (TESTABLE, "8 item(s), fewer than the 30 a verdict needs")
    assert S.decide(True, 6).word == S.decide(False, 7).word == TESTABLE      # the same word either way
    v = S.decide(None, 100)
    assert v.word == TESTABLE and "could not be computed" in v.reason
    assert S.decide(None, 100, unknown="no interval: 37% of resamples undefined").reason.startswith("no interval")
    assert S.decide(True, 30) == "reproduced" and S.decide(False, 30) == "not reproduced"
    assert S.decide(True, 30, sample=True).reason == "bundled sample data"
    assert S.too_few(30) is None and S.too_few(29, 30)


def test_agrees_reads_value_and_interval():
    # chapter 04's novelty claim: rho 0.10 whose interval holds 0, the paper's range 0.3-0.47
    assert S.agrees(0.10, -0.05, 0.25, (0.3, 0.47)) is False
    assert S.agrees(0.35, 0.10, 0.50, (0.3, 0.47)) is True
    assert S.agrees(0.35, -0.10, 0.60, (0.3, 0.47)) is False       # holds the paper and chance: tells nothing
    assert S.agrees(0.35, -0.10, 0.60, (0.3, 0.47), null=None) is True
    assert S.agrees(0.20, 0.05, 0.25, (0.3, 0.47)) is False         # clear of chance but short of the paper
    # a direction: the whole interval on the paper's side of chance
    assert S.agrees(0.10, -0.05, 0.25, "+") is False
    assert S.agrees(0.10, 0.02, 0.25, "+") is True
    assert S.agrees(0.40, 0.30, 0.45, "-", null=0.5) is True       # an AUROC below chance, as claimed
    assert S.agrees(0.40, 0.30, 0.52, -1, null=0.5) is False
    assert S.agrees(0.4, float("nan"), float("nan"), "+") is None  # no interval: not testable
    with pytest.raises(ValueError):
        S.agrees(0.9, 0.1, 0.2, "+")


def test_excludes_chance_needs_interval_and_test():
    assert not S.excludes_chance(0.0, 0.111, 0.055, null=0.0)       # the case: a bound at chance, p > .05
    assert not S.excludes_chance(0.01, 0.111, 0.055, null=0.0)      # interval clear, test not
    assert not S.excludes_chance(-0.01, 0.111, 0.03, null=0.0)      # test clear, interval not
    assert S.excludes_chance(0.01, 0.111, 0.03, null=0.0)
    assert S.excludes_chance(0.55, 0.70, None, null=0.5)            # no test run: the interval decides
    assert not S.excludes_chance(0.55, 0.70, float("nan"), null=0.5)
    assert not S.excludes_chance(float("nan"), float("nan"), 0.001, null=0.0)


def test_wilson_by_hand():
    z = 1.959963984540054
    lo, hi = S.wilson(12, 12)
    assert hi == 1.0 and lo == pytest.approx(1 / (1 + z * z / 12))     # p = 1: the centre minus half is 1/(1+z^2/n)
    assert lo == pytest.approx(0.7575, abs=1e-4)
    lo, hi = S.wilson(0, 12)
    assert lo == 0.0 and hi == pytest.approx((z * z / 12) / (1 + z * z / 12))
    lo, hi = S.wilson(5, 10)                                          # symmetric about 1/2
    assert lo + hi == pytest.approx(1.0)
    half = z * math.sqrt(0.25 / 10 + z * z / 400) / (1 + z * z / 10)
    assert hi - 0.5 == pytest.approx(half)
    assert all(math.isnan(x) for x in S.wilson(0, 0))
    with pytest.raises(ValueError):
        S.wilson(13, 12)
