"""The statistics module (creval.measures.stats) against hand-computed values and its documented edge cases."""
import math
import random

import numpy as np
import pytest

from creval.measures.stats import agreement as agree
from creval.measures.stats import correlation as corr


def test_spearman_kendall_known_values():
    x = [1, 2, 3, 4, 5]
    assert corr.spearman(x, [5, 6, 7, 8, 7])["rho"] == pytest.approx(0.8207826816681233)
    assert corr.spearman(x, [2, 4, 6, 8, 10])["rho"] == pytest.approx(1.0)
    # one swapped adjacent pair among 5: (C - D)/10 = (9 - 1)/10
    assert corr.kendall(x, [1, 3, 2, 4, 5])["tau"] == pytest.approx(0.8)
    small = corr.spearman([1, 2, 3], [1, 2, 3])
    assert math.isnan(small["rho"]) and "not meaningful" in small["note"]
    const = corr.spearman(x, [1, 1, 1, 1, 1])
    assert math.isnan(const["rho"]) and "constant" in const["note"]
    nan = corr.spearman([1, 2, np.nan, 4, 5, 6], [1, 2, 3, 4, 5, 6])
    assert nan["n"] == 5 and nan["rho"] == pytest.approx(1.0)


def test_bootstrap_ci_is_seeded_and_brackets_estimate():
    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    y = x + rng.normal(scale=0.5, size=60)
    r = corr.spearman_ci(x, y, n_boot=300, seed=3)
    assert r["lo"] < r["rho"] < r["hi"] <= 1.0
    assert corr.spearman_ci(x, y, n_boot=300, seed=3)["lo"] == r["lo"]
    lo, hi = corr.bootstrap_ci(np.mean, np.array([1.0, 1.0, 1.0, 1.0, 1.0]), n_boot=50)
    assert lo == hi == 1.0
    assert all(math.isnan(v) for v in corr.bootstrap_ci(np.mean, np.array([1.0, 2.0]), n_boot=50))


def test_auc_hand_computed():
    assert corr.auc([1, 1, 0, 0], [0.9, 0.8, 0.1, 0.2])["auc"] == pytest.approx(1.0)
    # positives {0.5, 0.2}, negatives {0.4, 0.2}: pairs 0.5>0.4, 0.5>0.2, 0.2<0.4, 0.2=0.2 (1/2) -> 2.5/4
    assert corr.auc([1, 1, 0, 0], [0.5, 0.2, 0.4, 0.2])["auc"] == pytest.approx(0.625)
    assert math.isnan(corr.auc([1, 1, 1], [1, 2, 3])["auc"])


def test_auc_ci_drops_nan_rows_and_brackets_estimate():
    rng = np.random.default_rng(0)
    y = np.array([1] * 20 + [0] * 20)
    s = y + rng.normal(size=40)
    r = corr.auc_ci(y, s, n_boot=300, seed=1)
    assert r["auc"] == corr.auc(y, s)["auc"] and r["lo"] < r["auc"] < r["hi"] <= 1.0
    # a row whose score is NaN is dropped before resampling: the same CI as without that row
    with_nan = corr.auc_ci(np.append(y, 1), np.append(s, np.nan), n_boot=300, seed=1)
    assert (with_nan["lo"], with_nan["hi"], with_nan["n"]) == (r["lo"], r["hi"], 40)
    # the AUC is undefined with one positive: so is its CI (a resample could duplicate that positive)
    one = corr.auc_ci([1, 0, 0, 0, 0, 0], [0.9, 0.1, 0.2, 0.3, 0.4, 0.5], n_boot=100)
    assert one["note"] and all(math.isnan(one[k]) for k in ("auc", "lo", "hi"))


def test_bin_fixed_count():
    x = np.arange(40, dtype=float)
    y = 2 * x
    b = corr.bin_fixed_count(x, y, size=15)
    # 40 points: bins 0-14, 15-29, 30-39 (10 >= 7.5 kept as its own bin)
    assert b["count"].tolist() == [15, 15, 10]
    assert b["x_median"].tolist() == [7.0, 22.0, 34.5]
    assert b["y_mean"].tolist() == [14.0, 44.0, 69.0]
    b2 = corr.bin_fixed_count(np.arange(33.0), np.arange(33.0), size=15)
    assert b2["count"].tolist() == [15, 18]   # a 3-point tail joins the previous bin


def test_accuracy_counts_unparsed_as_wrong_unless_parsed_only():
    gold, pred = [True, True, False, True], [True, False, None, True]
    assert agree.accuracy(gold, pred) == pytest.approx(2 / 4)
    assert agree.accuracy(gold, pred, parsed_only=True) == pytest.approx(2 / 3)
    assert agree.accuracy([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5
    assert agree.accuracy([None], [None]) == 0.0                    # no verdict is never right
    assert math.isnan(agree.accuracy([], []))
    assert math.isnan(agree.accuracy([True], [None], parsed_only=True))
    with pytest.raises(ValueError):
        agree.accuracy([1, 2], [1])


def test_macro_f1_hand_computed():
    gold, pred = ["a", "a", "b", "c"], ["a", "b", "b", "a"]
    # a: TP 1, FP 1, FN 1 -> 2/4;  b: TP 1, FP 1, FN 0 -> 2/3;  c: TP 0 -> 0
    assert agree.macro_f1(gold, pred) == pytest.approx((1 / 2 + 2 / 3 + 0) / 3)
    assert agree.macro_f1(gold, pred, ["a", "b", "c", "d"]) == pytest.approx((1 / 2 + 2 / 3 + 0 + 0) / 4)
    # always-neutral baseline on 3 classes: F1(neutral) = 2*1/(2*1 + 2), others 0
    assert agree.macro_f1(["n", "e", "c"], ["n", "n", "n"], ["e", "n", "c"]) == pytest.approx((2 / 4) / 3)
    assert math.isnan(agree.macro_f1([], [], ["a"]))


def test_cohen_kappa_hand_computed_and_degenerate_cases():
    # 2x2 table a=(1,1,0,0,1,0) b=(1,0,0,0,1,1): po = 4/6, pe = .5*.5+.5*.5 = .5 -> kappa 1/3
    assert agree.cohen_kappa([1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]) == pytest.approx(1 / 3)
    # three labels: po = 4/6; marginals a (2,2,2)/6, b (2,3,1)/6 -> pe = (4+6+2)/36 = 1/3 -> (2/3-1/3)/(2/3)
    assert agree.cohen_kappa(list("xxyyzz"), list("xyyyzx")) == pytest.approx(0.5)
    assert agree.cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)     # po 0, pe 1/2
    assert agree.cohen_kappa(["y"] * 4, ["y", "y", "n", "n"]) == pytest.approx(0.0)  # po 1/2 = pe
    assert agree.cohen_kappa(["y", "y"], ["n", "n"]) == 0.0                         # po 0, pe 0
    assert agree.cohen_kappa(["y", "y", "y"], ["y", "y", "y"]) == 1.0               # pe = 1: decided 1.0
    assert math.isnan(agree.cohen_kappa(["y"], ["y"])) and math.isnan(agree.cohen_kappa([], []))
    with pytest.raises(ValueError):
        agree.cohen_kappa([1, 0], [1])


def test_cohen_kappa_and_macro_f1_match_sklearn():
    from sklearn.metrics import cohen_kappa_score, f1_score
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(2, 12)
        a = [rng.choice("xyz") for _ in range(n)]
        b = [rng.choice("xyz") for _ in range(n)]
        if len(set(a) | set(b)) > 1:
            assert agree.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert agree.macro_f1(a, b, list("xyz")) == pytest.approx(
            f1_score(a, b, labels=list("xyz"), average="macro", zero_division=0), abs=1e-12)


def test_auarc_hand_computed():
    # confidences 0.9 (right), 0.8 (wrong), 0.7 (right): accuracies 1, 1/2, 2/3 -> mean 13/18
    assert agree.auarc([True, False, True], [0.9, 0.8, 0.7]) == pytest.approx(13 / 18)
    # all tied: every prefix has expected accuracy 2/3
    assert agree.auarc([True, False, True], [0.5, 0.5, 0.5]) == pytest.approx(2 / 3)
    # perfect ranking of 2 right then 2 wrong: 1, 1, 2/3, 1/2 -> 19/24
    assert agree.auarc([False, True, False, True], [0.1, 0.9, 0.2, 0.8]) == pytest.approx(19 / 24)
    # a missing confidence (None or NaN) ranks below every number, negative ones included: 1, 1/2
    assert agree.auarc([False, True], [None, -2.0]) == pytest.approx(3 / 4)
    assert agree.auarc([False, True], [float("nan"), 0.1]) == pytest.approx(3 / 4)
    assert math.isnan(agree.auarc([], []))


def test_agreement_counts_unparsed_separately():
    gold = [True, False, True]
    pred = [True, True, None]
    m = agree.agreement(gold, pred, [0.9, 0.4, None])
    assert m["n"] == 3 and m["parsed"] == 2 and m["unparsed"] == 1 and m["coverage"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(0.5) and m["accuracy_all"] == pytest.approx(1 / 3)
    assert m["auarc"] == pytest.approx((1 + 0.5) / 2)
    # parsed: pred (T, T) vs gold (T, F): po 1/2, pe 1*1/2 -> 0
    assert m["kappa"] == pytest.approx(0.0) and m["label_yes_rate"] == pytest.approx(2 / 3)
    # no confidences: every parsed verdict ties, AUARC = parsed accuracy
    assert agree.agreement(gold, pred)["auarc"] == pytest.approx(0.5)
    empty = agree.agreement([], [])
    assert empty["n"] == 0 and all(math.isnan(empty[k]) for k in ("coverage", "accuracy", "kappa", "auarc"))
