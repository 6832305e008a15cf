"""Chapter 03's run as units against the stand-in server (the judge model; the solutions judged are given) on
the bundled MacGyver sample: the records at server concurrency 1 equal those at 64, at 64 the units overlap on
the server, and a request that fails for good fails only its unit, which alone is asked again by the next run."""
import json
from types import SimpleNamespace

import pandas as pd
import pytest

from creval.core.ledger import LEDGER
from creval.core.units import UnitsFailed
from creval.models.standin import StandIn
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.convergent.run import run

pytestmark = pytest.mark.integration

MARKER = "a bent paper clip as a hook"


def solutions(marked: int | None = None) -> pd.DataFrame:
    """Chapter 02's solutions as the study reads them: two MacGyver problems (``marked``: the one whose
    solution carries the stand-in's failure marker)."""
    return pd.DataFrame([{"problem_id": f"macgyver-{i}", "domain": "macgyver", "model": "standin",
                          "problem_text": f"Problem {i}: the jar will not open; items: a towel, a spoon, a paper clip.",
                          "solution": f"Step 1: grip the lid with the towel and turn {i} times."
                                      + (f" Step 2: use {MARKER}." if i == marked else ""),
                          "mean_semantic_entropy": 0.5 * i} for i in (1, 2)])


@pytest.fixture
def world(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CREVAL_MACGYVER_DIR", raising=False)
    import creval.studies.convergent.run as convergent
    given = SimpleNamespace(problems=solutions())
    monkeypatch.setattr(convergent, "upstream_records", lambda cfg: {"divergent": given})
    return given


def config(tmp_path, root: str, s: StandIn, concurrency: int, tag: str, **extra) -> ConvergentConfig:
    """3 judges x 3 labelled pairs (9 units; the retrieval judge's go on with 2 thresholds) and 2 solutions;
    ``tag`` changes the judge's identity alone (fresh cache entries, the same records)."""
    path = tmp_path / f"standin-{tag}.yaml"
    path.write_text(s.spec_yaml("standin", concurrency, tag=tag, **extra))
    return ConvergentConfig.from_params(dict(
        run_root=str(tmp_path / root), model=str(path), judge_model=str(path), divergent_domains=["macgyver"],
        divergent_limit=2, convergent_judges=["zero-shot", "chateval", "retrieval"], convergent_human_pairs=3,
        convergent_confidence_thresholds=[0.5, 0.7], convergent_judge_word_limit=30))


def tables(root) -> dict:
    """Every table of a run folder, each row as JSON text."""
    return {p.stem: [json.dumps(json.loads(x), sort_keys=True) for x in p.read_text().splitlines()]
            for p in sorted(root.glob("*.jsonl")) if p.stem != "calls"}


def units_of(root, name: str) -> dict:
    return {json.loads(x)["unit"]: json.loads(x) for x in (root / "units" / f"{name}.jsonl").read_text().splitlines()}


def test_width_1_equals_64_and_overlaps(tmp_path, world):
    with StandIn(latency=0.05, capacity=64) as s:
        narrow = run(config(tmp_path, "w1", s, 1, "w1"))
        assert s.stats["peak_in_flight"] == 1
    with StandIn(latency=0.05, capacity=64) as s:      # its own server: one in-flight budget per endpoint
        wide = run(config(tmp_path, "w64", s, 64, "w64"))
        stats = s.stats
    a, b = tables(narrow), tables(wide)
    assert len(a["bench_verdicts"]) == 2 * 3 and len(a["human_verdicts"]) == 3 * 3 * 2 and len(a["sweep"]) == 2 * 3 * 2
    assert a == b
    n = len(units_of(wide, "judged"))
    assert n == 11 and stats["peak_in_flight"] > 1, stats     # requests overlapped (an average is the machine's)


def test_a_request_failing_for_good_fails_its_unit_alone(tmp_path, world):
    world.problems = solutions(marked=2)
    retry = {"max_retries": 1, "retry_backoff": 0.01}
    failing = "bench/standin/macgyver/macgyver-2::standin"
    with StandIn(latency=0.05, capacity=64, fail=MARKER) as s:
        cfg = config(tmp_path, "runs", s, 64, "f", **retry)
        with pytest.raises(UnitsFailed, match=f"1 of 11 units of judged failed .*{failing}"):
            run(cfg)
    kept = units_of(cfg.run_dir, "judged")
    assert len(kept) == 10 and failing not in kept
    with StandIn(latency=0.05, capacity=64) as healthy:
        cfg = config(tmp_path, "runs", healthy, 64, "f", **retry)
        with LEDGER.collect() as t:
            run(cfg)
        made = healthy.stats["requests"]
    chat = [r for r in t.made if r.kind == "chat"]
    assert set(units_of(cfg.run_dir, "judged")) - set(kept) == {failing}
    assert made == len(chat) > 0 and {r.tags["pair"] for r in chat} == {"macgyver-2::standin"}


def test_creval_judge_runs_one_unit_per_pair_together(tmp_path, world):
    """``creval judge FILE``: its pairs are units run together (resumable: a rerun calls nothing)."""
    from creval.cli import build_parser
    f = tmp_path / "mine.jsonl"
    f.write_text("".join(json.dumps({"pair_id": f"p{i}", "problem": f"Reach shelf {i}.",
                                     "solution": "Stand on a crate."}) + "\n" for i in range(8)))
    with StandIn(latency=0.05, capacity=64) as s:
        path = tmp_path / "standin.yaml"
        path.write_text(s.spec_yaml("standin", 64))
        args = build_parser().parse_args(["judge", str(f), "--out", str(tmp_path / "out"), "--method", "chateval",
                                          "--judge-model", str(path)])
        assert args.func(args) == 0
        # per pair and criterion: 2 rounds x 3 analysts, then 3 verdicts
        assert s.stats["peak_in_flight"] > 1 and s.stats["requests"] == 8 * 3 * (2 * 3 + 3)
        with LEDGER.collect() as t:
            args.func(args)
    assert len(units_of(tmp_path / "out", "pairs")) == 8 and t.made == []
    verdicts = [json.loads(x) for x in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()]
    assert [v["pair_id"] for v in verdicts] == [f"p{i}" for i in range(8) for _ in range(3)]
