"""A model's own speed and a phase's distance to it (models/throughput.py), with a clocked fake backend."""
import json

import pytest

from creval.core.ledger import CallRecord, Ledger
from creval.models import throughput
from creval.models.records import ChoiceScores, Completion, Sample


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class ClockedBackend:
    """Advances a fake clock as a machine with prefill 1000 tok/s, decode 100 tok/s one stream and 400 tok/s
    over all streams together would."""
    def __init__(self, clock, prompt=500):
        self.clock, self.prompt = clock, prompt

    def count_tokens(self, text):
        return self.prompt

    def choice_logprobs(self, reqs):
        self.clock.now += self.prompt / 1000
        return [ChoiceScores({"yes": -1.0}, self.prompt) for _ in reqs]

    def chat(self, reqs):
        self.clock.now += 40 / 1000 + 64 / 100
        return [Completion("x", 40, 64) for _ in reqs]

    def sample(self, req, indices):
        self.clock.now += 40 / 1000 + 64 * len(indices) / 400
        return [Sample("x", (-0.1,) * 64) for _ in indices]


def test_measure_recovers_the_rates_of_the_machine(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(throughput.time, "perf_counter", clock)
    f = throughput.measure(ClockedBackend(clock), decode_tokens=64, streams=8)
    assert (f["prefill_tps"], f["decode_tps"], f["batched_decode_tps"]) == (1000.0, 100.0, 400.0)
    assert f["prompt_tokens"] == 500 and f["streams"] == 8 and f["machine"] == throughput.machine()


def test_lower_bound_and_distance():
    f = {"prefill_tps": 1000.0, "batched_decode_tps": 50.0}
    assert throughput.lower_bound_seconds("choice", 2000, 0, f) == pytest.approx(2.0)
    assert throughput.lower_bound_seconds("chat", 2000, 100, f) == pytest.approx(4.0)    # 2 s + 2 s
    assert throughput.lower_bound_seconds("nli", 2000, 100, f) is None                   # not an LLM call
    assert throughput.distance("chat", 10.0, 2000, 100, f) == pytest.approx(2.5)
    assert throughput.distance("chat", 10.0, 2000, 100, None) is None


def test_figures_are_kept_per_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    f = {"prefill_tps": 1.0, "decode_tps": 1.0, "batched_decode_tps": 2.0, "machine": throughput.machine()}
    throughput.store("org/m", f)
    assert throughput.load("org/m") == f
    other = dict(f, machine="elsewhere/64cpu")
    throughput.stored_path("org/m").write_text(json.dumps(other))
    assert throughput.load("org/m") is None          # measured on another machine: not this one's limit
    throughput.stored_path("org/m").write_text("{broken")
    assert throughput.load("org/m") is None


def test_ledger_counts_the_tokens_of_calls_made_apart():
    recs = [CallRecord("chat", "m", False, 100, 10, seconds=1.0), CallRecord("chat", "m", True, 300, 30)]
    u = Ledger.summarize(recs)["by_kind_model"]["chat:m"]
    assert (u["input_tokens"], u["output_tokens"]) == (400, 40)
    assert (u["made_input_tokens"], u["made_output_tokens"]) == (100, 10)


def test_slow_phases_say_how_far_they_are_from_the_measured_speed(tmp_path, monkeypatch):
    from creval.book.studies import phases_lines, slowest_phases
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    throughput.store("m", {"prefill_tps": 1000.0, "decode_tps": 20.0, "batched_decode_tps": 50.0,
                           "machine": throughput.machine()})
    u = {"seconds": 12.0, "calls_made": 4, "input_tokens": 9000, "output_tokens": 900,
         "made_input_tokens": 3000, "made_output_tokens": 150}     # cache hits' tokens must not count
    rows = [{"study": "s", "by_kind_model": {"chat:m": u, "embed:e": dict(u, seconds=1.0)}}]
    top = slowest_phases(rows)
    assert top[0]["limit_s"] == 6.0 and top[0]["x_limit"] == 2.0          # 3 s prefill + 3 s decode
    assert "limit_s" not in top[1]                                         # embeddings: no LLM yardstick
    assert phases_lines(rows, k=1)[0].endswith("; 2.0x the 6 s this machine's measured speed allows")


def _phases(model, kinds, seconds=5.0):
    u = {"seconds": seconds, "calls_made": 3, "input_tokens": 90, "output_tokens": 9,
         "made_input_tokens": 90, "made_output_tokens": 9}
    return [{"study": "divergent", "by_kind_model": {f"{k}:{model}": u for k in kinds}}]


def test_a_local_model_behind_three_slow_phases_is_measured_and_named_once(tmp_path, monkeypatch, capsys):
    from creval.book.studies import measure_slow_models
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    measured = []
    monkeypatch.setattr(throughput, "ensure", lambda model, **kw: measured.append(model))  # nothing stored
    measure_slow_models(_phases("smollm2-135m", ["choice", "loglikelihood", "sample"]))
    assert measured == ["smollm2-135m"]
    assert capsys.readouterr().err.count("measuring smollm2-135m's own speed") == 1


def test_a_model_behind_an_api_is_never_measured_and_no_line_says_it_is(tmp_path, monkeypatch, capsys):
    from creval.book.studies import measure_slow_models
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    measured = []
    monkeypatch.setattr(throughput, "ensure", lambda model, **kw: measured.append(model))
    measure_slow_models(_phases("gpt-4o-mini", ["chat", "sample", "choice"]))
    assert measured == [] and capsys.readouterr().err == ""
    assert throughput.behind_api("gpt-4o-mini") and not throughput.behind_api("smollm2-135m")
