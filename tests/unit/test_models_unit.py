import math

import numpy as np
import pytest

from creval.core.cache import CallCache
from creval.core.errors import CrevalError
from creval.models import registry
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.records import Sample
from creval.models.replies import split_thinking
from creval.models.requests import derive_seed
from creval.models.sampling import log_softmax, sample_token
from creval.models.spec import ModelSpec


class FakeBackend(BackendBase):
    """Unit-test stand-in: deterministic 'samples' that record which indices were asked for."""
    LOGPROB_KIND = "raw"

    def __init__(self):
        self.spec = ModelSpec(name="fake", backend="llamacpp", model="fake")
        self.asked = []

    def sample(self, req, indices):
        self.asked.append(list(indices))
        return [Sample(f"s{i}", (-1.0, -float(i))) for i in indices]

    def count_tokens(self, text):
        return len(text.split())


def test_samples_are_cached_per_index(tmp_path):
    b = FakeBackend()
    m = Model(b, CallCache(tmp_path / "c.sqlite"))
    msgs = [{"role": "user", "content": "go"}]
    first = m.sample(msgs, 3, seed=1)
    assert [s.text for s in first] == ["s0", "s1", "s2"]
    more = m.sample(msgs, 5, seed=1)
    assert b.asked == [[0, 1, 2], [3, 4]]            # n=5 after n=3 draws only the two new samples
    assert more[:3] == first
    m.sample(msgs, 2, seed=2)                        # another seed is another request
    assert b.asked[-1] == [0, 1]
    assert first[2].mean_logprob == pytest.approx(-1.5) and first[2].n_tokens == 2
    assert first[0].prompt_tokens == m.prompt_tokens(msgs)


def test_identity_leaves_out_fields_that_do_not_change_output():
    a = ModelSpec(name="a", backend="openai", model="m", price_in=1, concurrency=2, api_key_env="X")
    b = ModelSpec(name="b", backend="openai", model="m", price_in=5, concurrency=9, api_key_env="Y")
    assert a.identity() == b.identity()
    assert a.identity() != ModelSpec(name="a", backend="openai", model="other").identity()
    assert a.cost(1_000_000, 0) == 1.0


def test_split_thinking_and_seeds():
    assert split_thinking("<think>hmm\nok</think> The answer.") == ("The answer.", "hmm\nok")
    assert split_thinking("plain") == ("plain", "")
    assert derive_seed(0, 1) != derive_seed(0, 2) and derive_seed(3, 4) == derive_seed(3, 4)


def test_sample_token_greedy_nucleus_and_raw_logprobs():
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = np.log(probs).astype(np.float32) + 3.0      # logits are log-probs up to a constant
    rng = np.random.default_rng(0)
    assert sample_token(logits, 0.0, 0.9, rng)[0] == 0
    draws = {sample_token(logits, 1.0, 0.7, rng)[0] for _ in range(300)}
    assert draws == {0, 1}                            # 0.5 + 0.3 reaches 0.7: tokens 2 and 3 are cut
    draws = {sample_token(logits, 1.0, 1.0, rng)[0] for _ in range(2000)}
    assert draws == {0, 1, 2, 3}
    for temperature in (0.0, 0.5, 1.0, 2.0):         # the log-prob is the raw one whatever the temperature
        t, lp = sample_token(logits, temperature, 0.95, rng)
        assert math.isclose(lp, math.log(probs[t]), rel_tol=1e-5)
    assert np.allclose(np.exp(log_softmax(np.log(probs))), probs)


def test_registry_errors_name_the_problem(tmp_path, monkeypatch):
    with pytest.raises(CrevalError, match="unknown model 'nope'"):
        registry.get_spec("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: [unclosed")
    with pytest.raises(CrevalError, match="not valid YAML"):
        registry.get_spec(str(bad))
    odd = tmp_path / "odd.yaml"
    odd.write_text("backend: llamacpp\nmodle: typo\n")
    with pytest.raises(CrevalError, match="unknown fields \\['modle'\\]"):
        registry.get_spec(str(odd))
    missing = tmp_path / "missing.yaml"
    missing.write_text("backend: llamacpp\nsource: {package: no_such_pkg_xyz, file: m.gguf}\n"
                       "install: pip install xyz\n")
    ok, why = registry.check(registry.get_spec(str(missing)))
    assert not ok and why == "pip install xyz"
    with pytest.raises(CrevalError, match="not usable here"):
        registry.load_model(str(missing))
    keyed = tmp_path / "keyed.yaml"
    keyed.write_text("backend: openai\nmodel: gpt-4o\napi_key_env: CREVAL_TEST_NO_SUCH_KEY\n")
    monkeypatch.delenv("CREVAL_TEST_NO_SUCH_KEY", raising=False)
    assert registry.check(registry.get_spec(str(keyed))) == (False, "set CREVAL_TEST_NO_SUCH_KEY")


def test_every_registered_spec_parses():
    specs = registry.all_specs()
    for name in ("smollm2-135m", "qwen2.5-coder-1.5b", "gpt-4o", "gpt-4o-mini", "llama-3.1-8b-instruct",
                 "vllm-example"):
        assert name in specs
    assert specs["smollm2-135m"].backend == "llamacpp" and specs["gpt-4o"].price_out > 0


# -- records, rolling windows, tags, log-likelihood through the cache --------------------------------------
def test_rolling_windows_score_every_token_once_with_half_a_window_of_past():
    from creval.models.document import rolling_windows
    assert rolling_windows(1, 10, 16) == [(0, 1, 10)]                 # fits: one window, all of the past
    for first, total, w in [(1, 100, 16), (30, 100, 16), (1, 17, 16), (5, 6, 4), (40, 45, 16)]:
        wins = rolling_windows(first, total, w)
        scored = [j for lo, start, hi in wins for j in range(start, hi)]
        assert scored == list(range(first, total))
        for lo, start, hi in wins:
            assert hi - lo <= w and lo < start
            assert start - lo >= min(w // 2, start)                    # at least half a window of past
    # a long context and a short text: as much context as fits in one window
    assert rolling_windows(40, 45, 16) == [(29, 40, 45)]
    with pytest.raises(ValueError):
        rolling_windows(1, 5, 1)


def test_scored_tokens_splits_the_text_as_it_reads_in_place():
    from creval.models.document import scored_tokens
    words = lambda t: t.replace(" ", " _").split()       # noqa: E731  a toy tokenizer: words, spaces attached
    assert scored_tokens(words, 0, "b c", None) == ([0], ["b", "_c"])
    assert scored_tokens(words, 0, " b", "a") == ([0, "a"], ["_b"])
    assert scored_tokens(words, 0, "", "a") == ([0, "a"], [])


def test_records_round_trip_and_legacy_choice_entries():
    from creval.models.records import ChoiceScores, LogLikelihood
    c = ChoiceScores({"Yes": -0.1, "No": -2.5}, 12)
    assert ChoiceScores.from_dict(c.to_dict()) == c
    assert ChoiceScores.from_dict({"Yes": -0.1, "No": -2.5, "_input_tokens": 12.0}) == c    # cached before the record
    ll = LogLikelihood(math.log(0.25) * 2, (math.log(0.25), math.log(0.25)), 4, 3, model="m", quantisation="Q4_1")
    assert LogLikelihood.from_dict(ll.to_dict()) == ll and ll.to_dict()["n_tokens"] == 2
    assert ll.perplexity == pytest.approx(4.0) and ll.bits_per_byte == pytest.approx(1.0)


class ScoringBackend(FakeBackend):
    """Log-likelihood: -1 per character of the text, context tokens = its characters; chat echoes."""

    def __init__(self):
        super().__init__()
        self.ll_asked = []

    def loglikelihood(self, reqs):
        from creval.models.records import LogLikelihood
        self.ll_asked += [(r.text, r.context) for r in reqs]
        return [LogLikelihood(-float(len(r.text)), tuple(-1.0 for _ in r.text), len(r.text.encode()),
                              len(r.context or ""), model="fake", logprob_kind="raw") for r in reqs]

    def chat(self, reqs):
        from creval.models.records import Completion
        return [Completion(r.messages[-1]["content"], 5, 2) for r in reqs]


def test_loglikelihood_is_cached_and_recorded(tmp_path):
    from creval.core.ledger import LEDGER
    b = ScoringBackend()
    m = Model(b, CallCache(tmp_path / "c.sqlite"))
    with LEDGER.collect() as tally:
        a = m.loglikelihood("abc", context="xy")
        many = m.loglikelihood_many(["abc", ("abc", "xy"), ("zz", "")], tags=[{"item": 1}, {"item": 2}, {"item": 3}])
    assert b.ll_asked == [("abc", "xy"), ("abc", None), ("zz", None)]     # "" is no context; the repeat is a hit
    assert many[1] == a and a.sum_logprob == -3.0 and a.context_tokens == 2 and a.model == m.name
    recs = [r for r in tally.records if r.kind == "loglikelihood"]
    assert [(r.cached, r.input_tokens, r.tags.get("item")) for r in recs] == \
        [(False, 6, None), (True, 6, 2), (False, 4, 1), (False, 3, 3)]    # hits are recorded first


def test_tags_of_a_batch_reach_each_calls_ledger_record(tmp_path):
    from creval.core.ledger import LEDGER
    m = Model(ScoringBackend(), CallCache(tmp_path / "c.sqlite"))
    convs = [[{"role": "user", "content": t}] for t in ("a", "b", "a")]
    with LEDGER.collect() as tally, LEDGER.tagged(phase="p", agent="outer"):
        m.chat_many(convs, tags=[{"agent": "A"}, {"agent": "B"}, {"agent": "C"}])
        m.chat_many(convs[:1], tags=[{"agent": "D"}])
    recs = tally.records
    assert [(r.cached, r.tags["agent"], r.tags["phase"]) for r in recs] == \
        [(False, "A", "p"), (False, "B", "p"), (True, "D", "p")]        # a miss asked twice is made once
    with pytest.raises(ValueError, match="tag sets"):
        m.chat_many(convs, tags=[{}])


def test_openai_loglikelihood_reads_the_echo_or_fails_clearly(monkeypatch):
    from creval.models.openai_compat import OpenAIBackend
    from creval.models.requests import LoglikelihoodRequest
    be = OpenAIBackend(ModelSpec(name="srv", backend="openai", model="x", base_url="http://127.0.0.1:9/v1",
                                 extra={"bos_text": "<s>"}))
    echo = {"choices": [{"text": "<s>The cat sat!", "logprobs": {"tokens": ["The", " cat", " sat", "!"],
                                                                 "token_logprobs": [None, -2.0, -1.5, -0.5]}}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 1}}
    sent = []

    def answer(reply):
        async def post(path, body):          # the real _gather and parsing, the HTTP call replaced
            sent.append((path, body))
            if isinstance(reply, Exception):
                raise reply
            return reply
        return post
    monkeypatch.setattr(be, "_post", answer(echo))
    ll, = be.loglikelihood([LoglikelihoodRequest(" sat", "The cat")])
    assert sent[0][0] == "/completions" and sent[0][1]["prompt"] == "<s>The cat sat" and sent[0][1]["echo"] is True
    assert ll.token_logprobs == (-1.5,) and ll.context_tokens == 2 and ll.n_bytes == 4 and ll.logprob_kind == "server"
    ll, = be.loglikelihood([LoglikelihoodRequest("The cat sat")])
    assert ll.token_logprobs == (-2.0, -1.5) and ll.skipped_tokens == 1      # the first token has no log-prob
    monkeypatch.setattr(be, "_post", answer({"choices": [{"text": "x"}]}))
    with pytest.raises(CrevalError, match="does not support echoed log-probs"):
        be.loglikelihood([LoglikelihoodRequest("The cat")])

    monkeypatch.setattr(be, "_post", answer(CrevalError("model srv: http://127.0.0.1:9/v1/completions answered 404: "
                                                        "not found", "check")))
    with pytest.raises(CrevalError, match="does not support echoed log-probs"):
        be.loglikelihood([LoglikelihoodRequest("The cat")])


def test_server_choice_scores_follow_the_reply_and_part_where_the_choices_part():
    from creval.models.openai_compat import _token_steps, score_choices
    # chat format: the greedy reply "[[NO]]", with the top alternatives at each step
    chat = {"logprobs": {"content": [
        {"token": "[[", "logprob": -0.1,
         "top_logprobs": [{"token": "[[", "logprob": -0.1}, {"token": "The", "logprob": -2.5}]},
        {"token": "NO", "logprob": -0.4,
         "top_logprobs": [{"token": "NO", "logprob": -0.4}, {"token": "YES", "logprob": -1.1}]},
        {"token": "]]", "logprob": -0.02, "top_logprobs": [{"token": "]]", "logprob": -0.02}]}]}}
    got = score_choices(_token_steps(chat), ["[[YES]]", "[[NO]]"])
    assert got == pytest.approx({"[[YES]]": -0.1 - 1.1, "[[NO]]": -0.1 - 0.4 - 0.02})
    # completions format, a reply opening with a space
    legacy = {"logprobs": {"tokens": [" Yes", "."], "token_logprobs": [-0.3, -0.5],
                           "top_logprobs": [{" Yes": -0.3, " No": -1.7}, {".": -0.5}]}}
    assert score_choices(_token_steps(legacy), ["Yes", "No"]) == pytest.approx({"Yes": -0.3, "No": -1.7})
    # the reply leaves both choices at the same step by the same shared token: no evidence, both -inf
    shared = {"logprobs": {"content": [
        {"token": "The", "logprob": -0.2,
         "top_logprobs": [{"token": "The", "logprob": -0.2}, {"token": "[[", "logprob": -2.0}]}]}}
    assert score_choices(_token_steps(shared), ["[[YES]]", "[[NO]]"]) == {"[[YES]]": -math.inf, "[[NO]]": -math.inf}
    # a choice no listed token continues gets -inf, the other keeps its score
    one = {"logprobs": {"content": [{"token": "No", "logprob": -0.05,
                                     "top_logprobs": [{"token": "No", "logprob": -0.05}]}]}}
    assert score_choices(_token_steps(one), ["Yes", "No"]) == {"Yes": -math.inf, "No": -0.05}


def test_a_verdict_without_evidence_is_unparsed_not_a_coin():
    from creval.judges.parsing import logprob_verdict
    from creval.models.records import ChoiceScores

    class Scores:
        name = "m"

        def __init__(self, a, b):
            self.lp = {"[[YES]]": a, "[[NO]]": b}

        def choice_logprobs(self, messages, choices):
            return ChoiceScores(self.lp)
    assert logprob_verdict(Scores(-math.inf, -math.inf), []).unparsed
    v = logprob_verdict(Scores(-0.5, -math.inf), [])
    assert v.value is True and v.p_yes == 1.0
    v = logprob_verdict(Scores(-2.0, -0.5), [])
    assert v.value is False and v.p_yes == pytest.approx(1 / (1 + math.exp(1.5)))
