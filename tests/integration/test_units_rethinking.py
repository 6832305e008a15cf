"""Chapter 06's run as units against the stand-in server (models under test and rubric judge) on the bundled
samples: the records at server concurrency 1 equal those at 64, at 64 the units' batches overlap on the
server, and a request that fails for good fails only its unit, which alone is asked again by the next run."""
import json

import pytest

from creval.core.ledger import LEDGER
from creval.core.units import UnitsFailed
from creval.models.standin import StandIn
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.run import run

pytestmark = pytest.mark.integration


@pytest.fixture
def samples_only(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    for v in ("CREVAL_MACGYVER_DIR", "CREVAL_TTCW_DIR", "CREVAL_AUT_DIR", "CREVAL_MSRP_DIR", "CREVAL_LAMP_DIR",
              "CREVAL_CONFEDERACY_DIR"):
        monkeypatch.delenv(v, raising=False)


def config(tmp_path, root: str, s: StandIn, concurrency: int, tag: str, **extra) -> RethinkingConfig:
    a, b, j = (s.spec_file(tmp_path, n, concurrency, tag, **extra) for n in ("lm-a", "lm-b", "judge"))
    return RethinkingConfig(run_root=str(tmp_path / root), model=a, models=(b,), judge_model=j, n_boot=20,
                            rethink_ps_per_class=3, rethink_human_llm_problems=2, rethink_ci_sweep_max=8,
                            rethink_template_n_sweep=(4, 5), rethink_ttcw_stories=4, rethink_aut_ratings=6,
                            rethink_paraphrase_pairs=2, rethink_judge_items=1, rethink_ttcw_judge_stories=1,
                            rethink_judge_tokens=16, rethink_twist_items=2, rethink_rerun_items=1, rethink_reruns=2,
                            rethink_ppl_items=2, rethink_ppl_max_words=30)


def tables(root) -> dict:
    """Every table of a run folder, each row as JSON text (NaN compares equal to NaN)."""
    return {p.stem: [json.dumps(json.loads(x), sort_keys=True) for x in p.read_text().splitlines()]
            for p in sorted(root.glob("*.jsonl")) if p.stem != "calls"}


def units_of(root, name="calls") -> dict:
    return {json.loads(x)["unit"]: json.loads(x) for x in (root / "units" / f"{name}.jsonl").read_text().splitlines()}


def test_width_1_equals_64_and_overlaps(tmp_path, samples_only):
    with StandIn(latency=0.05, capacity=64) as s:
        narrow = run(config(tmp_path, "w1", s, 1, "w1"))
        assert s.stats["peak_in_flight"] == 1
        s.reset()
        wide = run(config(tmp_path, "w64", s, 64, "w64"))
        stats = s.stats
    a, b = tables(narrow), tables(wide)
    assert {"perplexity", "judge", "twist", "rerun", "templates", "example", "measures_ps"} <= set(a)
    # per model: 12 texts of the labelled sets, every LAMP sample text (6 instructions x 3) and 12 Confederacy stories
    assert len(a["perplexity"]) == 2 * (12 + 18 + 12) and len(a["judge"]) == 2 + 1      # ps: 1 per class; ttcw: 1
    assert len(a["lamp_judge"]) == 6 * 2                     # each LAMP sample item's two edits, both orders
    assert a == b
    assert len(units_of(wide)) >= 8 and stats["requests"] == 97 + 2 * 30 + 2 * 12    # + LAMP/Confederacy, judge
    assert stats["peak_in_flight"] > 1, stats           # requests overlapped (how many at once is the machine's)


def test_a_request_failing_for_good_fails_its_unit_alone(tmp_path, samples_only):
    marker = "Read this movie plot summary"       # the creative-writing rubric's analysis prompt: judge/ttcw only
    retry = {"max_retries": 1, "retry_backoff": 0.01}
    with StandIn(latency=0.05, capacity=64, fail=marker) as s:
        cfg = config(tmp_path, "runs", s, 64, "f", **retry)
        with pytest.raises(UnitsFailed, match="1 of .* units of calls failed .*judge/ttcw"):
            run(cfg)
    kept = units_of(cfg.run_dir)
    assert "judge/ttcw" not in kept and {"judge/ps", "twist", "rerun", "perplexity/lm-a/ttcw/0"} <= set(kept)
    with StandIn(latency=0.05, capacity=64) as healthy:
        cfg = config(tmp_path, "runs", healthy, 64, "f", **retry)
        with LEDGER.collect() as t:
            run(cfg)
        made = healthy.stats["requests"]
    assert set(units_of(cfg.run_dir)) - set(kept) == {"judge/ttcw"}
    assert made == len(t.made) == units_of(cfg.run_dir)["judge/ttcw"]["usage"]["calls_made"] > 0
    assert {r.kind for r in t.made} == {"chat"}
