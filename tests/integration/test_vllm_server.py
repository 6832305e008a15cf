"""The OpenAI-compatible client against a real vLLM server (CPU build, SmolLM2-135M-Instruct in bf16): chat with
log-probs, seeded samples, choice scores, echoed log-likelihoods, and a wave of requests written by
`--batch-out` answered by the real `vllm run-batch`."""
import json
import math

import pytest

from creval.core.deferral import Deferred, batch_out
from creval.core.ledger import LEDGER
from creval.models import vllm_local
from creval.models.batchfile import read_in
from creval.models.registry import load_model

pytestmark = pytest.mark.integration
ASK = [{"role": "user", "content": "Name one use of a paperclip."}]


@pytest.fixture
def model(vllm_spec, tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))       # calls really go to the server
    return load_model(vllm_spec)


def test_samples_carry_one_log_prob_per_token_and_a_seed_repeats(model):
    samples = model.sample(ASK, 4, temperature=1.0, max_tokens=12, seed=3)
    assert len(samples) == 4 and all(s.text.strip() for s in samples)
    for s in samples:
        assert 1 <= s.n_tokens <= 12 and all(lp <= 0.0 and math.isfinite(lp) for lp in s.token_logprobs)
    assert len({s.text for s in samples}) > 1                       # four seeds, not one reply four times
    greedy = model.chat(ASK, temperature=0.0, max_tokens=16)
    assert greedy.text and greedy.input_tokens > 5 and 1 <= greedy.output_tokens <= 16


def test_choice_scores_rank_the_answer_the_model_gives(model):
    msgs = [{"role": "user", "content": "Is the sky blue on a clear day? Answer YES or NO."}]
    scores = model.choice_logprobs(msgs, ["YES", "NO"]).logprobs
    assert set(scores) == {"YES", "NO"} and all(v <= 0 for v in scores.values())
    assert any(math.isfinite(v) for v in scores.values())
    reply = model.chat(msgs, temperature=0.0, max_tokens=3).text.strip().upper()
    best = max(scores, key=scores.get)
    if reply.startswith(("YES", "NO")):
        assert reply.startswith(best)


def test_echoed_log_likelihoods_are_finite_and_prefer_fluent_text(model):
    fluent, scrambled = "The cat sat on the mat.", "mat the on sat cat The."
    a, b = model.loglikelihood_many([fluent, scrambled])
    for ll in (a, b):
        assert ll.n_tokens >= 5 and math.isfinite(ll.sum_logprob) and ll.sum_logprob < 0
    assert a.sum_logprob > b.sum_logprob
    ctx = model.loglikelihood(" sat on the mat.", context="The cat")
    assert ctx.context_tokens >= 1 and ctx.n_tokens >= 4 and math.isfinite(ctx.sum_logprob)


def test_a_wave_answered_by_vllm_run_batch_equals_live_answers(vllm_spec, vllm_server, tmp_path, monkeypatch):
    convs = [[{"role": "user", "content": f"Give one unusual use of a {thing}."}] for thing in ("brick", "spoon")]
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "files.sqlite"))
    m = load_model(vllm_spec)
    with batch_out(tmp_path / "wave.jsonl") as wave:
        with pytest.raises(Deferred):
            m.chat_many(convs, temperature=0.0, max_tokens=16)
    (req,) = list(wave.counts)
    assert req.name == f"wave.{vllm_local.SERVED}.chat.jsonl" and wave.written == 2
    answers = tmp_path / "answers.jsonl"
    log = tmp_path / "run-batch.log"
    code = vllm_local.run_batch(req, answers, log)
    assert code == 0 and answers.exists(), log.read_text()[-3000:]
    assert all(json.loads(x)["response"]["status_code"] == 200 for x in answers.read_text().splitlines())
    got = read_in(answers)
    assert got.stored == 2 and not got.failed and not got.unknown
    with LEDGER.collect() as t:
        from_file = [c.text for c in m.chat_many(convs, temperature=0.0, max_tokens=16)]
    assert all(r.cached for r in t.records) and all(from_file)
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "live.sqlite"))
    live = [c.text for c in load_model(vllm_spec).chat_many(convs, temperature=0.0, max_tokens=16)]
    assert len(live) == 2 and all(live)       # greedy replies; the same text is likely, not promised (batching)
