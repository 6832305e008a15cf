"""The paired 2x2 maths of measures/paired.py against values worked by hand: the exact McNemar test, Newcombe's
method-10 interval and the share interval (Wilson's on a sum of per-item shares)."""
import math

import pytest

from creval.measures.stats.paired import mcnemar_exact, newcombe_paired, paired_change, share_interval, table
from creval.measures.stats.verdicts import wilson


def test_mcnemar_exact_by_hand():
    # 17 lost, 3 gained: 2 * (C(20,0) + C(20,1) + C(20,2) + C(20,3)) / 2^20 = 2 * 1351 / 1048576
    assert mcnemar_exact(17, 3) == pytest.approx(2 * 1351 / 2 ** 20)
    assert mcnemar_exact(3, 17) == mcnemar_exact(17, 3)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(5, 5) == 1.0    # capped at 1
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_newcombe_reduces_to_the_independent_hybrid_when_phi_is_zero():
    # a = b = c = d: ad - bc = 0, so the interval is D -+ sqrt of the two Wilson half-widths squared
    lo, hi = newcombe_paired(10, 10, 10, 10)
    l1, u1 = wilson(20, 40)
    assert lo == pytest.approx(-math.hypot(0.5 - l1, u1 - 0.5)) and hi == pytest.approx(-lo)


def test_newcombe_is_tighter_with_positive_correlation_and_antisymmetric():
    # the same margins (25 and 11 of 97) with concordant pairs: a narrower interval than with phi = 0
    lo, hi = newcombe_paired(8, 17, 3, 69)
    assert (lo, hi) == pytest.approx((0.05830, 0.23300), abs=1e-5)
    assert lo < 14 / 97 < hi and lo > 0
    nlo, nhi = newcombe_paired(8, 3, 17, 69)              # the two outcomes swapped: the interval negated
    assert (nlo, nhi) == pytest.approx((-hi, -lo))
    assert all(math.isnan(x) for x in newcombe_paired(0, 0, 0, 0))
    # five items all passing twice: no change seen, but five items cannot rule out one of about 43 points
    lo, hi = newcombe_paired(5, 0, 0, 0)
    assert hi == pytest.approx(1 - wilson(5, 5)[0]) and lo == pytest.approx(-hi) and hi > 0.4


def test_paired_change_reads_the_table():
    x = [1] * 8 + [1] * 17 + [0] * 3 + [0] * 69
    y = [1] * 8 + [0] * 17 + [1] * 3 + [0] * 69
    assert table(x, y) == (8, 17, 3, 69)
    c = paired_change(x, y)
    assert (c["n"], c["k_x"], c["k_y"], c["lost"], c["gained"]) == (97, 25, 11, 17, 3)
    assert c["drop"] == pytest.approx(14 / 97) and c["kept"] == pytest.approx(11 / 25)
    assert c["p"] == pytest.approx(0.0025768, abs=1e-7)
    assert c["ci_y"] == pytest.approx(wilson(11, 97))
    with pytest.raises(ValueError):
        table([1], [1, 0])


def test_share_interval_is_wilson_on_the_sum_and_never_zero_width():
    assert share_interval([0] * 97) == pytest.approx((0.0, wilson(0, 97)[1]))
    assert share_interval([0] * 97)[1] == pytest.approx(0.0381, abs=1e-4)
    assert share_interval([1, 0, 1, 1]) == pytest.approx(wilson(3, 4))
    assert share_interval([0.5, 0.5, math.nan]) == pytest.approx(wilson(1, 2))
    assert all(math.isnan(x) for x in share_interval([]))
    with pytest.raises(ValueError):
        share_interval([1.5])
