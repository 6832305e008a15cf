"""Denial prompting with a real small model on the bundled sample problem, then a warm rerun that calls no model
and executes nothing."""
import pytest

from creval.core.ledger import LEDGER
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.run import denial_run, replay

pytestmark = pytest.mark.integration


def test_live_denial_and_warm_rerun(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    cfg = NeoCoderConfig(run_root=str(tmp_path / "runs"), neocoder_model="smollm2-135m", neocoder_live_problems=1,
                         neocoder_rounds=1, neocoder_max_tokens=24)
    recs = denial_run(cfg)
    assert [r.round for r in recs] == [0, 1]
    assert all(r.output_tokens > 0 and r.verdict_strict["verdict"] for r in recs)
    assert len(replay(cfg)) == 18                       # 3 sample problems x 6 rounds
    mark = LEDGER.mark()
    again = denial_run(cfg)
    assert [r.reply for r in again] == [r.reply for r in recs]
    replay(cfg)
    assert LEDGER.since(mark) == []                    # no call at all, not even a cached one
