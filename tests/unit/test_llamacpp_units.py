"""The llama.cpp backend's pure parts: block log-softmax of scored rows, and the thread count."""
import numpy as np

from creval.models import llamacpp, llamacpp_load
from creval.models.llamacpp_score import target_logprobs
from creval.models.spec import ModelSpec


def test_scored_rows_log_softmax_equals_the_row_by_row_formula_bit_for_bit():
    rng = np.random.default_rng(3)
    logits = (rng.standard_normal((37, 4099)) * 6).astype(np.float32)
    targets = rng.integers(0, 4099, len(logits)).tolist()
    want = []
    for row, t in zip(logits, targets):
        x = row.astype(np.float64)
        m = x.max()
        want.append(float(x[t] - m - np.log(np.exp(x - m).sum())))
    assert target_logprobs(logits, targets) == want
    assert target_logprobs(logits[:0], []) == []


def test_threads_follow_the_override_then_the_spec_then_the_idle_cores(monkeypatch):
    monkeypatch.delenv("CREVAL_THREADS", raising=False)
    monkeypatch.setattr(llamacpp_load.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(llamacpp_load, "busy_cores", lambda: 1.2)
    assert llamacpp_load.choose_threads(ModelSpec(name="m", backend="llamacpp")) == 3
    monkeypatch.setattr(llamacpp_load, "busy_cores", lambda: 9.0)
    assert llamacpp_load.choose_threads(ModelSpec(name="m", backend="llamacpp")) == 1
    assert llamacpp_load.choose_threads(ModelSpec(name="m", backend="llamacpp", threads=2)) == 2
    monkeypatch.setenv("CREVAL_THREADS", "5")
    assert llamacpp_load.choose_threads(ModelSpec(name="m", backend="llamacpp", threads=2)) == 5


def test_busy_cores_reads_a_number_and_the_public_names_stay_importable():
    assert llamacpp_load.busy_cores(samples=2, every=0.0) >= 0.0
    assert llamacpp.MAX_SEQ == 32 and llamacpp.N_BATCH == 512 and callable(llamacpp.LlamaCppBackend.loglikelihood)


def test_a_long_run_follows_the_load_every_few_seconds_unless_the_threads_are_fixed(monkeypatch):
    calls = []

    class Lc:
        def llama_set_n_threads(self, ctx, n, n_batch):
            calls.append((ctx, n, n_batch))

    b = llamacpp.LlamaCppBackend.__new__(llamacpp.LlamaCppBackend)
    b.spec, b.lc, b.ctx, b.threads, b.fixed_threads = ModelSpec(name="m", backend="llamacpp"), Lc(), "ctx", 1, False
    busy = iter([1.0, 0.0])
    monkeypatch.setattr(llamacpp_load.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(llamacpp_load, "busy_cores", lambda: next(busy))
    clock = iter([100.0, 106.0, 106.0, 112.0, 112.0])
    monkeypatch.setattr(llamacpp.time, "monotonic", lambda: next(clock))
    b.threads_checked = 99.0
    b._follow_load()                  # 1 s after the last check: nothing read
    b._follow_load()                  # 7 s: one core still busy, 1 thread as before, nothing set
    assert calls == [] and b.threads == 1
    b._follow_load()                  # 13 s: both cores idle, both taken
    assert calls == [("ctx", 2, 2)] and b.threads == 2
    b.fixed_threads = True
    b._follow_load()
    assert len(calls) == 1
