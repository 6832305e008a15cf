"""The one home of ranks (issue 65): average ranks as scipy gives them, a standing where 1 is the best with ties on
the better rank, and the interval of a standing over replicates."""
import math

import numpy as np
from scipy.stats import rankdata

from creval.measures.stats.ranks import average_ranks, rank_bounds, standing


def test_average_ranks_are_scipys_and_a_column_with_a_nan_has_none():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(9, 3)).astype(float)
    assert np.array_equal(average_ranks(x), rankdata(x, axis=0))
    x[2, 1] = np.nan
    r = average_ranks(x)
    assert np.isnan(r[:, 1]).all() and np.array_equal(r[:, 0], rankdata(x[:, 0]))


def test_a_standing_puts_the_best_first_shares_ties_and_places_nans_as_asked():
    v = np.array([0.2, 0.9, 0.2, math.nan, 0.5])
    assert standing(v).tolist()[:3] == [3.0, 1.0, 3.0] and math.isnan(standing(v)[3])
    assert standing(v, nan_last=True).tolist() == [3.0, 1.0, 3.0, 5.0, 2.0]
    assert standing(v, higher_first=False).tolist()[:3] == [1.0, 4.0, 1.0]
    assert standing(np.array([1.0, 1.0 + 1e-12, 0.0]), tol=1e-9).tolist() == [1.0, 1.0, 3.0]


def test_rank_bounds_read_each_models_standing_over_replicates():
    reps = np.array([[1, 2], [1, 3], [2, 1], [1, np.nan]] * 10, float)
    lo, hi = rank_bounds(reps)
    assert (lo[0], hi[0]) == (1.0, 2.0) and (lo[1], hi[1]) == (1.0, 3.0)
    lo, hi = rank_bounds(np.full((5, 2), np.nan))
    assert np.isnan(lo).all() and np.isnan(hi).all()
