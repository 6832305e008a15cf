"""Requests through batch files (--batch-out / --batch-in) give the records of the same run made live."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from creval.core.deferral import batch_out
from creval.core.errors import CrevalError
from creval.core.units import Unit, WaveWritten, run_units
from creval.models.batchfile import read_in
from creval.models.registry import load_model
from creval.models.standin import StandIn

pytestmark = pytest.mark.integration
RUN_BATCH = Path(__file__).parents[1] / "run_batch.py"


def chain(m):
    """Each unit: three chat turns, each depending on the reply before it; a sample draw; a choice score."""
    def work(u):
        convo = [{"role": "user", "content": f"Problem {u.item}: how would you open a jar without tools?"}]
        for step in range(3):
            reply = m.chat(convo, max_tokens=40).text
            convo += [{"role": "assistant", "content": reply}, {"role": "user", "content": f"Step {step + 2}?"}]
        samples = m.sample(convo, 3, temperature=1.0, max_tokens=12, seed=u.item)
        lp = m.choice_logprobs(convo, ["[[YES]]", "[[NO]]"]).logprobs
        return {"t": [{"unit": u.key, "convo": [c["content"] for c in convo], "samples": [s.text for s in samples],
                       "lp": sorted(lp.items())}]}
    return work


def test_a_multi_wave_run_through_files_equals_the_live_run(tmp_path, monkeypatch):
    units = [Unit(f"u{i}", i) for i in range(6)]
    with StandIn(latency=0.01, capacity=64) as s:
        spec = tmp_path / "srv.yaml"
        spec.write_text(s.spec_yaml("srv", 16))
        monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "live.sqlite"))
        live = run_units(tmp_path / "live", "chain", units, chain(load_model(str(spec))), width=6, progress=False)
        monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "files.sqlite"))
        m = load_model(str(spec))
        s.reset()
        waves, answers = 0, None
        while True:
            if answers:
                got = read_in(answers)
                assert got.stored > 0 and not got.unknown and not got.failed
            stem = tmp_path / f"wave{waves}.jsonl"
            try:
                with batch_out(stem) as wave:
                    out = run_units(tmp_path / "files", "chain", units, chain(m), width=6, progress=False)
                break
            except WaveWritten:
                assert wave.written > 0 and s.stats["requests"] == 0          # nothing was sent live
            req = tmp_path / f"wave{waves}.standin.chat.jsonl"              # one model, one endpoint: one file
            assert sorted(tmp_path.glob(f"wave{waves}.*")) == [req]
            lines = [json.loads(x) for x in req.read_text().splitlines()]
            assert {ln["url"] for ln in lines} <= {"/v1/chat/completions"} and all("custom_id" in ln for ln in lines)
            answers = tmp_path / f"answers{waves}.jsonl"
            subprocess.run([sys.executable, str(RUN_BATCH), "-i", str(req), "-o", str(answers),
                            "--url", s.url.removesuffix("/v1")], check=True)
            s.reset()
            waves += 1
    assert waves == 5                                  # three chained turns, the samples, the choice scores
    assert out == live


def test_bad_and_foreign_answers_are_named_or_ignored_and_nothing_is_overwritten(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with StandIn(latency=0.01, capacity=8) as s:
        spec = tmp_path / "srv.yaml"
        spec.write_text(s.spec_yaml("srv", 8))
        m = load_model(str(spec))
        with pytest.raises(Exception), batch_out(tmp_path / "req.jsonl"):
            m.chat([{"role": "user", "content": "hello"}])
        line = json.loads((tmp_path / "req.standin.chat.jsonl").read_text())
        body = {"choices": [{"message": {"content": "from the file"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 3}}
        ans = tmp_path / "ans.jsonl"
        ans.write_text(json.dumps({"custom_id": line["custom_id"],
                                   "response": {"status_code": 200, "body": body}}) + "\n"
                       + json.dumps({"custom_id": "nobody-asked",
                                     "response": {"status_code": 200, "body": body}}) + "\n")
        got = read_in(ans)
        assert got.stored == 1 and got.unknown == ["nobody-asked"]
        assert m.chat([{"role": "user", "content": "hello"}]).text == "from the file" and s.stats["requests"] == 0
        body2 = {**body, "choices": [{"message": {"content": "again"}, "finish_reason": "stop"}]}
        ans.write_text(json.dumps({"custom_id": line["custom_id"],
                                   "response": {"status_code": 200, "body": body2}}) + "\n")
        assert read_in(ans).already == 1
        assert m.chat([{"role": "user", "content": "hello"}]).text == "from the file"          # kept, not overwritten
        ans.write_text(json.dumps({"custom_id": line["custom_id"], "response": {"status_code": 200, "body": body}})
                       + "\nnot json\n")
        with pytest.raises(CrevalError, match="ans.jsonl, line 2: not a batch answer"):
            read_in(ans)
