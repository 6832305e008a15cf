"""An unreachable model endpoint fails in seconds, before the entailment model is loaded or trained."""
import time

import pytest

from creval.core.errors import CrevalError
from creval.measures.nli import backends
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.run import solve_domain


def test_unreachable_endpoint_fails_before_any_entailment_training(tmp_path, monkeypatch):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "gone.yaml").write_text("backend: openai\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n"
                                     "api_key_env: GONE_KEY\n")
    monkeypatch.setenv("CREVAL_MODELS", str(specs))
    monkeypatch.setenv("GONE_KEY", "k")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    loaded = []
    monkeypatch.setattr(backends, "load_nli", lambda name: loaded.append(name) or pytest.fail("NLI loaded first"))
    cfg = DivergentConfig(model="gone", divergent_domains=("macgyver",), divergent_limit=1, divergent_n_samples=2,
                          divergent_nli="minilm-sick")
    t = time.perf_counter()
    with pytest.raises(CrevalError, match="unreachable"):
        solve_domain(cfg, "gone", "macgyver", tmp_path / "unit", progress=False)
    assert loaded == [] and time.perf_counter() - t < 100    # not retried for the 120 s retry window


def test_lazy_backend_loads_once_on_first_use(monkeypatch):
    calls = []

    class Fake:
        name = "fake"

        def classify(self, pairs):
            return ["entailment"] * len(pairs)
    monkeypatch.setattr(backends, "load_nli", lambda name: calls.append(name) or Fake())
    lazy = backends.LazyNLI("x")
    assert calls == []
    assert lazy.classify([("a", "b")]) == ["entailment"] and lazy.name == "fake" and calls == ["x"]
