"""Batch files as real engines take them: one file per model and endpoint, failed answers listed with their
reasons, a request refused with a 4xx held back (until asked again), and answers billed at the batch price.
OpenAI's Batch API is exercised through its file formats (input lines; output lines with ``response`` or
``error``): https://platform.openai.com/docs/guides/batch and https://platform.openai.com/docs/api-reference/batch."""
import json

import pytest

from creval.core.deferral import Deferred, batch_out
from creval.core.ledger import LEDGER
from creval.models.batchfile import read_in
from creval.models.registry import load_model
from creval.models.standin import StandIn

pytestmark = pytest.mark.integration
HELLO = [{"role": "user", "content": "hello"}]


def _specs(tmp_path, s, **extra):
    """Two chat models and one on /completions, all served by the stand-in (priced: $2 in, $8 out per 1M)."""
    out = {}
    for name, api in (("alpha", "chat"), ("beta/b", "chat"), ("gamma", "completions")):
        f = tmp_path / f"{name.replace('/', '-')}.yaml"
        f.write_text(s.spec_yaml(name.replace("/", "-"), 8, served=name) + f"api: {api}\nprice_in: 2.0\n"
                     "price_out: 8.0\n")
        out[name] = load_model(str(f))
    return out


def _write(stem, models, prompts=("hello",)):
    """Ask every model every prompt inside a batch wave; returns the wave."""
    with batch_out(stem) as wave:
        for m in models:
            for p in prompts:
                with pytest.raises(Deferred):
                    m.chat([{"role": "user", "content": p}], max_tokens=8)
    return wave


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_one_file_per_model_and_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with StandIn(latency=0.01) as s:
        ms = _specs(tmp_path, s)
        wave = _write(tmp_path / "w.jsonl", ms.values(), prompts=("hello", "again"))
    files = sorted(p.name for p in tmp_path.glob("w.*.jsonl"))
    assert files == ["w.alpha.chat.jsonl", "w.beta_b.chat.jsonl", "w.gamma.completions.jsonl"]
    for f in files:
        lines = _lines(tmp_path / f)
        assert len(lines) == 2 and len({ln["body"]["model"] for ln in lines}) == 1
        assert len({ln["url"] for ln in lines}) == 1
    assert _lines(tmp_path / "w.gamma.completions.jsonl")[0]["url"] == "/v1/completions"
    text = "\n".join(wave.lines())
    assert "w.gamma.completions.jsonl: 2 requests to /v1/completions" in text and "not `vllm run-batch`" in text
    assert "w.alpha.chat.jsonl: 2 requests to /v1/chat/completions" in text


def test_failed_answers_are_listed_and_a_4xx_is_held_back_until_asked_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with StandIn(latency=0.01) as s:
        alpha = _specs(tmp_path, s)["alpha"]
        _write(tmp_path / "w1.jsonl", [alpha], prompts=("one", "two"))
    one, two = _lines(tmp_path / "w1.alpha.chat.jsonl")
    answers = tmp_path / "out1.jsonl"
    answers.write_text(
        json.dumps({"custom_id": one["custom_id"], "response": {"status_code": 400, "body": {
            "error": {"message": "max_tokens is not supported with this model", "type": "invalid_request_error"}}},
            "error": None}) + "\n"
        + json.dumps({"custom_id": two["custom_id"], "response": None,
                      "error": {"code": "server_error", "message": "The server had an error"}}) + "\n")
    got = read_in(answers)
    assert got.stored == 0
    assert got.failed == {one["custom_id"]: "HTTP 400: max_tokens is not supported with this model",
                          two["custom_id"]: "The server had an error"}
    assert "max_tokens is not supported" in got.line() and "The server had an error" in got.line()
    with StandIn(latency=0.01) as s:
        alpha = _specs(tmp_path, s)["alpha"]
        wave = _write(tmp_path / "w2.jsonl", [alpha], prompts=("one", "two"))
        assert s.stats["requests"] == 0
    assert [ln["custom_id"] for ln in _lines(tmp_path / "w2.alpha.chat.jsonl")] == [two["custom_id"]]
    assert wave.held == {one["custom_id"]: "HTTP 400: max_tokens is not supported with this model"}
    assert "1 requests held back" in "\n".join(wave.lines())
    with StandIn(latency=0.01) as s, batch_out(tmp_path / "w3.jsonl", retry_failed=True) as again:
        alpha = _specs(tmp_path, s)["alpha"]
        with pytest.raises(Deferred):
            alpha.chat([{"role": "user", "content": "one"}], max_tokens=8)
    assert again.written == 1 and not again.held


def test_batch_answers_are_billed_once_at_the_batch_price(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with StandIn(latency=0.01) as s:
        alpha = _specs(tmp_path, s)["alpha"]
        _write(tmp_path / "w.jsonl", [alpha])
        (line,) = _lines(tmp_path / "w.alpha.chat.jsonl")
        body = {"choices": [{"message": {"content": "hi there"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 500}}
        (tmp_path / "out.jsonl").write_text(json.dumps({"custom_id": line["custom_id"],
                                                        "response": {"status_code": 200, "body": body}}) + "\n")
        got = read_in(tmp_path / "out.jsonl")
        live = (1000 * 2.0 + 500 * 8.0) / 1e6
        assert got.stored == 1 and got.cost_usd == pytest.approx(live * 0.5)
        with LEDGER.collect() as first:
            assert alpha.chat(HELLO, max_tokens=8).text == "hi there"
        with LEDGER.collect() as second:
            alpha.chat(HELLO, max_tokens=8)
        assert s.stats["requests"] == 0
    (rec,) = first.records
    assert not rec.cached and rec.tags["via"] == "batch" and rec.cost_usd == pytest.approx(live * 0.5)
    (again,) = second.records
    assert again.cached and again.cost_usd == 0.0
