"""Real local models through each backend: llama.cpp in-process, transformers, and an OpenAI-compatible
server (llama.cpp's) started on 127.0.0.1."""
import dataclasses
import math
import socket
import subprocess
import sys
import time

import httpx
import pytest
import yaml

from creval.core.cache import CallCache
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER
from creval.models.registry import get_spec, load_model, locate_weights

pytestmark = pytest.mark.integration
MSGS = [{"role": "user", "content": "Name one unusual use for a paperclip."}]
YESNO = [{"role": "user", "content": "Is water wet? Answer Yes or No."}]
CONTEXT, ANSWER = "The capital of France is", " Paris."


def _check_samples(samples, n):
    assert len(samples) == n
    for s in samples:
        assert s.n_tokens >= 1 and all(lp <= 1e-6 for lp in s.token_logprobs)
        assert math.isclose(s.mean_logprob, sum(s.token_logprobs) / s.n_tokens)
    assert len({s.text for s in samples}) >= 2          # sampling at T=1 is not degenerate


def test_llamacpp_batched_samples_and_resume(tmp_path):
    m = load_model("smollm2-135m", cache=CallCache(tmp_path / "a.sqlite"))
    with LEDGER.collect() as tally:
        s = m.sample(MSGS, 4, max_tokens=16, seed=7)
        _check_samples(s, 4)
        # a new cache (a fresh machine) with the same seed reproduces the samples: per-index seeding
        again = load_model("smollm2-135m", cache=CallCache(tmp_path / "b.sqlite")).sample(MSGS, 4, max_tokens=16,
                                                                                           seed=7)
        assert [x.text for x in again] == [x.text for x in s]
        # the same cache serves them without a call
        m.sample(MSGS, 4, max_tokens=16, seed=7)
    usage = tally.summary()["total"]
    assert usage["calls_made"] == 8 and usage["cache_hits"] == 4
    sc = m.choice_logprobs(YESNO, ["Yes", "No"])
    lp = sc.logprobs
    assert math.exp(lp["Yes"]) + math.exp(lp["No"]) <= 1.0 + 1e-6 and sc.input_tokens > 5
    c = m.chat(MSGS, max_tokens=12)
    assert c.text and c.input_tokens > 10 and 1 <= c.output_tokens <= 12


def test_llamacpp_loglikelihood(tmp_path):
    m = load_model("smollm2-135m", cache=CallCache(tmp_path / "ll.sqlite"))
    with LEDGER.collect() as tally:
        cond, ctx, whole = m.loglikelihood(ANSWER, CONTEXT), m.loglikelihood(CONTEXT), m.loglikelihood(CONTEXT + ANSWER)
        alone = m.loglikelihood(ANSWER)
    for r in (cond, ctx, whole, alone):
        assert math.isclose(sum(r.token_logprobs), r.sum_logprob) and all(lp <= 1e-6 for lp in r.token_logprobs)
        assert r.quantisation == "Q4_1" and r.logprob_kind == "raw" and r.windows == 1 and r.model == m.name
    assert cond.n_tokens == 2 and cond.context_tokens == ctx.n_tokens == 5 and cond.n_bytes == len(ANSWER)
    # the chain rule: log p(context) + log p(text | context) = log p(context + text), the same tokens
    assert whole.n_tokens == ctx.n_tokens + cond.n_tokens
    assert math.isclose(ctx.sum_logprob + cond.sum_logprob, whole.sum_logprob, abs_tol=1e-3)
    assert cond.sum_logprob > alone.sum_logprob + 5             # the context makes the answer far likelier
    usage = tally.summary()
    assert usage["total"]["calls_made"] == 4 and usage["by_kind_model"][f"loglikelihood:{m.name}"]["input_tokens"] == \
        sum(r.context_tokens + r.n_tokens + 1 for r in (cond, ctx, whole, alone))
    with LEDGER.collect() as tally:
        assert m.loglikelihood_many([(ANSWER, CONTEXT), CONTEXT]) == [cond, ctx]          # a rerun: from the cache
    assert tally.summary()["total"]["cache_hits"] == 2
    # a text longer than the window is scored in rolling windows, each token seeing half a window or more
    from creval.models.registry import load_backend
    from creval.models.requests import LoglikelihoodRequest
    text = " ".join(f"Step {i}: fold the paper once more and press it flat." for i in range(20))
    be = load_backend(get_spec("smollm2-135m"))
    full = be.loglikelihood([LoglikelihoodRequest(text)])[0]
    be.window = 64
    rolled = be.loglikelihood([LoglikelihoodRequest(text)])[0]
    assert full.windows == 1 and rolled.windows > 3 and rolled.n_tokens == full.n_tokens
    # the first window is the same computation (llama.cpp's quantised kernels differ a little with batch size)
    assert rolled.token_logprobs[:63] == pytest.approx(full.token_logprobs[:63], abs=0.5)
    # later windows see 32 tokens of the past instead of all of it: this repetitive text is less predictable
    assert full.mean_logprob - 0.5 < rolled.mean_logprob < full.mean_logprob


def test_hf_backend_matches_llamacpp_log_probs(tmp_path):
    hf = load_model("smollm2-135m-hf", cache=CallCache(tmp_path / "h.sqlite"))
    s = hf.sample(MSGS, 3, max_tokens=12, seed=1)
    _check_samples(s, 3)
    a = hf.choice_logprobs(YESNO, ["Yes", "No"]).logprobs
    local = load_model("smollm2-135m", cache=CallCache(tmp_path / "l.sqlite"))
    b = local.choice_logprobs(YESNO, ["Yes", "No"]).logprobs
    for k in ("Yes", "No"):                        # same weights (GGUF Q4_1): float32 vs quantised kernels
        assert abs(a[k] - b[k]) < 0.5, (a, b)
    for text, context in [(ANSWER, CONTEXT), (CONTEXT + ANSWER, None)]:
        x, y = hf.loglikelihood(text, context), local.loglikelihood(text, context)
        assert x.n_tokens == y.n_tokens and x.quantisation == "Q4_1 dequantised to float32"
        assert all(abs(p - q) < 0.5 for p, q in zip(x.token_logprobs, y.token_logprobs)), (x, y)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    port = _free_port()
    gguf = locate_weights(get_spec("smollm2-135m"))
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_threads", "2", "--logits_all", "true",
                             "--model_alias", "smollm2"],
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
    spec.write_text(f"backend: openai\nmodel: smollm2\nbase_url: {llama_server}\nconcurrency: 2\n"
                    "price_in: 1.0\nprice_out: 2.0\n")
    m = load_model(str(spec), cache=CallCache(tmp_path / "o.sqlite"))
    with LEDGER.collect() as tally:
        s = m.sample(MSGS, 3, max_tokens=10, seed=3)
        _check_samples(s, 3)
        replies = m.chat_many([MSGS, YESNO], max_tokens=8)
        assert all(r.text and r.input_tokens > 5 and r.output_tokens >= 1 for r in replies)
        lp = m.choice_logprobs(YESNO, ["Yes", "No"]).logprobs
        assert max(lp["Yes"], lp["No"]) > -20
    usage = tally.summary()["total"]
    assert usage["calls_made"] == 6 and usage["output_tokens"] >= 3 + 2
    assert usage["cost_usd"] == pytest.approx((usage["input_tokens"] * 1.0 + usage["output_tokens"] * 2.0) / 1e6)


def test_openai_loglikelihood_from_echoed_log_probs(llama_server, tmp_path):
    spec = tmp_path / "echo.yaml"
    spec.write_text(f"backend: openai\nmodel: smollm2\nbase_url: {llama_server}\nextra: {{bos_text: '<|im_start|>'}}\n")
    m = load_model(str(spec), cache=CallCache(tmp_path / "e.sqlite"))
    # this server prepends the GGUF's BOS (<|im_start|>) itself: the in-process model scores after the same token
    same_start = tmp_path / "local.yaml"
    same_start.write_text(yaml.safe_dump({**dataclasses.asdict(get_spec("smollm2-135m")), "name": "smollm2-im-start",
                                          "document_start": "<|im_start|>"}))
    local = load_model(str(same_start), cache=CallCache(tmp_path / "el.sqlite"))
    with LEDGER.collect() as tally:
        for text, context in [(ANSWER, CONTEXT), (CONTEXT + ANSWER, None)]:
            got, want = m.loglikelihood(text, context), local.loglikelihood(text, context)
            assert got.logprob_kind == "server" and math.isclose(sum(got.token_logprobs), got.sum_logprob)
            skip = 0 if context else 1                   # a server gives the prompt's first token no log-prob
            assert got.skipped_tokens == skip and got.n_tokens == want.n_tokens - skip
            assert got.token_logprobs == pytest.approx(want.token_logprobs[skip:], abs=0.3)   # the same llama.cpp
        assert m.loglikelihood(ANSWER, CONTEXT) == m.loglikelihood_many([(ANSWER, CONTEXT)])[0]
    assert tally.summary()["by_kind_model"]["loglikelihood:echo"]["cache_hits"] == 2
    # without the begin-of-text token llama-cpp-python's echo is misaligned: refused, not misread
    plain = tmp_path / "plain.yaml"
    plain.write_text(f"backend: openai\nmodel: smollm2\nbase_url: {llama_server}\n")
    with pytest.raises(CrevalError, match="does not support echoed log-probs"):
        load_model(str(plain), cache=CallCache(tmp_path / "p.sqlite")).loglikelihood(ANSWER, CONTEXT)


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    spec = tmp_path / "down.yaml"
    spec.write_text(f"backend: openai\nmodel: x\nbase_url: http://127.0.0.1:{_free_port()}/v1\n")
    with pytest.raises(CrevalError, match="unreachable"):
        load_model(str(spec), cache=CallCache(tmp_path / "d.sqlite")).chat(MSGS)


def test_llamacpp_gathered_chat_decodes_the_common_prefix_once_and_keeps_each_prompt_for_the_next_turn():
    from creval.models.llamacpp import LlamaCppBackend
    from creval.models.requests import ChatRequest
    b = LlamaCppBackend(get_spec("smollm2-135m"))
    system = {"role": "system", "content": "You judge how original an everyday use of an object is. " * 6}
    reqs = [ChatRequest((system, {"role": "user", "content": f"Rate this use of a fork from 1 to 5: {u}"}), 0.0, 6, 0)
            for u in ("comb hair", "dig a tiny garden", "open a paint can")]
    prompts = [b.tokenize(b.render(r.messages)) for r in reqs]
    common = next(i for i, col in enumerate(zip(*prompts)) if len(set(col)) > 1)
    b.batched = True
    out = b.chat(reqs)
    assert len(out) == 3 and all(1 <= c.output_tokens <= 6 and c.input_tokens == len(p) for c, p in zip(out, prompts))
    assert b.reused_tokens == 2 * common and common > 60      # the second and third prompts share the first's prefix
    held = list(b.kept.values())                               # each sequence keeps its prompt (and its reply)
    assert len(held) == 3 and all(any(h[:len(p)] == p for h in held) for p in prompts)
    before = b.reused_tokens
    b.chat(reqs)                                               # the next call reuses every prompt but its last token
    assert b.reused_tokens - before == sum(len(p) - 1 for p in prompts)
    b.batched = False
    one = b.chat(reqs[:1])[0]                                  # the single path still works after it
    assert 1 <= one.output_tokens <= 6


VERDICT_PROMPTS = [
    [{"role": "user", "content": "Is a paperclip made of metal? Reply with [[YES]] or [[NO]] only."}],
    [{"role": "user", "content": "Can a fish climb a tree? Reply with [[YES]] or [[NO]] only."}],
    [{"role": "user", "content": "Judge: is this solution feasible? Solution: use the rubber band as a sling. "
                                 "End with [[YES]] or [[NO]]."}],
]


def test_server_verdict_fallback_tells_yes_from_no_or_says_it_cannot(llama_server, tmp_path):
    """Choices sharing their first token ("[[") are scored where they part, never both on "[["; when the
    reply gives no evidence the verdict is unparsed, not a coin (P = 0.5) or a default NO (NaN)."""
    from creval.judges.parsing import logprob_verdict
    spec = tmp_path / "verdict.yaml"
    spec.write_text(f"backend: openai\nmodel: smollm2\nbase_url: {llama_server}\n")
    m = load_model(str(spec), cache=CallCache(tmp_path / "v.sqlite"))
    for msgs in VERDICT_PROMPTS:
        lp = m.choice_logprobs(msgs, ["[[YES]]", "[[NO]]"]).logprobs
        a, b = lp["[[YES]]"], lp["[[NO]]"]
        assert not (math.isfinite(a) and a == b), lp             # the shared "[[" alone never decides
        v = logprob_verdict(m, msgs)
        if math.isinf(a) and math.isinf(b):
            assert v.unparsed and v.value is None
        else:
            assert v.path == "logprobs" and v.value == (a > b) and 0.0 <= v.p_yes <= 1.0
            assert not math.isnan(v.p_yes)
