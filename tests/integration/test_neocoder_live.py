"""The NeoCoder study on the bundled sample with a real small model: the replay, the live denial run and the
detector check into one run folder; a finished folder is read back with no call at all; an interrupted run
resumes to the same records."""
import json

import pytest

from creval.core.ledger import LEDGER
from creval.studies.neocoder import STUDY
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.run import run

pytestmark = pytest.mark.integration


def _table(root, name):
    return [json.loads(line) for line in (root / f"{name}.jsonl").read_text().splitlines()]


def test_live_denial_replay_and_resume(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    cfg = NeoCoderConfig(run_root=str(tmp_path / "runs"), model="smollm2-135m", neocoder_live_problems=1,
                         neocoder_rounds=1, neocoder_max_tokens=24)
    recs = STUDY.records(cfg)
    rounds = recs.rows("rounds")
    assert [r["round"] for r in rounds] == [0, 1] and {r["model"] for r in rounds} == {"smollm2-135m"}
    assert all(r["output_tokens"] > 0 and r["verdict_strict"]["verdict"] for r in rounds)
    assert len(recs.rows("codes")) == 18                       # 3 sample problems x 6 rounds
    assert len(recs.rows("problems")) == 3 and recs.rows("data_source")[0]["sample"] is True
    assert "smollm2-135m" in recs.manifest["models"] and recs.manifest["complete"]

    with LEDGER.collect() as t:
        again = STUDY.records(cfg)
    assert [r["reply"] for r in again.rows("rounds")] == [r["reply"] for r in rounds]
    assert t.records == []                             # a finished folder: no call at all, not even a cached one

    # interrupted: the manifest not finished, the last problem's codes and the live rounds cut off (the units
    # that made them are kept: the tables are written again from them)
    root = recs.root
    m = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**m, "complete": False}))
    codes = _table(root, "codes")
    (root / "codes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in codes[:-3]))
    (root / "rounds.jsonl").write_text("")
    run(cfg)
    assert _table(root, "codes") == codes
    assert [r["reply"] for r in _table(root, "rounds")] == [r["reply"] for r in rounds]
