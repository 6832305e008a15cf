"""The comparison's estimate prices the pairwise judge (studies/compare/estimate.py)."""
import pytest

from creval.studies.compare.config import CompareConfig
from creval.studies.compare.estimate import estimate


@pytest.fixture
def fresh_clone(monkeypatch, tmp_path):
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "CREVAL_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(k, v)
    for k in ("CREVAL_MACGYVER_DIR", "CREVAL_TTCW_DIR"):
        monkeypatch.delenv(k, raising=False)


def test_the_estimate_prices_every_pair_in_both_orders(fresh_clone):
    est = estimate(CompareConfig(compare_pairwise_items=4, judge_model="smollm2-135m", compare_equivalence_steps=0))
    (phase,) = est.phases
    by = {p.what.split(":")[0]: p for p in phase.parts}
    # the sample: 8 MacGyver solvers (28 pairs) on 4 of their 5 shared problems; 3 TTCW writers on 3 plots
    assert by["pairwise judge (macgyver"].calls.lo == by["pairwise judge (macgyver"].calls.hi == 2 * 28 * 4
    assert by["pairwise judge (ttcw"].calls.hi == 2 * 3 * 3
    assert phase.units == 4 + 3 and all(p.role == "judge" and p.model == "smollm2-135m" for p in phase.parts)
    assert by["pairwise judge (macgyver"].prompt.lo > 100 * 2 * 28 * 4          # two answers and the task each
    clipped = estimate(CompareConfig(compare_pairwise_items=4, compare_pairwise_words=20,
                                     compare_equivalence_steps=0)).phases[0].parts[1]
    assert clipped.prompt.lo < by["pairwise judge (ttcw"].prompt.lo           # stories clipped to 20 words
    assert estimate(CompareConfig(compare_pairwise_items=0, compare_equivalence_steps=0)).phases == []


def test_the_estimate_prices_the_equivalence_judge(fresh_clone):
    est = estimate(CompareConfig.from_params({"compare_pairwise_items": 0, "compare_equivalence_steps": 2,
                                              "divergent_n_samples": 5}))
    (part,) = est.parts
    assert part.calls.lo == 2 * 4 and part.calls.hi == 2 * 10 and est.units == 2
