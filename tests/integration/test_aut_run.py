"""The AUT agreement run end to end on the embedded model: records, states, and a warm rerun with no call."""
import pytest

from creval.core.ledger import LEDGER
from creval.studies.aut import STUDY, report
from creval.studies.aut.config import AutConfig

pytestmark = pytest.mark.integration


def test_tiny_run_records_every_state_and_rebuilds_warm_without_calls(tmp_path):
    cfg = AutConfig(run_root=str(tmp_path), aut_things=("fork",), aut_per_level=1, aut_forceful_turns=1,
                    aut_gen_max_tokens=32, aut_retries=1, aut_settings=("segmented",), aut_items=4,
                    aut_cambridge_items=0,
                    aut_objects=1, aut_human_list=4, n_boot=50)
    r = STUDY.records(cfg)
    u, j = r["uses"], r["judgments"]
    assert set(u["level"]) <= {"common", "creative", "highly_creative"} and len(u) >= 1
    assert set(j["parse_path"]) <= {"text", "text-retry", "logprobs", "imputed", "unparsed"}
    assert (j["value"].isna() == (j["parse_path"] == "unparsed")).all()      # never a silent default
    assert set(j["order"]) == {"forward", "reverse"}
    assert len(report.table_agreement(r)) >= 1
    import shutil
    assert r.root == cfg.run_dir and r.manifest["complete"] and "semdis" in u
    with LEDGER.collect() as t:
        assert STUDY.records(cfg)["judgments"].shape == j.shape
    assert t.records == []                         # finished: read, no call
    shutil.rmtree(cfg.run_dir)                     # recomputed from the call cache: every call a hit
    with LEDGER.collect() as t:
        again = STUDY.records(cfg)
    assert t.records and t.made == []
    assert again["judgments"]["value"].fillna(-1).tolist() == j["value"].fillna(-1).tolist()
