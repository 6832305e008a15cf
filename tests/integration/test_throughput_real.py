"""The model's own speed measured on the real llama.cpp SmolLM2 (small sizes), stored and read back."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_real_model_speed_is_measured_and_stored(tmp_path, monkeypatch):
    from creval.models import throughput
    from creval.models.registry import get_spec, load_backend
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    f = throughput.measure(load_backend(get_spec("smollm2-135m")), prompt_words=120, decode_tokens=24,
                           streams=4, repeats=1)
    # prefill reads a whole prompt per forward pass, decode one token per stream: faster per token (about 2.5x
    # on a 2-core CI machine, where prefill is compute-bound)
    assert f["prefill_tps"] > f["decode_tps"] > 0
    assert f["batched_decode_tps"] > 0
    assert 60 < f["prompt_tokens"] < 400


def test_throughput_command_stores_figures_for_the_next_run(tmp_path):
    env = {**os.environ, "CREVAL_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "creval", "throughput", "smollm2-135m", "--streams", "2"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-800:]
    assert "decode, 2 streams" in r.stdout
    stored = tmp_path / "artifacts" / "throughput" / "smollm2-135m.json"
    assert stored.is_file() and '"model": "smollm2-135m"' in stored.read_text()
