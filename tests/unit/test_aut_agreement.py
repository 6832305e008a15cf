"""The paper's agreement metric (Rabeyah et al. 2024) and the finer AUT measures, on hand-computed values."""
import math

import numpy as np
import pandas as pd
import pytest

from creval.measures import aut_agreement as A

ORACLE = [3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1]


def test_paper_src_matches_the_papers_multiples_of_an_eighth():
    assert A.paper_src(ORACLE, ORACLE) == pytest.approx(1.0)
    one_swap = [3, 3, 3, 2, 3, 2, 2, 2, 1, 1, 1, 1]           # one adjacent hc/c swap -> .875 (printed .87)
    assert A.paper_src(one_swap, ORACLE) == pytest.approx(0.875)
    two_swaps = [3, 3, 3, 2, 3, 2, 2, 1, 2, 1, 1, 1]          # and a c/common swap -> .75
    assert A.paper_src(two_swaps, ORACLE) == pytest.approx(0.75)
    hc_common = [3, 3, 3, 1, 2, 2, 2, 2, 3, 1, 1, 1]          # an hc cell swapped with a common cell -> .5
    assert A.paper_src(hc_common, ORACLE) == pytest.approx(0.5)
    # plain Spearman on the label sequences (what the paper ran): same numbers
    from scipy.stats import spearmanr
    for s in (one_swap, two_swaps, hc_common):
        assert A.paper_src(s, ORACLE) == pytest.approx(spearmanr(s, ORACLE).statistic)


def test_table2_object_average_from_the_per_object_values():
    # comprehensive scoring, oracle-Claude: fork 1, wallet 1, soap 1, cotton swab 1, paperclip .875 -> .975 (.97)
    per_object = [1.0, 1.0, 1.0, 1.0, A.paper_src([3, 3, 3, 2, 3, 2, 2, 2, 1, 1, 1, 1], ORACLE)]
    assert np.mean(per_object) == pytest.approx(0.975)


def test_ties_are_the_expectation_over_random_tie_breaking():
    # the 4th and 5th cells tied (one hc, one c): half the time right (1), half one swap (.875)
    blocks = [[3], [3], [3], [3, 2], [2], [2], [2], [1], [1], [1], [1]]
    assert A.paper_src(blocks, ORACLE) == pytest.approx((1 + 0.875) / 2)
    # every cell tied: no information, 0 (not a spurious 1)
    assert A.paper_src([ORACLE], ORACLE) == pytest.approx(0.0)
    # all labels equal: undefined
    assert math.isnan(A.paper_src([2, 2, 2], [2, 2, 2]))
    with pytest.raises(ValueError):
        A.paper_src([3, 2, 1], [3, 3, 1])


def test_label_blocks_from_cell_means_and_judge_vs_judge_ignores_generators():
    labels = {("a", "hc"): 3, ("b", "hc"): 3, ("a", "c"): 2, ("b", "c"): 2, ("a", "n"): 1, ("b", "n"): 1}
    j1 = {("a", "hc"): 4.8, ("b", "hc"): 4.0, ("a", "c"): 3.0, ("b", "c"): 3.0, ("a", "n"): 1.0, ("b", "n"): 1.2}
    assert A.label_blocks(j1, labels) == [[3], [3], [2, 2], [1], [1]]
    assert A.oracle_src(j1, labels) == pytest.approx(1.0)
    j2 = {**j1, ("a", "hc"): 3.9, ("b", "hc"): 4.5}       # generators swapped within a level: still 1
    assert A.judge_src(j1, j2, labels) == pytest.approx(1.0)
    assert A.cell_rho(j1, j2) < 1.0                        # the finer measure sees the swap
    j3 = {**j1, ("b", "hc"): 2.0}                          # b's hc cell drops below both creative cells
    # sequence 3, 2, 2, 3, 1, 1 vs 3, 3, 2, 2, 1, 1: ranks (5.5, 3.5, 3.5, 5.5, 1.5, 1.5)
    x = np.array([5.5, 3.5, 3.5, 5.5, 1.5, 1.5])
    o = np.array([5.5, 5.5, 3.5, 3.5, 1.5, 1.5])
    want = ((x - x.mean()) * (o - o.mean())).sum() / ((o - o.mean()) ** 2).sum()
    assert A.oracle_src(j3, labels) == pytest.approx(want) == pytest.approx(0.75)
    # a NaN cell (nothing parsed) goes to the end as one tied block
    j4 = {**j1, ("a", "hc"): float("nan")}
    assert A.label_blocks(j4, labels)[-1] == [3]


def test_pair_accuracy_counts_ties_as_half():
    assert A.pair_accuracy([3, 2, 1], [3, 2, 1]) == 1.0
    assert A.pair_accuracy([1, 2, 3], [3, 2, 1]) == 0.0
    assert A.pair_accuracy([2, 2, 1], [3, 2, 1]) == pytest.approx((0.5 + 1 + 1) / 3)
    assert math.isnan(A.pair_accuracy([1, 2], [2, 2]))


def test_rank_value_and_position_bias():
    assert A.rank_value(1, 5) == 1.0 and A.rank_value(5, 5) == 0.0 and A.rank_value(3, 5) == 0.5
    assert A.position_bias([0, 1, 2, 3], [1.0, 0.6, 0.3, 0.0]) == pytest.approx(-1.0)
    assert math.isnan(A.position_bias([0, 1, 2], [3, 3, 3]))


def _synthetic(bias: float, seed: int = 0) -> pd.DataFrame:
    """3 judges = 3 generators; value = quality + leniency (+ bias on own uses) + noise."""
    rng = np.random.default_rng(seed)
    rows = []
    len_ = {"a": 0.5, "b": -0.3, "c": 0.0}
    for obj in ("fork", "soap", "wallet", "clip", "swab"):
        for g in ("a", "b", "c"):
            for i in range(15):
                q = rng.normal(3, 1)
                for j in ("a", "b", "c"):
                    v = q + len_[j] + (bias if (j == g == "a") else 0.0) + rng.normal(0, 0.1)
                    rows.append({"object": obj, "au_id": f"{obj}-{g}-{i}", "generator": g, "judge": j, "value": v})
    return pd.DataFrame(rows)


def test_self_preference_finds_a_planted_bias_and_none_where_none_is_planted():
    sp = {r["judge"]: r for r in A.self_preference(_synthetic(1.0), n_boot=300)}
    # planted: a adds +1 to its own uses; the others' mean on them is unaffected -> sp_a = 1 (noise aside)
    assert sp["a"]["sp"] == pytest.approx(1.0, abs=0.1)
    assert sp["a"]["lo"] > 0.5
    # for b, a's inflated values lower d_b on a's uses by 1/2, i.e. d_b on "other" uses by 1/4: sp_b = +1/4
    assert sp["b"]["sp"] == pytest.approx(0.25, abs=0.1)
    none = {r["judge"]: r for r in A.self_preference(_synthetic(0.0), n_boot=300)}
    for j in ("a", "b", "c"):
        assert abs(none[j]["sp"]) < 0.06 and none[j]["lo"] < 0.06 and none[j]["hi"] > -0.06
    one = A.self_preference(_synthetic(0.0)[lambda d: d["judge"] == "a"], n_boot=10)
    assert math.isnan(one[0]["sp"]) and one[0]["note"]


def test_krippendorff_interval():
    assert A.krippendorff_interval([[1, 2, 3, 4], [1, 2, 3, 4]]) == pytest.approx(1.0)
    # hand value: two raters, units (1,2), (3,3), (5,4): D_o = (1+1 + 0 + 1+1)/(3 units*... ) computed below
    m = np.array([[1, 3, 5], [2, 3, 4]], float)
    vals = m.T.reshape(-1)
    n = vals.size
    do = sum(((u[:, None] - u[None, :]) ** 2).sum() / 1 for u in m.T) / n
    de = ((vals[:, None] - vals[None, :]) ** 2).sum() / (n * (n - 1))
    assert A.krippendorff_interval(m) == pytest.approx(1 - do / de)
