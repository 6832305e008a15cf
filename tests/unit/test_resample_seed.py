"""CREVAL_BOOT_SEED shifts every report-time bootstrap seed (issue 40); unset, the numbers are today's."""
import numpy as np
import pytest

from creval.measures import bradley_terry as BT
from creval.measures.stats import correlation as corr
from creval.measures.stats import resample as R


def _numbers() -> tuple:
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=40), rng.normal(size=40)
    ci = corr.spearman_ci(x, y, n_boot=200)
    cb = R.cluster_bootstrap(lambda a: float(np.mean(a)), x, cluster=np.arange(40) // 4, n_boot=200)
    bt = BT.bootstrap(["a", "b"], [(f"i{k}", "a", "b", float(k % 3 == 0)) for k in range(12)], n_boot=20)
    return ci["lo"], ci["hi"], cb["lo"], cb["hi"], tuple(bt["lo"])


def test_unset_or_zero_is_todays_seed_and_a_shift_moves_every_site(monkeypatch):
    monkeypatch.delenv(R.SEED_ENV, raising=False)
    today = _numbers()
    assert R.boot_seed(3) == 3 and R.boot_seed(None) is None
    monkeypatch.setenv(R.SEED_ENV, "0")
    assert _numbers() == today
    monkeypatch.setenv(R.SEED_ENV, "5")
    assert R.boot_seed(3) == 8
    moved = _numbers()
    assert all(a != b for a, b in zip(moved[:4], today[:4]))
    monkeypatch.setenv(R.SEED_ENV, "x")
    with pytest.raises(ValueError, match=R.SEED_ENV):
        R.boot_seed(0)


@pytest.mark.parametrize("data", ["normal", "discrete"])
def test_the_margin_of_each_seed_reaches_every_other_seeds_bound(monkeypatch, data):
    """The borderline mark is sound only if no other seed's bound lies beyond a bound's Monte-Carlo margin:
    checked on seeds 0-9 of a cluster bootstrap, for a smooth statistic and for a mean of 0/1 values (atoms)."""
    rng = np.random.default_rng(11)
    x = rng.normal(0.2, 1, 60) if data == "normal" else (rng.random(60) < 0.3).astype(float)
    runs = []
    for s in range(10):
        monkeypatch.setenv(R.SEED_ENV, str(s))
        runs.append(R.cluster_bootstrap(lambda a: float(np.mean(a)), x, n_boot=1000))
    for key, mc in (("lo", "mc_lo"), ("hi", "mc_hi")):
        bounds = np.array([r[key] for r in runs])
        for r in runs:
            assert np.all(np.abs(bounds - r[key]) <= r[mc]), (key, bounds, r[key], r[mc])
        assert max(r[mc] for r in runs) < 0.5 * (runs[0]["hi"] - runs[0]["lo"])    # conservative, not useless


def test_row_bootstrap_intervals_carry_their_margins():
    rng = np.random.default_rng(5)
    x = rng.normal(size=50)
    r = corr.spearman_ci(x, x + rng.normal(size=50), n_boot=300)
    assert 0 < r["mc_lo"] < r["hi"] - r["lo"] and 0 < r["mc_hi"] < r["hi"] - r["lo"]
    assert np.isnan(corr.spearman_ci([1, 2], [2, 1])["mc_lo"])                # no interval, no margin
    d = corr.paired_mean_diff_ci(x, x - 0.1, n_boot=300)
    assert np.isfinite(d["mc_lo"]) and np.isfinite(d["mc_hi"])
