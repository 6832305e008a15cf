"""The device choice for the local neural parts (entailment cross-encoder, embedder)."""
import pytest

from creval.core.errors import CrevalError
from creval.models.device import choose


def test_the_gpu_is_used_when_torch_sees_one_and_the_cpu_otherwise():
    assert choose("", True) == "cuda" and choose("auto", True) == "cuda"
    assert choose("", False) == "cpu" and choose("AUTO", False) == "cpu"
    assert choose("cpu", True) == "cpu" and choose("cuda:1", True) == "cuda:1"


def test_a_device_that_is_not_there_is_one_clear_error():
    with pytest.raises(CrevalError, match="sees no CUDA"):
        choose("cuda", False)
    with pytest.raises(CrevalError, match="not a device"):
        choose("tpu", True)


def test_this_machine_records_where_the_embedder_ran(tmp_path, monkeypatch):
    import torch

    from creval.core.runs import RunStore
    from creval.models.embeddings import Embedder
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    Embedder().encode(["a fork", "a spoon"])
    store = RunStore(tmp_path / "run")
    assert store.manifest()["accelerator"] == ("cuda" if torch.cuda.is_available() else "cpu")
    store.finish()
