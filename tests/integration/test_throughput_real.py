"""The model's own speed measured on the real llama.cpp SmolLM2 (small sizes), stored and read back.

What is asserted is behaviour, not speed (speeds vary with the machine's load; `make bench` prints them): the
calls the measurement makes (one warm-up, ``repeats`` timed prompts, one reply, ``streams`` sequences sampled
together from one prompt), the tokens it counts, and the figures stored and read back without measuring again."""
import json
import math
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


class Recording:
    """The real backend, with a note of every batch it is given."""

    def __init__(self, backend):
        self.backend, self.calls = backend, []

    def choice_logprobs(self, reqs):
        self.calls.append(("choice", len(reqs)))
        return self.backend.choice_logprobs(reqs)

    def chat(self, reqs):
        self.calls.append(("chat", len(reqs)))
        return self.backend.chat(reqs)

    def sample(self, req, seeds):
        out = self.backend.sample(req, seeds)
        self.calls.append(("sample", len(seeds), sum(s.n_tokens for s in out)))
        return out

    def count_tokens(self, text):
        return self.backend.count_tokens(text)


def test_real_model_speed_is_measured_and_stored(tmp_path, monkeypatch):
    from creval.models import throughput
    from creval.models.registry import get_spec, load_backend
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    backend = Recording(load_backend(get_spec("smollm2-135m")))
    f = throughput.measure(backend, prompt_words=120, decode_tokens=24, streams=4, repeats=2)
    # one warm-up prompt, two timed prompts, one reply, then four sequences decoded together from one prompt
    assert backend.calls[:4] == [("choice", 1)] * 3 + [("chat", 1)]
    (kind, in_flight, tokens), = backend.calls[4:]
    assert kind == "sample" and in_flight == 4 == f["streams"] and 4 <= tokens <= 4 * 24
    for k in ("prefill_tps", "decode_tps", "batched_decode_tps"):
        assert math.isfinite(f[k]) and f[k] > 0, (k, f)
    assert 60 < f["prompt_tokens"] < 400                              # about 120 words
    assert f["machine"] == throughput.machine()
    path = throughput.store("smollm2-135m", f)
    assert throughput.load("smollm2-135m") == f == json.loads(path.read_text())


def test_throughput_command_stores_figures_for_the_next_run(tmp_path, monkeypatch):
    env = {**os.environ, "CREVAL_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "creval", "throughput", "smollm2-135m", "--streams", "2"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-800:]
    assert "decode, 2 streams" in r.stdout
    stored = tmp_path / "artifacts" / "throughput" / "smollm2-135m.json"
    figures = json.loads(stored.read_text())
    assert figures["model"] == "smollm2-135m" and figures["streams"] == 2
    # the next run reads them back: nothing is measured again
    from creval.models import throughput
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    monkeypatch.setattr(throughput, "measure", lambda *a, **k: pytest.fail("measured again"))
    assert throughput.ensure("smollm2-135m") == figures
