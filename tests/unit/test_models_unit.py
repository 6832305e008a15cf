import math

import numpy as np
import pytest

from creval.core.cache import CallCache
from creval.core.errors import CrevalError
from creval.models import registry
from creval.models.base import ModelSpec, Sample, derive_seed, split_thinking
from creval.models.cached import Model
from creval.models.llamacpp import log_softmax, sample_token


class FakeBackend:
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
    missing.write_text("backend: llamacpp\nsource: {package: no_such_pkg_xyz, file: m.gguf}\ninstall: pip install xyz\n")
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
    for name in ("smollm2-135m", "qwen2.5-coder-1.5b", "gpt-4o", "gpt-4o-mini", "llama-3.1-8b-instruct", "vllm-example"):
        assert name in specs
    assert specs["smollm2-135m"].backend == "llamacpp" and specs["gpt-4o"].price_out > 0
