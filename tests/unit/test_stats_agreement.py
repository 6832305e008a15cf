"""The agreement statistics of the validity tables, held to hand-computed values."""
import math

import numpy as np
import pytest

from creval.measures.entropy import distinct_at_k
from creval.measures.stats import correlation as corr
from creval.measures.stats import raters
from creval.measures.stats import resample as R


def test_spearman_brown_one_more_rater_and_noise_ceiling():
    assert raters.spearman_brown(0.5, 2) == pytest.approx(2 / 3)                # 2 * .5 / (1 + .5)
    assert raters.spearman_brown(0.2, 4) == pytest.approx(0.8 / 1.6)
    assert raters.one_vs_mean(0.5, 2) == pytest.approx(0.5 * math.sqrt(2 / 1.5))  # 0.57735
    assert raters.one_vs_mean(0.3, 1) == pytest.approx(0.3)                      # against one rater: r itself
    assert raters.noise_ceiling(0.5, 2) == pytest.approx(math.sqrt(2 / 3))
    assert math.isnan(raters.spearman_brown(float("nan"), 2))


def test_paired_difference_of_correlations():
    y = np.arange(1, 11, dtype=float)
    b = np.array([2, 1, 4, 3, 6, 5, 8, 7, 10, 9], float)                  # five adjacent swaps: rho = 1 - 60/990
    r = corr.paired_diff_ci(y, b, y, n_boot=300, seed=1)
    assert r["n"] == 10 and r["diff"] == pytest.approx(60 / 990)
    assert r["lo"] <= r["diff"] <= r["hi"]
    assert corr.paired_diff_ci(y, -y, y, n_boot=200)["verdict"] == "better"
    assert corr.paired_diff_ci(-y, y, y, n_boot=200)["verdict"] == "worse"
    same = corr.paired_diff_ci(b, b, y, n_boot=200)
    assert same["diff"] == 0 and same["verdict"] == "indistinguishable"
    few = corr.paired_diff_ci([1, 2, np.nan], [1, 2, 3], [1, 2, 3])          # missing items dropped, then too few
    assert few["n"] == 2 and few["verdict"] == "n/a" and "paired items" in few["note"]


def test_rater_pairs_use_the_items_both_rated():
    m = np.array([[1, 1, np.nan], [2, 2, np.nan], [3, 3, 1], [4, 4, 2], [5, np.nan, 4], [6, np.nan, 3],
                  [np.nan, 5, 5], [np.nan, 6, 6], [7, 7, 7], [8, 8, 8]], float)
    rows = {(r["a"], r["b"]): r for r in corr.rater_pairs(m, n_boot=100, min_n=3)}
    assert rows[("rater1", "rater2")]["n"] == 6 and rows[("rater1", "rater2")]["rho"] == pytest.approx(1.0)
    r13 = rows[("rater1", "rater3")]                                       # rows 3-6, 9, 10; one swap
    assert r13["n"] == 6 and r13["rho"] == pytest.approx(1 - 6 * 2 / (6 * 35))
    assert rows[("rater2", "rater3")]["n"] == 6


def test_distinct_at_k_counts_meaning_classes_among_the_first_k():
    ids = [0, 0, 1, 2, 1]
    assert distinct_at_k(ids, 1) == 1 and distinct_at_k(ids, 3) == 2 and distinct_at_k(ids) == 3


def test_paired_auc_difference_and_paired_mean_difference():
    lab = np.array([0] * 6 + [1] * 6, float)
    good = np.arange(12, dtype=float)                                   # separates perfectly: AUROC 1
    half = np.array([0, 1, 2, 9, 10, 11, 3, 4, 5, 6, 7, 8], float)     # positives above 3 of 6 negatives each: 0.5
    r = corr.paired_diff_ci(good, half, lab, n_boot=200, stat="auc")
    assert r["diff"] == pytest.approx(0.5) and r["verdict"] == "better"
    m = corr.paired_mean_diff_ci([1, 1, 1, 0, 1, 1, 1, 1, 0, 1], [1, 0, 1, 0, 1, 0, 1, 0, 0, 1], n_boot=200)
    assert m["n"] == 10 and m["diff"] == pytest.approx(0.8 - 0.5) and m["lo"] <= 0.3 <= m["hi"]


def test_stratified_draws_keep_each_strata_count_without_repeats():
    strata = ["a"] * 6 + ["b"] * 4 + ["c"] * 2
    draws = R.stratified_draws(strata, {"a": 3, "b": 1, "c": 5}, draws=20, seed=1)
    assert len(draws) == 20
    for idx in draws:
        got = [strata[i] for i in idx]
        assert (got.count("a"), got.count("b"), got.count("c")) == (3, 1, 2)   # c has only 2 rows: all of them
        assert len(set(idx.tolist())) == len(idx)
    assert len({tuple(sorted(d.tolist())) for d in draws}) > 1                     # the draws differ
    again = R.stratified_draws(strata, {"a": 3, "b": 1, "c": 5}, draws=20, seed=1)
    assert all((x == y).all() for x, y in zip(draws, again))                      # seeded


def test_draw_spread_places_the_observed_draw():
    x = np.arange(100, dtype=float)
    singles = [np.array([i]) for i in range(100)]
    r = R.draw_spread(lambda idx: float(x[idx].mean()), singles, observed=90.0)
    assert (r["lo"], r["hi"]) == pytest.approx((4.95, 94.05))                     # 5% and 95% quantiles of 0..99
    assert r["percentile"] == pytest.approx(0.905)                                # 90 below, one tie (counts 1/2)
    assert r["draws"] == 100
    few = R.draw_spread(lambda idx: float("nan") if idx[0] > 5 else 1.0, singles, observed=1.0)
    assert math.isnan(few["lo"]) and few["draws"] == 6                             # < 10 finite draws: no range
