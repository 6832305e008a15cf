"""Honest bootstrap intervals (issue 33): resamples whose statistic is undefined are counted, and above 5%
no interval is given. Hand-computed cases from the issue."""
import math

import numpy as np

from creval.measures.stats import correlation as corr
from creval.measures.stats import verdicts as V


def test_a_rho_resting_on_one_differing_response_gets_no_interval():
    x = np.array([0.0] * 59 + [1.0])                 # 59 identical responses, 1 that differs
    y = np.arange(60, dtype=float)
    r = corr.spearman_ci(x, y, n_boot=1000, seed=0)
    assert math.isfinite(r["rho"])                   # the point estimate exists...
    assert math.isnan(r["lo"]) and math.isnan(r["hi"])   # ...but a resample misses the one item (59/60)^60 of the time
    miss = (59 / 60) ** 60
    assert abs(miss - 0.3648) < 1e-4
    assert abs(r["undefined"] / 1000 - miss) < 0.05   # binomial sd of the share: 0.015
    assert f"undefined on {r['undefined']} of 1000 resamples" in r["note"]


def test_an_auc_of_one_on_three_against_three_gets_no_interval():
    r = corr.auc_ci([1, 1, 1, 0, 0, 0], [4, 5, 6, 1, 2, 3], n_boot=1000, seed=0)
    assert r["auc"] == 1.0
    assert math.isnan(r["lo"]) and math.isnan(r["hi"])   # not [1.0, 1.0]
    # a resample of 6 needs >= 2 of each class: P(2..4 positives of 6) = (15 + 20 + 15) / 64
    assert abs(r["undefined"] / 1000 - 14 / 64) < 0.05
    assert r["p"] > 0.05                                  # the exact test agrees: 3 vs 3 tells little


def test_twelve_of_twelve_gets_wilson_not_a_point():
    boot = corr.bootstrap_ci(np.mean, np.ones(12), n_boot=200)
    assert tuple(boot) == (1.0, 1.0) and boot.undefined == 0     # the bootstrap can only say [100%, 100%]
    lo, hi = V.wilson(12, 12)
    assert round(lo, 2) == 0.76 and hi == 1.0


def test_a_few_undefined_resamples_are_counted_and_the_interval_kept():
    calls = {"n": 0}

    def stat(a):
        calls["n"] += 1
        return float("nan") if calls["n"] % 50 == 0 else float(a.mean())     # 2% undefined

    ci = corr.bootstrap_ci(stat, np.arange(20.0), n_boot=1000, seed=1)
    lo, hi = ci
    assert ci.undefined == 20 and ci.note == "20 of 1000 resamples undefined"
    assert 5 < lo < 9.5 < hi < 14


def test_too_many_undefined_resamples_give_no_interval():
    calls = {"n": 0}

    def stat(a):
        calls["n"] += 1
        if calls["n"] % 10 == 0:
            raise ZeroDivisionError                      # an error counts as undefined, 10% of the time
        return float(a.mean())

    ci = corr.bootstrap_ci(stat, np.arange(20.0), n_boot=500, seed=1)
    assert math.isnan(ci[0]) and ci.undefined == 50 and "(10%)" in ci.note
    assert corr.bootstrap_ci(stat, np.arange(20.0), n_boot=500, seed=1, max_undefined=0.2)[0] > 0


def test_paired_difference_says_why_it_has_no_interval():
    y = np.arange(40, dtype=float)
    a = np.array([0.0] * 39 + [1.0])                 # rests on one item
    b = y + np.sin(y)
    d = corr.paired_diff_ci(a, b, y, n_boot=400, seed=0)
    assert d["verdict"] == "n/a" and "no interval" in d["note"] and d["undefined"] > 20
    ok = corr.paired_mean_diff_ci(np.ones(30), np.r_[np.ones(15), np.zeros(15)], n_boot=400, seed=0)
    assert ok["verdict"] == "better" and ok["undefined"] == 0 and ok["lo"] > 0


def test_a_paired_word_a_monte_carlo_margin_could_flip_is_borderline():
    nan = float("nan")
    assert corr.paired_word(0.1, 0.5, (0.02, 0.02)) == ("better", False)
    assert corr.paired_word(0.01, 0.5, (0.02, 0.02)) == ("better", True)           # the lower bound could reach 0
    assert corr.paired_word(-0.3, 0.005, (0.0, 0.01)) == ("indistinguishable", True)
    assert corr.paired_word(-0.3, -0.1, (nan, nan)) == ("worse", False)             # no margin: never marked
    assert corr.paired_word(nan, nan, (0.5, 0.5)) == ("n/a", False)
    y = np.arange(40, dtype=float)
    d = corr.paired_diff_ci(y, y[::-1], y, n_boot=300, seed=0)
    assert d["verdict"] == "better" and d["borderline"] is False
