"""Chapter 03's run with a scripted judge model (real call cache, ledger, ChromaDB, MiniLM) on fixture solutions
and the bundled MacGyver sample: every table the report reads is written, a rerun of an unfinished folder
makes no new call, and the report reads the records with no model at all."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pandas as pd
import pytest

from creval.core.ledger import LEDGER
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.records import ChoiceScores, Completion
from creval.models.spec import ModelSpec
from creval.studies.convergent import STUDY, report
from creval.studies.convergent import run as convergent_run
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.registry import upstream_configs


class Scripted(BackendBase):
    """Answers every judge prompt in format; the analysts' certainties average 0.6 (so T=0.5 stops after one
    round, T=0.7 does not)."""
    LOGPROB_KIND = "server"            # certainties are written as text

    def __init__(self, name="scripted"):
        self.spec = ModelSpec(name=name, backend="openai", model=name)
        self.calls = 0

    def _reply(self, text):
        if "Write short, separate insights" in text:
            return "[[POINT]] the item can hold the load [[POINT]] the plan uses only the listed items"
        if "in three labelled parts" in text:
            return "[[ANSWERS]] none [[OPINION]] the plan looks workable [[QUESTIONS]] To Problem Analyst: why?"
        if "How sure are you" in text:
            who = re.search(r"You are the (\w+ analyst)", text).group(1)
            return f"[[{ {'problem analyst': 0.9, 'solution analyst': 0.6}.get(who, 0.3):.1f}]]"
        if "final, strict but fair decision" in text or "The discussion is over" in text:
            return "[[YES]] ([0.8])"
        if "Your turn" in text:
            return "I think it works."
        return "[[NO]] ([0.3])"

    def chat(self, reqs):
        self.calls += len(reqs)
        return [Completion(self._reply("\n".join(m["content"] for m in r.messages)), 20, 5) for r in reqs]

    def choice_logprobs(self, reqs):
        return [ChoiceScores({"[[YES]]": -0.2, "[[NO]]": -1.8}, 5) for _ in reqs]

    def count_tokens(self, t):
        return len(t.split())


SOLUTIONS = pd.DataFrame([
    {"problem_id": f"macgyver-{i}", "domain": "macgyver", "model": "fake-a",
     "problem_text": f"Problem {i}: open a jar.",
     "solution": "Step 1: wrap the lid in the rubber band.", "mean_semantic_entropy": 0.5 * i} for i in (1, 2)])


@pytest.fixture
def world(tmp_path, monkeypatch):
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "CREVAL_HOME": str(tmp_path / "home"),
                 "CREVAL_CACHE": str(tmp_path / "cache.sqlite")}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CREVAL_MACGYVER_DIR", raising=False)
    backend = Scripted()
    import creval.models.registry as registry
    import creval.models.width as units
    monkeypatch.setattr(registry, "load_model",
                        lambda name, cache=None: Model(backend if name == "scripted" else Scripted(name)))
    monkeypatch.setattr(units, "width", lambda *models: 4)     # units in threads, as against a server
    read = []
    monkeypatch.setattr(convergent_run, "upstream_records", lambda cfg: read.append(upstream_configs(cfg)["divergent"])
                        or {"divergent": SimpleNamespace(problems=SOLUTIONS)})
    cfg = ConvergentConfig.from_params(dict(
        run_root=str(tmp_path / "runs"), model="fake-a", judge_model="scripted", domains=["macgyver"], limit=2,
        judges=["zero-shot", "retrieval"], human_pairs=3, confidence_thresholds=[0.5, 0.7], judge_word_limit=30,
        bench_judge="zero-shot", judge_verdict_via="text"))
    return SimpleNamespace(cfg=cfg, backend=backend, read=read)


def test_run_writes_every_table_the_report_reads(world):
    cfg = world.cfg
    recs = STUDY.records(cfg)
    assert world.read == [cfg.divergent()]                   # chapter 02's records, read with their own config
    assert recs.manifest["complete"] and set(recs.manifest["models"]) == {"scripted", "fake-a"}

    bench = recs.bench_verdicts                               # 2 solutions x 3 MacGyver criteria, zero-shot
    assert len(bench) == 6 and set(bench.model) == {"fake-a"} and set(bench.judge) == {"zero-shot"}
    assert (bench.verdict == False).all() and sorted(set(bench.mean_semantic_entropy)) == [0.5, 1.0]  # noqa: E712
    units = (cfg.run_dir / "units" / "judged.jsonl").read_text().splitlines()
    assert len(units) == 2 * 3 + 2                            # judges x labelled pairs, solutions

    pairs = recs.human_pairs
    labels = {(p, c): v for p, lab in zip(pairs.pair_id, pairs.labels) for c, v in lab.items()}
    hv = recs.human_verdicts                                  # 3 pairs x 2 labelled criteria x 2 judges
    assert len(hv) == 12 and list(dict.fromkeys(hv.judge)) == ["zero-shot", "retrieval"]
    assert all(lab == labels[(p, c.lower())] for p, c, lab in zip(hv.pair_id, hv.criterion, hv.label))
    assert set(recs.transcripts.judge) == {"zero-shot", "retrieval"} and len(recs.transcripts) == 12
    assert "bundled hand-written sample" in report.labels_source(recs)

    sweep, calls = recs.sweep, recs.sweep_calls
    assert sorted(set(sweep["T"])) == [0.5, 0.7] and len(sweep) == 12
    assert set(sweep[sweep["T"] == 0.5].rounds) == {1} and set(sweep[sweep["T"] == 0.7].rounds) == {2}
    c = calls.set_index("T")
    # T=0.5 is the human retrieval run's setting: every call cached; T=0.7 reuses its first round
    assert c.loc[0.5, "calls_made"] == 0 and c.loc[0.5, "calls_cached"] > 0
    assert 0 < c.loc[0.7, "calls_made"] and c.loc[0.7, "calls_cached"] > 0 and (c.pairs == 3).all()

    t = report.threshold_table(recs).set_index("T")
    assert t.loc[0.5, "mean rounds"] == 1.0 and t.loc[0.7, "mean rounds"] == 2.0
    assert t.loc[0.7, "tokens per pair"] > t.loc[0.5, "tokens per pair"] > 0
    a = report.agreement_table(recs).set_index(["judge", "criterion"])
    assert a.loc[("zero-shot", "all"), "n"] == 6 and a.loc[("retrieval", "all"), "coverage"] == 1.0


def test_an_unfinished_run_resumes_without_new_calls(world):
    cfg = world.cfg
    convergent_run.run(cfg)
    made = world.backend.calls
    m = cfg.run_dir / "manifest.json"
    m.write_text(m.read_text().replace('"complete": true', '"complete": false'))
    (cfg.run_dir / "human_verdicts.jsonl").unlink()           # as if killed before the table was written
    with LEDGER.collect() as t:
        recs = STUDY.records(cfg)
    assert world.backend.calls == made and [r for r in t.records if r.kind == "chat"] == []
    assert len(recs.human_verdicts) == 12 and recs.manifest["complete"]
