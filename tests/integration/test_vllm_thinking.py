"""Thinking that is not switched off, on the suite's real vLLM server (CPU build, SmolLM2-135M-Instruct): the
divergent study is refused with one sentence, and no unit is recorded as ok.

Qwen3 served by vLLM without a reasoning parser writes its thinking into ``content``, opening with ``<think>``
(https://docs.vllm.ai/en/latest/features/reasoning_outputs.html;
https://qwen.readthedocs.io/en/latest/deployment/vllm.html). SmolLM2 has no thinking of its own and no ``<think>``
token, so vLLM's reasoning parsers refuse its tokenizer and a template that opens the assistant turn on ``<think>``
leaves the mark in the prompt, not the reply. Instead the spec asks vLLM's structured outputs
(https://docs.vllm.ai/en/latest/features/structured_outputs.html: a ``regex`` under ``structured_outputs`` in the
request body) to shape every reply the way Qwen3's opens: ``<think>`` and a line of thought. The replies then come
back from the real server, through the real sampling path, at every seed.
"""
import json
import urllib.request
from pathlib import Path

import pytest

from creval.book.params import effective_params, load_params
from creval.book.studies import run_studies
from creval.core.io import read_jsonl
from creval.core.paths import REPO
from creval.models import vllm_local
from small import FEW, SMALL

pytestmark = pytest.mark.integration
# a reply shaped as Qwen3's: a thinking block, then the answer
THINKING = {"structured_outputs": {"regex": "<think>\\n[a-z ]{4,40}\\n</think>\\n\\n[A-Za-z ,]{4,60}"}}


def test_the_server_writes_the_thinking_into_the_content(vllm_server):
    body = {"model": vllm_local.SERVED, "messages": [{"role": "user", "content": "Name one use of a brick."}],
            "max_tokens": 80, "temperature": 1.0, "seed": 1, "n": 2, "logprobs": True, **THINKING}
    req = urllib.request.Request(f"{vllm_server.url}/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        choices = json.load(r)["choices"]
    texts = [c["message"]["content"] for c in choices]
    assert len(texts) == 2 and all(t.startswith("<think>\n") and "\n</think>\n\n" in t for t in texts), texts
    assert all(c["logprobs"]["content"] for c in choices)                 # log-probs of the thinking's tokens


@pytest.mark.parametrize("strip, refusal", [
    (False, "the reply carries thinking (<think>) and the spec does not say to strip it"),   # its first answer
    (True, "a sample carries thinking (<think>)")])     # the answer stripped by the spec's rule; samples never are
def test_the_divergent_study_is_refused_and_no_unit_is_recorded_ok(strip, refusal, vllm_server, tmp_path,
                                                                    monkeypatch):
    spec = tmp_path / f"{vllm_local.SERVED}.yaml"
    spec.write_text(vllm_local.spec_yaml(vllm_server.url) + f"request: {{body: {json.dumps(THINKING)}}}\n"
                    + f"thinking: {str(strip).lower()}\n")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))       # every call goes to the server
    params = effective_params(load_params(REPO / "params/smoke.yaml", [
        f"run_root={tmp_path / 'runs'}", f"model={spec}", f"judge_model={spec}", *SMALL, *FEW]))
    for _ in range(2):                       # a rerun is refused the same way: nothing was cached as an answer
        row = run_studies(params, ["divergent"])[-1]
        err = row["error"] or ""
        assert refusal in err, err
        assert err.count("carries thinking") == 1 and "switch thinking off" in err    # one sentence and its fix
        files = [f for f in Path(row["run_dir"]).rglob("*.jsonl") if f.parent.name == "units"]
        done = [r for f in files if not f.name.endswith(".failed.jsonl") for r in read_jsonl(f)]
        assert done == []                                                 # no unit recorded as ok
        failed = [r for f in files if f.name.endswith(".failed.jsonl") for r in read_jsonl(f)]
        assert failed and all(refusal in json.dumps(r) for r in failed)
