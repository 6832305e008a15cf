"""Chapter 05's live rounds as units against the stand-in server (model under test): the records at server
concurrency 1 equal those at 64, at 64 the live problems' chains overlap on the server, and a request that
fails for good fails only its unit, which alone is asked again by the next run."""
import json

import pytest

from creval.core.ledger import LEDGER
from creval.core.units import UnitsFailed
from creval.models.standin import StandIn
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.run import run

pytestmark = pytest.mark.integration
CODERS = ("coder-a", "coder-b", "coder-c", "coder-d")
TABLES = ("codes", "known_positives", "human_detections", "rounds")


@pytest.fixture
def sample_data(monkeypatch, fresh_cache):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")


def config(tmp_path, root: str, models: list[str]) -> NeoCoderConfig:
    return NeoCoderConfig(run_root=str(tmp_path / root), model=models[0], models=tuple(models[1:]),
                          neocoder_problems=1, neocoder_live_problems=2, neocoder_rounds=2, neocoder_max_tokens=64)


def tables(root) -> dict:
    """The run's tables, timing columns dropped."""
    out = {}
    for t in TABLES:
        rows = [json.loads(x) for x in (root / f"{t}.jsonl").read_text().splitlines()]
        out[t] = [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    return out


def test_width_1_equals_64_and_overlaps(tmp_path, sample_data):
    with StandIn(latency=0.05, capacity=64) as s:
        narrow = run(config(tmp_path, "w1", [s.spec_file(tmp_path, n, 1, "w1") for n in CODERS]))
        assert s.stats["peak_in_flight"] == 1
        s.reset()
        wide = run(config(tmp_path, "w64", [s.spec_file(tmp_path, n, 64, "w64") for n in CODERS]))
        stats = s.stats
    a, b = tables(narrow), tables(wide)
    assert len(a["rounds"]) == len(CODERS) * 2 * 3 and {r["model"] for r in a["rounds"]} == set(CODERS)
    assert a == b
    assert stats["requests"] == len(CODERS) * 2 * 3 and stats["peak_in_flight"] > 1, stats   # requests overlapped


def test_a_request_failing_for_good_fails_its_unit_alone(tmp_path, sample_data):
    marker = "Divides Or Not"                  # in neocoder-S2A's statement only
    retry = {"max_retries": 1, "retry_backoff": 0.01}
    with StandIn(latency=0.05, capacity=64, fail=marker) as s:
        cfg = config(tmp_path, "runs", [s.spec_file(tmp_path, "coder-a", 64, "f", **retry)])
        with pytest.raises(UnitsFailed, match="live/coder-a/neocoder-S2A"):
            run(cfg)
    done = [json.loads(x)["unit"] for x in (cfg.run_dir / "units" / "neocoder.jsonl").read_text().splitlines()]
    assert sorted(done) == ["human_detections", "known_positives", "live/coder-a/neocoder-S1A", "replay/0"]
    with StandIn(latency=0.05, capacity=64) as healthy:
        cfg = config(tmp_path, "runs", [healthy.spec_file(tmp_path, "coder-a", 64, "f", **retry)])
        with LEDGER.collect() as t:
            run(cfg)
        made = healthy.stats["requests"]
    chats = [r for r in t.records if r.kind == "chat"]
    assert made == len(chats) == 3 and all(not r.cached for r in chats)      # the failed unit's three rounds alone
    rounds = tables(cfg.run_dir)["rounds"]
    assert [(r["problem_id"], r["round"]) for r in rounds] == [(p, k) for p in ("neocoder-S2A", "neocoder-S1A")
                                                             for k in range(3)]
