"""The alternative annotator test (Calderon et al. 2025) on raters of known quality: a judge as good as the mean of
the people replaces them, a judge that scores noise does not, and the BY adjustment by hand."""
import numpy as np

from creval.measures.stats import alttest as A
from creval.measures.stats import multiple as M


def _people(rng, n=200, k=5, noise=1.0):
    q = rng.normal(size=n)
    return q, np.column_stack([q + noise * rng.normal(size=n) for _ in range(k)])


def test_a_judge_close_to_the_truth_passes_and_noise_does_not():
    rng = np.random.default_rng(0)
    q, people = _people(rng)
    good = A.alt_test(q + 0.2 * rng.normal(size=len(q)), people, epsilon=0.2)
    bad = A.alt_test(rng.normal(size=len(q)) * 2, people, epsilon=0.2)
    assert good["passes"] and good["winning_rate"] >= 0.8 and good["advantage"] > 0.6
    assert not bad["passes"] and bad["winning_rate"] == 0 and bad["advantage"] < 0.4
    assert len(good["people"]) == 5 and all(p["n"] == 200 for p in good["people"])


def test_a_judge_that_is_one_more_person_passes_at_the_margin_rarely_without_it():
    wins = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        q, people = _people(rng, n=400)
        like = q + rng.normal(size=len(q))           # exactly as noisy as each person
        wins.append((A.alt_test(like, people, epsilon=0.2)["passes"], A.alt_test(like, people, epsilon=0.0)["passes"]))
    assert sum(w for w, _ in wins) >= 8              # a margin of 0.2 lets an equal replace a person
    assert sum(z for _, z in wins) <= 2              # with no margin an equal wins only by chance


def test_benjamini_yekutieli_by_hand():
    p = [0.01, 0.04, 0.03, float("nan")]
    c = 1 + 1 / 2 + 1 / 3
    bh = M.bh(p)
    assert np.allclose(M.by(p)[:3], [min(1, b * c) for b in bh[:3]]) and np.isnan(M.by(p)[3])
