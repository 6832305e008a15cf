"""Records flow forward: a downstream study reads the divergent study's records, running only what is
missing, from folders named by the run's identity (real SmolLM2, tiny sizes)."""
import pytest

from creval.core.ledger import LEDGER
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.run import records, run_dir
from creval.studies.validation.config import ValidationConfig

pytestmark = pytest.mark.integration


def _made(mark):
    return [r for r in LEDGER.since(mark) if not r.cached]


def test_downstream_reads_upstream_records_and_runs_only_what_is_missing(tmp_path, fresh_cache):
    cfg = DivergentConfig(run_root=str(tmp_path / "runs"), domains=("macgyver",), limit=1, n_samples=3,
                          max_steps=2, max_step_tokens=12)
    mark = LEDGER.mark()
    steps, probs = records(cfg, progress=False)
    assert len(probs) == 1 and len(_made(mark)) > 0
    first = probs["problem_id"].iloc[0]

    # chapter 03 and 04 configs built from the same flat parameters read the same folder: no call at all
    params = cfg.to_params()
    for downstream in (ConvergentConfig.from_params(params), ValidationConfig.from_params(params)):
        assert run_dir(downstream, "smollm2-135m", "macgyver") == run_dir(cfg, "smollm2-135m", "macgyver")
        mark = LEDGER.mark()
        s2, p2 = records(downstream, progress=False)
        assert LEDGER.since(mark) == [] and p2["problem_id"].tolist() == [first] and len(s2) == len(steps)

    # a larger limit grows the same run: only the new problem is computed
    mark = LEDGER.mark()
    s3, p3 = records(cfg, limit=2, progress=False)
    assert len(p3) == 2 and p3["problem_id"].iloc[0] == first and _made(mark)
    assert s3[s3["problem_id"] == first]["semantic_entropy"].tolist() == steps["semantic_entropy"].tolist()
    mark = LEDGER.mark()
    records(cfg, limit=2, progress=False)
    assert LEDGER.since(mark) == []
    # a smaller limit returns the first problems of the data order, from the same folder
    assert records(cfg, limit=1, progress=False)[1]["problem_id"].tolist() == [first]
    folders = list((tmp_path / "runs" / "divergent" / "smollm2-135m" / "macgyver").iterdir())
    assert len(folders) == 1

    # other parameters sit side by side in their own folder
    records(cfg, n=2, progress=False)
    assert len(list((tmp_path / "runs" / "divergent" / "smollm2-135m" / "macgyver").iterdir())) == 2
