"""Bradley-Terry (measures/bradley_terry.py): known strengths recovered, ties as half wins, bootstrap intervals
over items and the noise floor."""
import numpy as np
import pytest

from creval.core.errors import CrevalError
from creval.measures import bradley_terry as BT


def simulated(strengths: dict, items: int, seed: int) -> list[tuple[str, str, str, float]]:
    """Every pair on every item, outcome drawn from Eq. 1 with the given thetas."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for it in range(items):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                p = BT.win_probability(strengths[a], strengths[b])
                out.append((f"i{it}", a, b, float(rng.random() < p)))
    return out


def test_fit_recovers_known_strengths_and_order():
    truth = {"a": 1.5, "b": 0.5, "c": -0.5, "d": -1.5}
    outcomes = simulated(truth, 400, seed=3)
    theta = BT.fit(list(truth), [o[1:] for o in outcomes], prior=0.0)
    assert BT.order(theta) == [0, 1, 2, 3]
    assert np.allclose(theta, np.array(list(truth.values())) - np.mean(list(truth.values())), atol=0.2)


def test_ties_count_half_and_equal_records_give_equal_strengths():
    W, N = BT.win_matrix(["x", "y"], [("x", "y", 0.5), ("x", "y", 1.0)])
    assert W[0, 1] == 1.5 and W[1, 0] == 0.5 and N[0, 1] == N[1, 0] == 2
    theta = BT.fit(["x", "y", "z"], [("x", "y", 0.5)] * 4 + [("x", "z", 1.0), ("y", "z", 1.0)])
    assert theta[0] == pytest.approx(theta[1]) and theta[2] < theta[0]
    # exactly even record: both strengths 0 (centred), P = 1/2
    t2 = BT.fit(["p", "q"], [("p", "q", 1.0), ("p", "q", 0.0)], prior=0.0)
    assert np.allclose(t2, 0.0) and BT.win_probability(*t2) == pytest.approx(0.5)


def test_unbeaten_model_stays_finite_with_the_prior_and_unseen_model_is_nan():
    theta = BT.fit(["w", "l", "ghost"], [("w", "l", 1.0)] * 5)
    assert np.isfinite(theta[:2]).all() and theta[0] > theta[1] and np.isnan(theta[2])


def test_bootstrap_intervals_cover_and_noise_floor_moves_with_signal():
    truth = {"a": 2.0, "b": 0.0, "c": -2.0}
    strong = BT.bootstrap(list(truth), simulated(truth, 60, seed=1), n_boot=100, seed=0)
    assert list(strong["rank"]) == [1, 2, 3]
    assert (strong["lo"] <= strong["theta"]).all() and (strong["theta"] <= strong["hi"]).all()
    assert strong["same_order"] > 0.9 and strong["tau_between"] > 0.9
    flat = {"a": 0.0, "b": 0.0, "c": 0.0}
    noisy = BT.bootstrap(list(flat), simulated(flat, 20, seed=2), n_boot=100, seed=0)
    assert noisy["same_order"] < strong["same_order"] and noisy["tau_between"] < 0.6
    assert (noisy["rank_hi"] - noisy["rank_lo"]).max() >= 1


def test_kendall_tau_and_bad_input():
    assert BT.kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert BT.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert np.isnan(BT.kendall_tau([1], [1]))
    with pytest.raises(CrevalError, match="not in"):
        BT.win_matrix(["a", "b"], [("a", "b", 2.0)])
    with pytest.raises(CrevalError, match="no pairwise outcome"):
        BT.bootstrap(["a", "b"], [])


def test_a_judge_that_always_ties_ranks_every_model_equal():
    ties = [(f"i{k}", a, b, 0.5) for k in range(6) for a, b in (("x", "y"), ("x", "z"), ("y", "z"))]
    fit = BT.bootstrap(["x", "y", "z"], ties, n_boot=20)
    assert np.allclose(fit["theta"], 0.0) and list(fit["rank"]) == [1, 1, 1] and fit["same_order"] == 1.0
