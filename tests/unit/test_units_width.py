"""How many units a study keeps in flight: a server's budget, 16 for a local model that gathers across units."""
from creval.core.units import GPU_WIDTH, LOCAL_WIDTH
from creval.models import width as units
from creval.models.base import BackendBase


def test_a_gathering_local_model_gets_many_units_in_flight_and_the_others_one(monkeypatch):
    assert units.width("smollm2-135m-hf") == LOCAL_WIDTH == 16    # transformers: requests gathered into batches
    assert units.width("smollm2-135m-hf", "") == LOCAL_WIDTH
    monkeypatch.setattr(units, "backend_class", lambda spec: type("Plain", (BackendBase,), {}))
    assert units.width("smollm2-135m-hf") == 1                    # a local backend that does not gather


def test_a_gathering_model_on_a_gpu_gets_four_times_the_units():
    assert units.local_width("cpu") == LOCAL_WIDTH == 16
    assert units.local_width("cuda") == units.local_width("cuda:1") == GPU_WIDTH == 64


def test_scoring_on_the_cpu_keeps_few_texts_in_flight_and_a_gpu_or_server_keeps_its_width(monkeypatch):
    from creval.models.registry import get_spec
    monkeypatch.setattr(units, "torch_device", lambda: "cpu")
    assert units.width("smollm2-135m-hf", scoring=True) == units.SCORE_WIDTH_CPU == 4 < units.width("smollm2-135m-hf")
    monkeypatch.setattr(units, "torch_device", lambda: "cuda")
    assert units.width("smollm2-135m-hf", scoring=True) == GPU_WIDTH
    monkeypatch.setattr(units, "torch_device", lambda: "cpu")
    assert get_spec("vllm-example").is_server and units.width("vllm-example", scoring=True) == 64   # its own budget
