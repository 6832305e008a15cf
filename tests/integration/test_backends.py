"""Real local models through each backend: llama.cpp in-process, transformers, and an OpenAI-compatible
server (llama.cpp's) started on 127.0.0.1."""
import math
import socket
import subprocess
import sys
import time

import httpx
import pytest

from creval.core.cache import CallCache
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER, Ledger
from creval.models.registry import get_spec, load_model, locate_weights

pytestmark = pytest.mark.integration
MSGS = [{"role": "user", "content": "Name one unusual use for a paperclip."}]
YESNO = [{"role": "user", "content": "Is water wet? Answer Yes or No."}]


def _check_samples(samples, n):
    assert len(samples) == n
    for s in samples:
        assert s.n_tokens >= 1 and all(lp <= 1e-6 for lp in s.token_logprobs)
        assert math.isclose(s.mean_logprob, sum(s.token_logprobs) / s.n_tokens)
    assert len({s.text for s in samples}) >= 2          # sampling at T=1 is not degenerate


def test_llamacpp_batched_samples_and_resume(tmp_path):
    m = load_model("smollm2-135m", cache=CallCache(tmp_path / "a.sqlite"))
    mark = LEDGER.mark()
    s = m.sample(MSGS, 4, max_tokens=16, seed=7)
    _check_samples(s, 4)
    # a new cache (a fresh machine) with the same seed reproduces the samples: per-index seeding
    again = load_model("smollm2-135m", cache=CallCache(tmp_path / "b.sqlite")).sample(MSGS, 4, max_tokens=16, seed=7)
    assert [x.text for x in again] == [x.text for x in s]
    # the same cache serves them without a call
    m.sample(MSGS, 4, max_tokens=16, seed=7)
    usage = Ledger.summarize(LEDGER.since(mark))["total"]
    assert usage["calls_made"] == 8 and usage["cache_hits"] == 4
    lp = m.choice_logprobs(YESNO, ["Yes", "No"])
    assert math.exp(lp["Yes"]) + math.exp(lp["No"]) <= 1.0 + 1e-6
    c = m.chat(MSGS, max_tokens=12)
    assert c.text and c.input_tokens > 10 and 1 <= c.output_tokens <= 12


def test_hf_backend_matches_llamacpp_log_probs(tmp_path):
    hf = load_model("smollm2-135m-hf", cache=CallCache(tmp_path / "h.sqlite"))
    s = hf.sample(MSGS, 3, max_tokens=12, seed=1)
    _check_samples(s, 3)
    a = hf.choice_logprobs(YESNO, ["Yes", "No"])
    b = load_model("smollm2-135m", cache=CallCache(tmp_path / "l.sqlite")).choice_logprobs(YESNO, ["Yes", "No"])
    for k in ("Yes", "No"):                        # same weights (GGUF Q4_1): float32 vs quantised kernels
        assert abs(a[k] - b[k]) < 0.5, (a, b)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    port = _free_port()
    gguf = locate_weights(get_spec("smollm2-135m"))
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_threads", "2", "--logits_all", "true", "--model_alias", "smollm2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(120):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start")
    yield url
    proc.terminate()
    proc.wait(10)


def test_openai_backend_against_local_server(llama_server, tmp_path):
    spec = tmp_path / "local.yaml"
    spec.write_text(f"backend: openai\nmodel: smollm2\nbase_url: {llama_server}\nconcurrency: 2\nprice_in: 1.0\nprice_out: 2.0\n")
    m = load_model(str(spec), cache=CallCache(tmp_path / "o.sqlite"))
    mark = LEDGER.mark()
    s = m.sample(MSGS, 3, max_tokens=10, seed=3)
    _check_samples(s, 3)
    replies = m.chat_many([MSGS, YESNO], max_tokens=8)
    assert all(r.text and r.input_tokens > 5 and r.output_tokens >= 1 for r in replies)
    lp = m.choice_logprobs(YESNO, ["Yes", "No"])
    assert max(lp["Yes"], lp["No"]) > -20
    usage = Ledger.summarize(LEDGER.since(mark))["total"]
    assert usage["calls_made"] == 6 and usage["output_tokens"] >= 3 + 2
    assert usage["cost_usd"] == pytest.approx((usage["input_tokens"] * 1.0 + usage["output_tokens"] * 2.0) / 1e6)


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    spec = tmp_path / "down.yaml"
    spec.write_text(f"backend: openai\nmodel: x\nbase_url: http://127.0.0.1:{_free_port()}/v1\n")
    with pytest.raises(CrevalError, match="unreachable"):
        load_model(str(spec), cache=CallCache(tmp_path / "d.sqlite")).chat(MSGS)
