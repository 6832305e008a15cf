"""A spec says what its server needs and can do (issue 32, item 4): request shaping, capabilities, backends that
declare themselves."""
import pytest

from creval.core.errors import CrevalError
from creval.models import capabilities, registry, shaping
from creval.models.spec import ModelSpec
from creval.studies.registry import model_phases, run_notes

REASONING = dict(token_limit="max_completion_tokens", drop=["temperature", "top_p", "stop", "logprobs"])


def spec(**kw):
    return ModelSpec(**{"name": "m", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", **kw})


def test_a_reasoning_models_requests_carry_only_what_it_takes():
    s = spec(request=REASONING)
    body = shaping.shape(s, "chat", "/chat/completions", {"model": "m", "max_tokens": 64, "temperature": 0.0,
                                                          "top_p": 0.9, "logprobs": True, "top_logprobs": 5})
    assert body == {"model": "m", "max_completion_tokens": 64}


def test_extra_body_fields_reach_every_request_and_thinking_is_off_for_samples():
    s = spec(thinking=True, request={"body": {"top_k": 20, "chat_template_kwargs": {"x": 1}}})
    sample = shaping.shape(s, "sample", "/chat/completions", {"model": "m"})
    assert sample["chat_template_kwargs"] == {"enable_thinking": False, "x": 1} and sample["top_k"] == 20
    chat = shaping.shape(s, "chat", "/chat/completions", {"model": "m"})
    assert chat["chat_template_kwargs"] == {"x": 1}         # a chat reply may think (its thinking is stripped)
    assert "chat_template_kwargs" not in shaping.shape(spec(), "sample", "/chat/completions", {})


def test_a_thinking_model_that_cannot_stop_thinking_is_refused_in_one_sentence():
    s = spec(thinking=True, can={"thinking_off": False, "logprobs": "raw"})
    assert capabilities.refusal(s, "sample") == ("model m cannot do sampling with token log-probs: it thinks before "
                                                 "answering and its thinking cannot be switched off")
    from creval.models.openai_compat import OpenAIBackend
    from creval.models.requests import SampleRequest
    with pytest.raises(CrevalError, match="thinking cannot be switched off"):
        OpenAIBackend(s).sample_requests(SampleRequest(({"role": "user", "content": "hi"},)), [0])


def test_capabilities_say_which_phases_run_and_why():
    chat_only = spec(can={"logprobs": "none", "completions": False})
    rows = {(st, ph): (ok, why) for st, ph, ok, why in capabilities.phase_table(
        chat_only, capabilities.of(chat_only), model_phases())}
    assert rows[("rethinking", "perplexity (as model)")] == ("no", "log-likelihoods (perplexity): it has no "
                                                                   "/completions endpoint (a chat-only model)")
    assert rows[("divergent", "step samples (as model)")][0] == "no"
    assert rows[("neocoder", "programs (as model)")][0] == "yes"
    assert rows[("convergent", "verdicts (as judge)")][0] == "?"          # text verdicts yes, log-prob ones no
    unknown = spec()
    assert capabilities.able(unknown, "loglikelihood")[0] is None
    assert capabilities.able(ModelSpec(name="l", backend="llamacpp"), "loglikelihood")[0] is True


def test_the_records_name_the_servers_log_prob_kind():
    assert capabilities.logprob_kind(spec()) == "server"
    assert capabilities.logprob_kind(spec(can={"logprobs": "processed"})) == "processed"
    with pytest.raises(CrevalError, match="can.logprobs must be one of"):
        capabilities.of(spec(can={"logprobs": "tempered"}))


def test_new_spec_fields_leave_old_cache_keys_alone():
    old = spec().identity()
    assert "request" not in old and "document_start" not in old and "can" not in old
    assert spec(request={"timeout": 600}).identity() == old          # waiting longer changes no answer
    assert spec(can={"logprobs": "raw"}).identity() == old
    assert spec(request={"body": {"top_k": 20}}).identity()["request"] == {"body": {"top_k": 20}}


def test_a_wrong_request_field_is_one_clear_error():
    with pytest.raises(CrevalError, match="request.token_limit must be one of"):
        shaping.settings(spec(request={"token_limit": "max_new_tokens"}))
    with pytest.raises(CrevalError, match="unknown request fields"):
        shaping.settings(spec(request={"extra_body": {}}))
    assert shaping.timeout(spec(request={"timeout": 900})) == 900.0


def test_each_backend_declares_itself_and_a_fourth_does_not_keyerror(monkeypatch):
    assert spec().is_server and not ModelSpec(name="l", backend="llamacpp").is_server
    assert registry.backend_info("hf").needs == "transformers"
    monkeypatch.setitem(registry.BACKENDS, "remote2", registry.BackendInfo(
        "creval.models.openai_compat:OpenAIBackend", True, None))
    s = spec(backend="remote2")
    assert s.is_server and registry.check(s) == (True, "http://127.0.0.1:9/v1")
    with pytest.raises(CrevalError, match="unknown backend 'nope'"):
        ModelSpec(name="x", backend="nope").is_server


def test_every_shipped_server_spec_is_well_formed():
    for name, s in registry.all_specs().items():
        if s.is_server:
            shaping.settings(s)
            capabilities.of(s)


def test_a_run_says_first_which_phases_cannot_run_on_its_models():
    notes = run_notes("rethinking", {"model": "gpt-5-mini", "judge_model": "gpt-4o"})
    assert notes == ["rethinking: perplexity cannot run on gpt-5-mini: model gpt-5-mini cannot do log-likelihoods "
                     "(perplexity): it has no /completions endpoint (a chat-only model)"]
    assert run_notes("divergent", {"model": "smollm2-135m", "judge_model": "smollm2-135m"}) == []


def test_each_backend_owns_its_check_and_no_backend_imports_the_registry():
    from pathlib import Path

    from creval.models import backends
    for name in backends.BACKENDS:
        cls = registry.backend_class(ModelSpec(name="x", backend=name))
        assert callable(cls.check)
        src = Path(__import__(cls.__module__, fromlist=["x"]).__file__).read_text()
        assert "models.registry" not in src, f"{cls.__module__} reaches up into the registry"
    hub = ModelSpec(name="h", backend="hf", model="someone/some-model")      # no source: a Hub id
    assert registry.check(hub)[0] and registry.check(hub)[1].startswith("Hugging Face Hub id someone/some-model")
    gone = ModelSpec(name="g", backend="llamacpp", source={"path": "/nonexistent/model.gguf"})
    assert registry.check(gone) == (False, "download the file there")
