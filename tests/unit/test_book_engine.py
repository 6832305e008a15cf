"""Choosing the engine that serves the embedded model in `creval book` (no server started here)."""
import pytest

from creval.commands import book
from creval.core.errors import CrevalError
from creval.models import vllm_local


def test_auto_takes_vllm_only_where_it_is_installed(monkeypatch):
    monkeypatch.setattr(vllm_local, "unavailable", lambda: "vLLM is not installed: run `make vllm`")
    assert book.choose_engine("auto") == ("llamacpp", "auto: vLLM is not installed: run `make vllm`")
    assert book.choose_engine("llamacpp")[0] == "llamacpp"
    with pytest.raises(CrevalError, match="--engine vllm: vLLM is not installed"):
        book.choose_engine("vllm")
    monkeypatch.setattr(vllm_local, "unavailable", lambda: None)
    assert book.choose_engine("auto")[0] == "vllm" and book.choose_engine("vllm")[0] == "vllm"
    with pytest.raises(CrevalError, match="not one of"):
        book.choose_engine("ollama")


def test_only_the_embedded_model_moves_to_the_server():
    p = book.on_engine({"model": "smollm2-135m", "models": ["gpt-4o", "smollm2-135m"], "judge_model": "gpt-4o"},
                       "served")
    assert (p["model"], p["models"], p["judge_model"]) == ("served", ["gpt-4o", "served"], "gpt-4o")
    other = {"model": "gpt-4o", "judge_model": "gpt-4o-mini"}
    assert book.on_engine(other, "x") == book.on_engine(other, book.EMBEDDED)    # nothing to serve


def test_the_unused_engine_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(vllm_local, "unavailable", lambda: None)
    monkeypatch.setattr(vllm_local, "serve", lambda *a, **k: pytest.fail("a server was started"))
    with book.book_engine({"model": "gpt-4o", "judge_model": "gpt-4o"}, tmp_path, "vllm") as (params, info):
        assert params["model"] == "gpt-4o" and info["engine"] == "none"
