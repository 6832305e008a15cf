"""Cluster bootstrap, Monte-Carlo margins and ``tracks_people`` (issue 40) on data whose truth is known."""
import math

import numpy as np
import pytest

from creval.measures.stats import resample as R
from creval.measures.stats import tracking as T
from creval.measures.stats.verdicts import INCONCLUSIVE, TESTABLE


def test_units_and_cluster_draws_keep_a_unit_whole():
    assert [u.tolist() for u in R.units(["w1", "w2", "w1", "w3"], 4)] == [[0, 2], [1], [3]]
    assert len(R.units(None, 3)) == 3
    for idx in R.cluster_draws(["a", "a", "b", "b", "b"], 5, 20, seed=3):
        rows = idx.tolist()
        assert rows.count(0) == rows.count(1) and rows.count(2) == rows.count(3) == rows.count(4)
    with pytest.raises(ValueError):
        R.units([1, 2], 3)


def test_a_cluster_bootstrap_is_wider_than_a_row_bootstrap_on_clustered_data():
    rng = np.random.default_rng(0)
    writer = np.repeat(np.arange(8), 25)                        # 200 rows, 8 independent writers
    v = rng.normal(size=8)[writer] + 0.1 * rng.normal(size=200)
    rows = R.cluster_bootstrap(np.mean, v, n_boot=500)
    whole = R.cluster_bootstrap(np.mean, v, cluster=writer, n_boot=500)
    assert whole["n_units"] == 8 and rows["n_units"] == 200
    assert (whole["hi"] - whole["lo"]) > 3 * (rows["hi"] - rows["lo"])


def test_mc_margin_shrinks_with_more_resamples_and_boot_p():
    rng = np.random.default_rng(1)
    small, big = R.mc_margin(rng.normal(size=200), 0.025), R.mc_margin(rng.normal(size=20000), 0.025)
    assert 0 < big < small / 4
    assert math.isnan(R.mc_margin([1.0] * 5, 0.5))
    assert R.boot_p([0.1, 0.2, -0.1, 0.3], 0.0, +1) == pytest.approx(2 / 5)
    assert R.boot_p([0.1, 0.2, -0.1, 0.3], 0.0, -1) == pytest.approx(4 / 5)
    p = R.percentile([np.nan] * 10 + list(range(90)))
    assert math.isnan(p["lo"]) and p["note"] == "no interval: the statistic is undefined on 10 of 100 resamples"


def test_column_stats_match_scipy():
    from scipy import stats
    rng = np.random.default_rng(2)
    a, b, y = rng.normal(size=50), rng.integers(0, 4, 50).astype(float), rng.normal(size=50)
    got = T.column_stats(np.column_stack([a, b]), y, "spearman")
    assert got == pytest.approx([stats.spearmanr(a, y).statistic, stats.spearmanr(b, y).statistic])
    lab = (y > 0).astype(float)
    u = stats.mannwhitneyu(b[lab == 1], b[lab == 0]).statistic / ((lab == 1).sum() * (lab == 0).sum())
    assert T.column_stats(b[:, None], lab, "auc")[0] == pytest.approx(u)
    assert math.isnan(T.column_stats(np.ones((50, 1)), y, "spearman")[0])


def _pooled(seed, n=160, within=0.0):
    """People rate the human texts 2 points higher; the measure separates authors; within each author it
    carries ``within`` of the rating."""
    rng = np.random.default_rng(seed)
    author = np.repeat(["human", "model"], n // 2)
    y = np.where(author == "human", 2.0, 0.0) + rng.normal(size=n)
    x = np.where(author == "human", 1.5, 0.0) + within * (y - y.mean()) + rng.normal(size=n)
    return x, y, author, {"length": rng.normal(size=n)}


def test_pooling_by_author_is_authorship_not_tracking():
    x, y, author, base = _pooled(0, n=1200)
    r = T.tracks_people(x, y, stat="spearman", baselines=base, author=author, n_boot=400)
    assert r["word"] == T.AUTHORSHIP and r["baseline"] == "length"       # the author is never a baseline
    assert r["value"] > 0.3 and r["lo"] > 0 and r["diff lo"] > 0                     # pooled it looks good
    assert r["within hi"] < T.EQUIVALENCE["spearman"] and {w["author"] for w in r["within"]} == {"human", "model"}
    # without the author column the same data would "beat length": the trap the issue names
    r0 = T.tracks_people(x, y, stat="spearman", baselines=base, n_boot=400)
    assert r0["word"] == T.TRACKS


def test_a_measure_that_tracks_people_within_authors():
    x, y, author, base = _pooled(1, within=1.5)
    r = T.tracks_people(x, y, stat="spearman", baselines=base, author=author, n_boot=400)
    assert r["word"] == T.TRACKS and r["within lo"] > 0 and r["diff lo"] > 0
    assert "best baseline length" in r["reason"] and "within authors" in r["reason"]


def test_a_length_proxy_is_no_better_than_length_and_names_it():
    rng = np.random.default_rng(3)
    length = rng.normal(size=300)
    y = length + 0.5 * rng.normal(size=300)
    x = length + 2.0 * rng.normal(size=300)                    # a noisy copy of length
    r = T.tracks_people(x, y, stat="spearman", baselines={"length": length}, n_boot=400)
    assert r["lo"] > 0 and r["diff hi"] < 0                    # it agrees with people, but length does better
    assert r["word"] == T.NO_BETTER and r["beaten by"] == "length"
    assert T.word_label(r) == "no better than length"


def test_a_baseline_counts_in_its_better_orientation():
    rng = np.random.default_rng(4)
    y = (rng.random(200) < 0.5).astype(float)
    markers = 1.0 - y + 0.01 * rng.normal(size=200)              # "no step markers" = the label
    r = T.tracks_people(y + rng.normal(size=200), y, stat="auc", baselines={"step markers": markers}, n_boot=300)
    assert r["baselines"]["step markers"] == pytest.approx(1.0) and r["word"] == T.NO_BETTER
    assert T.word_label(r) == "no better than step markers"


def test_baselines_constant_on_the_texts_stand_at_chance_not_undefined():
    """Texts of one length and one line (a fixed-format generation): no baseline orders anything, so the measure is
    read against chance, pooled and within authors, never "undefined on too many resamples"."""
    rng = np.random.default_rng(9)
    y = rng.normal(size=200)
    flat = {"words": np.full(200, 60.0), "lines": np.ones(200)}
    r = T.tracks_people(y + rng.normal(size=200), y, stat="spearman", baselines=flat, n_boot=300)
    assert r["word"] == T.TRACKS and r["baseline"] == T.CHANCE_BASELINE and r["baseline value"] == 0.0
    assert r["difference"] == pytest.approx(r["value"]) and r["diff lo"] == pytest.approx(r["lo"])
    label = (y > 0).astype(float)
    r = T.tracks_people(label + rng.normal(size=200), label, stat="auc", baselines=flat,
                        author=np.array(["a", "b"] * 100), n_boot=300)
    assert r["word"] == T.TRACKS and r["within difference"] == pytest.approx(r["within value"] - 0.5)
    flat = {k: np.resize(v, 1500) for k, v in flat.items()}
    r = T.tracks_people(rng.normal(size=1500), rng.normal(size=1500), stat="spearman", baselines=flat, n_boot=200)
    assert r["word"] == T.NO_TRACK


def test_too_few_units_or_items_is_untestable_and_a_null_is_not_tracks():
    x, y, author, base = _pooled(5)
    r = T.tracks_people(x, y, stat="spearman", baselines=base, cluster=np.repeat([1, 2, 3, 4], 40), n_boot=50)
    assert r["word"] == TESTABLE and r["reason"].startswith("4 independent unit(s)")
    r = T.tracks_people(x[:20], y[:20], stat="spearman", baselines={"l": base["length"][:20]}, n_boot=50)
    assert r["word"] == TESTABLE
    rng = np.random.default_rng(6)
    r = T.tracks_people(rng.normal(size=80), rng.normal(size=80), stat="spearman",
                        baselines={"l": rng.normal(size=80)}, n_boot=300)
    assert r["word"] == INCONCLUSIVE and "smallest lead this test could detect" in r["reason"]
    assert r["lo"] < 0 < r["hi"] and r["diff lo"] < 0 < r["diff hi"]


def test_a_null_measure_on_many_texts_does_not_track_people():
    """Its whole interval inside the margin around chance: the only way to earn the word."""
    rng = np.random.default_rng(11)
    r = T.tracks_people(rng.normal(size=1500), rng.normal(size=1500), stat="spearman",
                        baselines={"l": rng.normal(size=1500)}, n_boot=200)
    assert r["word"] == T.NO_TRACK and -0.1 < r["lo"] and r["hi"] < 0.1


def test_a_label_that_is_the_author_has_nothing_within_authors_and_no_bare_nan():
    """Crowd vs model texts: the human label *is* the author, so nothing can be read within authors."""
    rng = np.random.default_rng(8)
    author = np.repeat(["crowd", "model"], 60)
    y = (author == "crowd").astype(float)
    x = y + 0.7 * rng.normal(size=120)
    r = T.tracks_people(x, y, stat="auc", baselines={"length": rng.normal(size=120)}, author=author, n_boot=200)
    assert "author label" not in r["baselines"] and r["word"] != T.TRACKS
    assert math.isnan(r["within value"]) and "nan" not in r["reason"] and "within authors – [–, –]" in r["reason"]


def test_units_within_groups_count_clusters_never_groups():
    """4 prompts x 120 texts: each text a unit, drawn within its prompt (words, not "not testable"); 3
    writers x 160 texts: 3 units, not testable whatever the prompts."""
    rng = np.random.default_rng(12)
    g = np.repeat(list("abcd"), 120)
    y = rng.normal(size=480) + np.repeat(rng.normal(size=4), 120)
    x = y + rng.normal(size=480)
    r = T.tracks_people(x, y, stat="spearman", baselines={"words": rng.normal(size=480)}, group=g, n_boot=300)
    assert r["n_units"] == 480 and r["n_groups"] == 4 and r["word"] == T.TRACKS
    assert "resampled within 4 prompts: it holds for these prompts" in r["reason"]
    w = np.tile([1, 2, 3], 160)
    r = T.tracks_people(x, y, stat="spearman", baselines={"words": rng.normal(size=480)}, group=g, cluster=w,
                        n_boot=100)
    assert r["word"] == TESTABLE and r["n_units"] == 3 and "clusters" in r["reason"]


def test_strata_draws_keep_each_groups_units_and_size():
    g = ["a"] * 3 + ["b"] * 5
    c = ["a1", "a1", "a2", "b1", "b2", "b2", "b3", "b3"]
    for idx in R.strata_draws(c, g, 8, 30, seed=2):
        k = idx.tolist().count
        assert k(0) == k(1) and k(4) == k(5) and k(6) == k(7)          # every unit whole
        assert k(0) + k(2) == 2 and k(3) + k(4) + k(6) == 3              # each prompt keeps its number of units
    # a unit that spans groups stays whole: the plain cluster bootstrap
    crossed = list(R.strata_draws(["w1", "w2", "w1", "w2"], ["p", "p", "q", "q"], 4, 5, seed=0))
    plain = list(R.cluster_draws(["w1", "w2", "w1", "w2"], 4, 5, seed=0))
    assert all(np.array_equal(a, b) for a, b in zip(crossed, plain))


def test_ranks_equal_scipys_average_ranks_with_ties_and_nan():
    from scipy.stats import rankdata

    from creval.measures.stats.ranks import average_ranks as _ranks
    rng = np.random.default_rng(7)
    for trial in range(60):
        n, k = int(rng.integers(1, 30)), int(rng.integers(1, 4))
        a = rng.integers(0, 4, size=(n, k)).astype(float) if trial % 2 else rng.normal(size=(n, k))
        if trial % 5 == 0:
            a[int(rng.integers(0, n)), 0] = np.nan           # that column's ranks are all NaN, as scipy's
        for x in (a, a[:, 0]):
            assert np.array_equal(_ranks(x), rankdata(x, axis=0), equal_nan=True)
    assert _ranks(np.array([2.0, 1.0, 2.0, 5.0])).tolist() == [2.5, 1.0, 2.5, 4.0]
