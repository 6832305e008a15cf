"""Records flow forward: a downstream study reads the divergent study's run folder (never reruns it), and
the run id follows the identity parameters (real SmolLM2, tiny sizes)."""
import pytest

from creval.core.ledger import LEDGER
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent import STUDY
from creval.studies.divergent.config import DivergentConfig
from creval.studies.validation.config import ValidationConfig

pytestmark = pytest.mark.integration


def test_downstream_reads_upstream_records_and_runs_only_what_is_missing(tmp_path, fresh_cache):
    cfg = DivergentConfig(run_root=str(tmp_path / "runs"), divergent_domains=("macgyver",), divergent_limit=1,
                          divergent_n_samples=3,
                          divergent_max_steps=2, divergent_max_step_tokens=12, divergent_temperatures=(1.0,),
                          divergent_nli_eval_pairs=2)
    with LEDGER.collect() as t:
        recs = STUDY.records(cfg)
    steps, probs = recs.steps, recs.problems
    assert len(probs) == 1 and len(t.made) > 0
    first = probs["problem_id"].iloc[0]

    # chapter 03 and 04 configs built from the same flat parameters name the same folder: no call at all
    params = cfg.to_params()
    for downstream in (ConvergentConfig.from_params(params), ValidationConfig.from_params(params)):
        assert downstream.divergent().run_dir == cfg.run_dir
        with LEDGER.collect() as t:
            again = STUDY.records(downstream.divergent())
        assert t.records == [] and again.problems["problem_id"].tolist() == [first]
        assert len(again.steps) == len(steps)

    # a larger limit is another experiment (another folder); the first problem comes from the call cache
    bigger = DivergentConfig.from_params({**params, "divergent_limit": 2})
    assert bigger.run_dir != cfg.run_dir
    with LEDGER.collect() as t:
        r2 = STUDY.records(bigger)
    assert len(r2.problems) == 2 and r2.problems["problem_id"].iloc[0] == first and t.made
    s2 = r2.steps
    assert s2[s2["problem_id"] == first]["semantic_entropy"].tolist() == steps["semantic_entropy"].tolist()
    with LEDGER.collect() as t:
        STUDY.records(bigger)
    assert t.records == []
    assert sorted(p.name for p in (tmp_path / "runs" / "divergent").iterdir()) == sorted([cfg.run_id, bigger.run_id])
