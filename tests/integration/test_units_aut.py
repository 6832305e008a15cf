"""The AUT run as units against the stand-in server (model and judge): the same records at width 1 and 64,
requests in flight together at 64, and a list that fails for good fails only its own unit."""
import pytest

from creval.core.io import read_jsonl
from creval.core.ledger import LEDGER
from creval.core.units import UnitsFailed
from creval.models.standin import StandIn
from creval.studies.aut import STUDY
from creval.studies.aut.config import AutConfig

pytestmark = pytest.mark.integration

TABLES = ("uses", "turns", "judgments", "human")
SMALL = dict(aut_things=("fork", "paperclip", "soap"), aut_per_level=2, aut_forceful_turns=1, aut_retries=1,
             aut_items=4, aut_cambridge_items=0, aut_objects=1, aut_human_list=4, aut_baselines_full=False, n_boot=20)


def _spec(tmp_path, server: StandIn, concurrency: int, **extra) -> None:
    """The spec file, at one path: the model's name in the records stays the same."""
    (tmp_path / "standin.yaml").write_text(server.spec_yaml("standin", concurrency, **extra))


def _cfg(tmp_path, name: str, **params) -> AutConfig:
    spec = str(tmp_path / "standin.yaml")
    return AutConfig(run_root=str(tmp_path / name), model=spec, judge_model=spec, **{**SMALL, **params})


def _run(tmp_path, monkeypatch, server: StandIn, concurrency: int, name: str, extra: dict | None = None, **params):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / f"{name}.sqlite"))     # a run of its own really calls
    _spec(tmp_path, server, concurrency, **(extra or {}))
    cfg = _cfg(tmp_path, name, **params)
    return cfg, STUDY.records(cfg)


def test_same_records_at_width_1_and_64_and_requests_overlap(tmp_path, monkeypatch):
    with StandIn(latency=0.05, capacity=64) as s:
        _, one = _run(tmp_path, monkeypatch, s, 1, "w1")
        assert s.stats["peak_in_flight"] == 1
        s.reset()
        cfg, wide = _run(tmp_path, monkeypatch, s, 64, "w64")
        stats = s.stats
    for t in TABLES:
        assert one.rows(t) == wide.rows(t), t
    n_units = sum(len(read_jsonl(cfg.run_dir / "units" / f"{n}.jsonl")) for n in ("generate", "judge"))
    assert n_units >= 8 and len(wide.rows("judgments")) and len(wide.rows("human"))
    assert stats["peak_in_flight"] > 1, stats


def test_a_list_failing_for_good_fails_only_its_unit(tmp_path, monkeypatch):
    marker = 'for the object \\"soap\\"'             # in the prompt of soap's one list only (json-escaped)
    params = dict(aut_settings=("comprehensive",), aut_methods=("score",))
    with StandIn(latency=0.05, capacity=64, fail=marker) as bad:
        with pytest.raises(UnitsFailed):
            _run(tmp_path, monkeypatch, bad, 8, "fail", {"max_retries": 1, "retry_backoff": 0.01}, **params)
        assert bad.stats["failed"] >= 1
    cfg = _cfg(tmp_path, "fail", **params)
    folder = cfg.run_dir / "units"
    assert [r["unit"] for r in read_jsonl(folder / "judge.failed.jsonl")] == [f"judge|{cfg.judge_model}|soap|"
                                                                                "comprehensive|0|score|forward"]
    kept = [r["unit"] for r in read_jsonl(folder / "judge.jsonl")]
    assert len(kept) == 2 and not any("soap" in k for k in kept)
    assert len(read_jsonl(folder / "generate.jsonl")) == 9 + 4 + 3           # generation, pointwise, human lists
    with StandIn(latency=0.05, capacity=64) as good, LEDGER.collect() as t:
        _run(tmp_path, monkeypatch, good, 8, "fail", **params)
        served = good.stats["requests"]
    made = [r for r in t.made if r.kind in ("chat", "choice")]
    assert len(made) == served                      # the rerun: soap's list, its re-ask, its 6 uses' fallbacks
    chats = [r for r in made if r.kind == "chat"]
    assert chats and all(r.tags.get("object") == "soap" and r.tags.get("setting") == "comprehensive" for r in chats)
    assert len(made) - len(chats) <= 6
