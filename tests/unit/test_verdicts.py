"""The one verdict rule (issue 33): each degenerate case gives *not testable here* with its reason; a claim is
read off the value and its interval; "excludes chance" needs interval and test together."""
import math

import pytest

from creval.measures.stats import verdicts as V
from creval.measures.stats.verdicts import TESTABLE


def test_no_merge_makes_semantic_entropy_untestable():
    why = V.no_merge([10] * 14, 10)
    assert why == "no two samples merged on any of the 14 steps (10 classes of 10): the check is empty"
    v = V.claim_verdict(0.5, 0.4, 0.6, 140, claimed="+", degenerate=why)
    assert (v.word, v.reason) == (TESTABLE, why) and not v.testable
    assert V.no_merge([10, 9, 10], 10) is None             # one step merged two samples: the check says something
    assert V.no_merge([3, 4], [3, 5]) is None
    assert "as many classes as samples" in V.no_merge([3, 5], [3, 5])


def test_all_ties_and_a_constant_score_are_untestable():
    assert V.all_tied([0, 0, 0]) == "all 3 comparisons tied: the order is the tie-break's"
    assert V.all_tied([0, 1, 0]) is None and V.all_tied([]) is None
    assert V.all_tied(["tie", "tie"], tie="tie").startswith("all 2 comparisons tied")
    assert V.constant([3, 3.0, float("nan"), 3]) == "a constant score (3 on all 3 items)"
    assert V.constant([3, 4]) is None and V.constant([3]) is None
    why = V.first_reason(None, V.all_tied([0] * 3), V.constant([1, 1]))
    v = V.claim_verdict(0.5, 0.4, 0.6, 50, claimed="+", degenerate=why)
    assert v.word == TESTABLE and v.reason.startswith("all 3 comparisons tied")


def test_a_judge_that_copies_the_order_is_untestable():
    why = V.copies_order(means=[0.5] * 60)
    assert why == ("the judge copies the order it was shown (every one of 60 items averages exactly 0.5 under "
                   "order swapping)")
    # by share: one imputed item does not hide an order-copying judge; the share is shown
    assert V.copies_order(means=[0.5] * 59 + [0.75]) == ("the judge copies the order it was shown (59 of 60 (98%) "
                                                         "items average exactly 0.5 under order swapping)")
    assert "53 of 60 (88%)" in V.copies_order(means=[0.5] * 53 + [0.75] * 7)   # 88%: copying, not chance
    assert V.copies_order(means=[0.5] * 40 + [0.75] * 20) is None          # 67%: below the 75% share
    shown = [["a", "b", "c"], ["d", "e", "f"]]
    assert "all 2 rankings equal the presentation order" in V.copies_order(ranks=shown, shown=shown)
    assert V.copies_order(ranks=[["a", "b", "c"], ["e", "d", "f"]], shown=shown) is None
    v = V.claim_verdict(-0.5, -0.6, -0.4, 60, claimed="+", degenerate=why)
    assert str(v) == f"{TESTABLE} ({why})"


def test_too_few_units_and_an_undefined_interval():
    nan = float("nan")
    v = V.claim_verdict(-0.5, -0.6, -0.4, 8, claimed="+")
    assert (v.word, v.reason) == (TESTABLE, V.too_few(8))
    assert V.claim_verdict(0.5, 0.4, 0.6, 6, claimed="+").word == TESTABLE      # the same word either way
    assert V.claim_verdict(nan, nan, nan, 100, claimed="+").word == TESTABLE
    assert V.claim_verdict(0.5, 0.4, 0.6, 30, claimed="+").word == V.SUPPORTS
    assert V.claim_verdict(-0.5, -0.6, -0.4, 30, claimed="+").word == V.CONTRADICTS
    assert "bundled sample data" in V.claim_verdict(0.5, 0.4, 0.6, 30, claimed="+", sample=True).reason
    assert V.too_few(30) is None and V.too_few(29, 30)


def test_agrees_reads_value_and_interval():
    # chapter 04's novelty claim: rho 0.10 whose interval holds 0, the paper's range 0.3-0.47
    assert V.agrees(0.10, -0.05, 0.25, (0.3, 0.47)) is False
    assert V.agrees(0.35, 0.10, 0.50, (0.3, 0.47)) is True
    assert V.agrees(0.35, -0.10, 0.60, (0.3, 0.47)) is False       # holds the paper and chance: tells nothing
    assert V.agrees(0.35, -0.10, 0.60, (0.3, 0.47), null=None) is False  # no chance to exclude: inside the range
    assert V.agrees(0.35, 0.32, 0.45, (0.3, 0.47), null=None) is True
    assert V.agrees(0.20, 0.05, 0.25, (0.3, 0.47)) is False         # clear of chance but short of the paper
    # a direction: the whole interval on the paper's side of chance
    assert V.agrees(0.10, -0.05, 0.25, "+") is False
    assert V.agrees(0.10, 0.02, 0.25, "+") is True
    assert V.agrees(0.40, 0.30, 0.45, "-", null=0.5) is True       # an AUROC below chance, as claimed
    assert V.agrees(0.40, 0.30, 0.52, -1, null=0.5) is False
    assert V.agrees(0.4, float("nan"), float("nan"), "+") is None  # no interval: not testable
    assert V.agrees(0.9, 0.1, 0.2, "+") is True                    # a point outside its interval: never raises
    assert V.agrees(0.80, 0.60, 0.95, (0.3, 0.47)) is True          # a stronger effect in the claimed direction


def test_excludes_chance_needs_interval_and_test():
    assert not V.excludes_chance(0.0, 0.111, 0.055, null=0.0)       # the case: a bound at chance, p > .05
    assert not V.excludes_chance(0.01, 0.111, 0.055, null=0.0)      # interval clear, test not
    assert not V.excludes_chance(-0.01, 0.111, 0.03, null=0.0)      # test clear, interval not
    assert V.excludes_chance(0.01, 0.111, 0.03, null=0.0)
    assert V.excludes_chance(0.55, 0.70, None, null=0.5)            # no test run: the interval decides
    assert not V.excludes_chance(0.55, 0.70, float("nan"), null=0.5)
    assert not V.excludes_chance(float("nan"), float("nan"), 0.001, null=0.0)


def test_wilson_by_hand():
    z = 1.959963984540054
    lo, hi = V.wilson(12, 12)
    assert hi == 1.0 and lo == pytest.approx(1 / (1 + z * z / 12))     # p = 1: the centre minus half is 1/(1+z^2/n)
    assert lo == pytest.approx(0.7575, abs=1e-4)
    lo, hi = V.wilson(0, 12)
    assert lo == 0.0 and hi == pytest.approx((z * z / 12) / (1 + z * z / 12))
    lo, hi = V.wilson(5, 10)                                          # symmetric about 1/2
    assert lo + hi == pytest.approx(1.0)
    half = z * math.sqrt(0.25 / 10 + z * z / 400) / (1 + z * z / 10)
    assert hi - 0.5 == pytest.approx(half)
    assert all(math.isnan(x) for x in V.wilson(0, 0))
    with pytest.raises(ValueError):
        V.wilson(13, 12)


# -- the rule of issue 40: four words, read off the interval, never the point -------------------------------
from creval.measures.stats.multiple import adjusted, bh, holm  # noqa: E402


def test_the_claim_is_read_off_the_interval_not_the_point():
    # the same point 0.10, three intervals, three words
    assert V.claim_verdict(0.10, 0.02, 0.18, 60, claimed="+").word == V.SUPPORTS
    assert V.claim_verdict(0.10, -0.05, 0.25, 60, claimed="+").word == V.INCONCLUSIVE
    assert V.claim_verdict(0.10, -0.20, -0.01, 60, claimed="+").word == V.CONTRADICTS     # the other side
    # an AUROC claimed below chance
    assert V.claim_verdict(0.40, 0.30, 0.45, 60, claimed="-", null=0.5).word == V.SUPPORTS
    assert V.claim_verdict(0.60, 0.55, 0.70, 60, claimed="-", null=0.5).word == V.CONTRADICTS


def test_a_range_accepts_a_stronger_effect_and_rejects_a_weaker_one():
    paper = (0.30, 0.47)
    assert V.claim_verdict(0.80, 0.60, 0.95, 60, claimed=paper).word == V.SUPPORTS         # stronger: supports
    assert V.claim_verdict(0.35, 0.12, 0.55, 60, claimed=paper).word == V.SUPPORTS
    assert V.claim_verdict(0.15, 0.05, 0.25, 60, claimed=paper).word == V.CONTRADICTS      # short of the paper
    assert V.claim_verdict(0.35, -0.10, 0.60, 60, claimed=paper).word == V.INCONCLUSIVE    # chance and paper
    # a range below chance is mirrored; a range that holds chance is an overlap test
    assert V.claim_verdict(0.2, 0.10, 0.25, 60, claimed=(0.30, 0.40), null=0.5).word == V.SUPPORTS
    assert V.claim_verdict(0.45, 0.42, 0.48, 60, claimed=(0.30, 0.40), null=0.5).word == V.CONTRADICTS
    assert V.claim_verdict(2.0, 1.9, 2.1, 60, claimed=(1.8, 2.2), null=None).word == V.SUPPORTS
    assert V.claim_verdict(2.0, 1.5, 2.1, 60, claimed=(1.8, 2.2), null=None).word == V.INCONCLUSIVE
    assert V.claim_verdict(1.0, 0.9, 1.1, 60, claimed=(1.8, 2.2), null=None).word == V.CONTRADICTS


def test_no_difference_needs_a_margin_two_one_sided_tests():
    same = ("equivalent", 0.05)
    assert V.claim_verdict(0.01, -0.02, 0.03, 200, claimed=same).word == V.SUPPORTS       # inside +-0.05
    assert V.claim_verdict(0.01, -0.10, 0.12, 40, claimed=same).word == V.INCONCLUSIVE    # holds zero, not shown
    assert V.claim_verdict(0.20, 0.08, 0.30, 60, claimed=same).word == V.CONTRADICTS      # wholly beyond the band
    assert V.claim_verdict(0.04, 0.01, 0.07, 60, claimed=same).word == V.INCONCLUSIVE     # clear of 0, not of band
    with pytest.raises(ValueError):
        V.outcome(0.0, 0.1, ("bigger", 0.05))


def test_a_margin_makes_a_negligible_effect_contradict_a_directional_claim():
    assert V.claim_verdict(0.02, -0.01, 0.04, 500, claimed="+").word == V.INCONCLUSIVE
    assert V.claim_verdict(0.02, -0.01, 0.04, 500, claimed="+", margin=0.05).word == V.CONTRADICTS


def test_inconclusive_names_the_smallest_detectable_effect():
    v = V.claim_verdict(0.10, -0.05, 0.25, 60, claimed="+")
    d = V.smallest_detectable(-0.05, 0.25)
    assert d == pytest.approx((1.959964 + 0.8416) * 0.30 / (2 * 1.959964), rel=1e-5)      # 2.8 SE, SE = 0.0765
    assert v.reason.endswith(f"the smallest effect this test could detect is about {d:.2g}") and f"{d:.2g}" == "0.21"
    assert "about 0.5" in V.claim_verdict(0.1, -0.1, 0.3, 60, claimed="+", detectable=0.5).reason


def test_untestable_before_anything_else():
    assert V.claim_verdict(0.5, 0.4, 0.6, 29, claimed="+").word == V.TESTABLE
    v = V.claim_verdict(0.5, 0.4, 0.6, 4, claimed="+", min_n=5, units="writer")
    assert (v.word, v.reason) == (V.TESTABLE, "4 writer(s), fewer than the 5 a verdict needs")
    assert V.claim_verdict(0.5, float("nan"), 0.6, 99, claimed="+").word == V.TESTABLE
    v = V.claim_verdict(0.5, 0.4, 0.6, 99, claimed="+", degenerate="a constant score (1 on all 99 items)",
                        sample=True)
    assert v.reason == "a constant score (1 on all 99 items); bundled sample data"
    assert V.claim_verdict(0.9, 0.6, 0.4, 99, claimed="+").word == V.SUPPORTS             # bounds in any order


def test_a_verdict_the_monte_carlo_margin_could_flip_is_borderline():
    v = V.claim_verdict(0.3, 0.0004, 0.6, 60, claimed="+", mc=0.001)
    assert v.word == V.SUPPORTS and v.borderline and v.label == "supports the paper, borderline"
    assert str(v).startswith("supports the paper, borderline (")
    assert not V.claim_verdict(0.3, 0.01, 0.6, 60, claimed="+", mc=0.001).borderline
    assert V.claim_verdict(0.3, 0.2, 0.6, 60, claimed="+", mc=(0.3, 0.0)).borderline         # the lower bound's
    s = V.seed_verdict([V.Verdict(V.SUPPORTS), V.Verdict(V.INCONCLUSIVE), V.Verdict(V.SUPPORTS)])
    assert s.word == V.SUPPORTS and s.borderline and s.reason == "2 of 3 seeds give supports the paper"
    assert not V.seed_verdict([V.Verdict(V.SUPPORTS)] * 10).borderline


def test_detectors_by_share_show_the_share():
    assert V.all_tied([0] * 19 + [1]) == "19 of 20 (95%) comparisons tied: the order is mostly the tie-break's"
    assert V.all_tied([0] * 17 + [1] * 3) is None
    assert V.constant([0] * 19 + [1], "judge answer") is None                              # default: all items
    assert V.constant([0] * 19 + [1], "judge answer", share=0.9) == \
        "a near-constant judge answer (0 on 19 of 20 (95%) items)"
    shown = [["a", "b"]] * 10
    ranks = [["a", "b"]] * 9 + [["b", "a"]]
    assert "9 of 10 (90%) rankings equal the presentation order" in V.copies_order(ranks=ranks, shown=shown)


def test_holm_and_benjamini_hochberg_by_hand():
    p = [0.01, 0.04, 0.03, 0.005, float("nan")]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.06 (monotone)
    assert holm(p)[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and math.isnan(holm(p)[4])
    # BH: 0.005*4/1, 0.01*4/2, 0.03*4/3, 0.04*4/4 -> 0.02, 0.02, 0.04, 0.04
    assert bh(p)[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    vs = [V.Verdict(V.SUPPORTS), V.Verdict(V.CONTRADICTS), V.Verdict(V.INCONCLUSIVE), V.Verdict(V.SUPPORTS)]
    adj = adjusted(vs, [0.01, 0.04, 0.5, 0.005])
    assert [a.word for a in adj] == [V.SUPPORTS, V.INCONCLUSIVE, V.INCONCLUSIVE, V.SUPPORTS]
    assert adj[1].reason == "Holm-adjusted p = 0.08 over 4 claims; unadjusted: contradicts the paper"


def test_an_adjusted_p_near_alpha_is_borderline_and_one_far_from_it_is_not():
    from creval.measures.stats.multiple import adjusted_borderline
    # Holm over 3: 0.016 * 3 = 0.048 sits on 0.05 (its Monte-Carlo SD at B = 1000 is 0.004, times 3 is 0.012);
    # 0.001 * 3 = 0.003 and 0.5 are far from it
    assert adjusted_borderline([0.016, 0.001, 0.5], 1000) == [True, False, False]
    assert adjusted_borderline([0.016, 0.001, 0.5], 10 ** 7) == [False, False, False]   # many resamples: settled
    assert adjusted_borderline([0.016, 0.001, 0.5], 0) == [False, False, False]         # B unknown: no mark
    assert adjusted_borderline([float("nan"), 0.016, 0.001, 0.5], 1000) == [False, True, False, False]  # NaN: not in m
