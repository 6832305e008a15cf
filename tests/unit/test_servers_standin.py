"""What the user sees against each provider the stand-in imitates (issue 32, item 2): one clear sentence or the
right number, never a silent default; and what ``creval check`` prints for it."""
import math

import pytest

from creval.core.errors import CrevalError
from creval.models.openai_compat import OpenAIBackend
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest, SampleRequest
from creval.models.spec import ModelSpec
from creval.models.standin import StandIn

HI = ({"role": "user", "content": "Is water wet? Answer [[YES]] or [[NO]]."},)
REASONING = {"token_limit": "max_completion_tokens", "drop": ["temperature", "top_p", "stop", "logprobs"]}


def backend(server, name, **kw):
    extra = {"max_retries": 3, "retry_backoff": 0.05, **kw.pop("extra", {})}
    return OpenAIBackend(ModelSpec(**{"name": name, "backend": "openai", "model": name, "base_url": server.url,
                                      "concurrency": 4, "extra": extra, **kw}))


def test_openai_reasoning_model_refuses_max_tokens_until_the_spec_shapes_requests():
    with StandIn(latency=0, behaviour="openai-reasoning") as s:
        with pytest.raises(CrevalError, match="Use 'max_completion_tokens' instead"):
            backend(s, "o-plain").chat([ChatRequest(HI)])
        shaped = backend(s, "o-shaped", request=REASONING, can={"logprobs": "none", "completions": False})
        c, = shaped.chat([ChatRequest(HI, max_tokens=40)])
        assert c.text and c.reasoning_tokens == 16
        before = s.stats["requests"]
        with pytest.raises(CrevalError, match="cannot do sampling with token log-probs: it returns no token"):
            shaped.sample(SampleRequest(HI), [0])
        assert s.stats["requests"] == before                     # refused before any call


def test_chat_only_model_has_no_perplexity_and_says_why():
    with StandIn(latency=0, behaviour="openai-chat") as s:
        with pytest.raises(CrevalError, match="does not support echoed log-probs.*This is a chat model"):
            backend(s, "chat-only").loglikelihood([LoglikelihoodRequest("The cat sat")])
        with pytest.raises(CrevalError, match="cannot do log-likelihoods .perplexity.: it has no /completions"):
            backend(s, "chat-only2", can={"completions": False}).loglikelihood([LoglikelihoodRequest("x")])


def test_legacy_completions_cap_of_five_and_no_echo_with_logprobs():
    with StandIn(latency=0, behaviour="openai-instruct") as s:
        with pytest.raises(CrevalError, match="logprobs must be at most 5"):
            backend(s, "instruct", api="completions").choice_logprobs([ChoiceRequest(HI, ("[[YES]]", "[[NO]]"))])
        capped = backend(s, "instruct5", api="completions", can={"top_logprobs": 5})
        r, = capped.choice_logprobs([ChoiceRequest(HI, ("YES", "NO"))])
        assert math.isfinite(r.logprobs["YES"]) and math.isfinite(r.logprobs["NO"])
        with pytest.raises(CrevalError, match="Setting 'echo' and 'logprobs' at the same time is not supported"):
            capped.loglikelihood([LoglikelihoodRequest("The cat sat")])


def test_an_empty_account_stops_at_once_with_one_sentence():
    with StandIn(latency=0, behaviour="quota") as s:
        with pytest.raises(CrevalError, match="no quota left .429 insufficient_quota") as e:
            backend(s, "broke").chat([ChatRequest(HI)])
        assert "waiting will not help" in e.value.fix and s.stats["refused"] == 1        # asked once, not retried


@pytest.mark.parametrize("form", ["rate-ms", "rate-seconds", "rate-date"])
def test_rate_limits_are_waited_out_in_every_retry_after_form(form):
    with StandIn(latency=0, behaviour=form, rate_first=1) as s:
        c, = backend(s, f"busy-{form}").chat([ChatRequest(HI)])
        assert c.text.startswith("Use the")                      # answered after the 429


def test_old_ollama_without_log_probs_is_an_error_for_samples_and_unparsed_for_choices():
    from creval.judges.parsing import logprob_verdict
    from creval.models.cached import Model
    with StandIn(latency=0, behaviour="ollama-old") as s:
        be = backend(s, "ollama-old")
        with pytest.raises(CrevalError, match="returned a sample without its token log-probs"):
            be.sample(SampleRequest(HI), [0])
        r, = be.choice_logprobs([ChoiceRequest(HI, ("[[YES]]", "[[NO]]"))])
        assert r.unparsed
        assert logprob_verdict(Model(be), list(HI)).unparsed


def test_ollama_context_truncation_is_refused_rather_than_scored():
    long = ({"role": "user", "content": "word " * 4000}, {"role": "user", "content": "and?"})
    with StandIn(latency=0, behaviour="ollama-truncate") as s:
        c, = backend(s, "ollama-silent").chat([ChatRequest(long)])      # without the spec saying: answered
        assert c.input_tokens < 4096 < len("word " * 4000) // 4         # ... on what was kept (the number shows it)
        with pytest.raises(CrevalError, match="does not fit its context of 4096 tokens"):
            backend(s, "ollama", can={"truncates": True}).chat([ChatRequest(long)])


def test_sglang_tempered_log_probs_are_found_processed_by_the_probe():
    from creval.models.probe import probe
    with StandIn(latency=0, behaviour="sglang") as s:
        found = probe(backend(s, "sglang").spec)
        assert found["can"]["logprobs"] == "processed" and found["server"]["name"] == "sglang"
    with StandIn(latency=0) as s:
        assert probe(backend(s, "plain").spec)["can"]["logprobs"] == "raw"


def test_llama_servers_echo_500_is_reported_with_its_reason_and_not_retried():
    with StandIn(latency=0, behaviour="llama-server") as s:
        with pytest.raises(CrevalError, match="Only no echo is supported"):
            backend(s, "llama-server").loglikelihood([LoglikelihoodRequest("The cat sat")])
        assert s.stats["refused"] == 1                                  # one refusal, not six retries


@pytest.mark.parametrize("behaviour,lines", [
    ("", [r"server: creval-standin standin-0", r"logprobs: raw \(probe\)", r"echo: True \(probe\)",
          r"perplexity \(as model\)\s+yes", r"step samples \(as model\)\s+yes"]),
    ("openai-reasoning", [r"server: openai", r"logprobs: none \(probe\)", r"completions: False \(probe\)",
                          r"token_limit: max_completion_tokens\n  drop:\n  - top_p\n  - stop\n  - logprobs\n"
                          r"  - temperature",                    # temperature 0 (a judge's) refused, 1 accepted
                          r"step samples \(as model\)\s+no", r"programs \(as model\)\s+yes"]),
    ("openai-chat", [r"completions: False \(probe\)", r"perplexity \(as model\)\s+no",
                     r"step samples \(as model\)\s+yes"]),
    ("ollama-old", [r"server: ollama 0.12.3", r"logprobs: none \(probe\)", r"step samples \(as model\)\s+no",
                    r"the chat reply carries no log-probs"]),
    ("llama-server", [r"echo: False \(probe\)", r"Only no echo is supported", r"perplexity \(as model\)\s+no"]),
    ("sglang", [r"logprobs: processed \(probe\)", r"can:\n(  .*\n)*  logprobs: processed"]),
])
def test_check_prints_what_runs_on_each_fake(behaviour, lines):
    import re

    from creval.commands.check import report
    from creval.models.probe import probe
    with StandIn(latency=0, behaviour=behaviour) as s:
        spec = backend(s, f"chk-{behaviour or 'plain'}").spec
        text = report(spec, probe(spec))
    for line in lines:
        assert re.search(line, text), (line, text)


def test_the_manifest_names_the_server_and_its_log_probs():
    from creval.core.runs import RunStore
    from creval.models.cached import Model
    with StandIn(latency=0) as s:
        m = Model(backend(s, "named", can={"logprobs": "raw"}))
        store = RunStore.__new__(RunStore)
        store.models = {}
        store.note_model(m)
    assert store.models["named"]["server"] == {"name": "creval-standin", "version": "standin-0", "logprobs": "raw"}
    assert store.models["named"]["logprob_kind"] == "raw"


def test_echoes_align_by_token_ids_where_token_strings_do_not_give_the_text_back():
    req = LoglikelihoodRequest("sat on the mat", "The cat ")
    with StandIn(latency=0) as s:
        want, = backend(s, "by-strings", document_start="<s>").loglikelihood([req])
    with StandIn(latency=0, behaviour="vllm-spaces") as s:
        with pytest.raises(CrevalError, match="does not echo the prompt's tokens"):
            backend(s, "spaces", document_start="<s>").loglikelihood([req])
        ids = backend(s, "spaces-ids", document_start="<s>", can={"echo_ids": True})
        got, = ids.loglikelihood([req])
        from creval.models.probe import probe
        assert probe(ids.spec)["can"]["echo_ids"] is True
    assert got.token_logprobs == want.token_logprobs and len(got.token_logprobs) == 4
    assert got.context_tokens == want.context_tokens == 2 and got.skipped_tokens == 0


def test_the_document_start_is_sent_only_where_the_server_adds_none():
    req = LoglikelihoodRequest("sat", "The cat ")
    spec = dict(name="d", backend="openai", model="d", base_url="http://127.0.0.1:9/v1", document_start="<s>")
    (_, body), = OpenAIBackend(ModelSpec(**spec)).loglikelihood_requests([req])
    assert body["prompt"] == "<s>The cat sat"
    (_, body), = OpenAIBackend(ModelSpec(**spec, can={"adds_document_start": True})).loglikelihood_requests([req])
    assert body["prompt"] == "The cat sat"
    (_, body), = OpenAIBackend(ModelSpec(**spec, can={"echo_ids": True})).loglikelihood_requests([req])
    assert body["prompt"] == ["<s>The cat ", "<s>The cat sat"] and body["return_tokens_as_token_ids"] is True


def test_a_queue_is_waited_for_and_keeps_the_budget_and_a_timeout_names_the_queue():
    with StandIn(latency=0.2, capacity=1) as s:       # one slot: seven of eight requests wait in the server's queue
        be = backend(s, "queued", concurrency=8, request={"timeout": 30})
        out = be.chat([ChatRequest(HI, seed=k) for k in range(8)])
        assert len(out) == 8 and s.stats["peak_in_flight"] == 1
        assert be._endpoint().budget.limit == 8                   # a queue is not a 429: the budget stays
        short = backend(s, "impatient", request={"timeout": 0.05}, extra={"max_retries": 0})
        with pytest.raises(CrevalError, match="no reply within 0.05 s .a queueing server such as vLLM may need a "
                                              "longer `request: .timeout"):
            short.chat([ChatRequest(HI)])


def test_check_runs_from_the_command_line(tmp_path, capsys):
    from creval.cli import main
    with StandIn(latency=0, behaviour="openai-chat") as s:
        spec = tmp_path / "chatonly.yaml"
        spec.write_text(f"backend: openai\nmodel: gpt-4o\nbase_url: {s.url}\n")
        assert main(["check", str(spec)]) == 0
        probed = capsys.readouterr().out
        assert main(["check", str(spec), "--no-probe"]) == 0
        said = capsys.readouterr().out
    assert "completions: False (probe)" in probed and "add to the spec" in probed
    assert "completions: ? (unknown)" in said and "server:" not in said


def test_a_rate_limit_that_holds_says_so():
    with StandIn(latency=0, behaviour="rate-ms", rate_first=100) as s:
        with pytest.raises(CrevalError, match="failed 2 times .* 429: Rate limit reached") as e:
            backend(s, "held", extra={"max_retries": 1}).chat([ChatRequest(HI)])
        assert "lower `concurrency`" in e.value.fix and s.stats["refused"] == 2


def test_a_text_alone_is_read_by_ids_and_a_start_the_server_adds_is_not_text():
    with StandIn(latency=0, behaviour="vllm-spaces") as s:
        plain, = backend(s, "ids-alone", can={"echo_ids": True}).loglikelihood([LoglikelihoodRequest("The cat sat")])
        own, = backend(s, "ids-own-start", can={"echo_ids": True, "adds_document_start": True}).loglikelihood(
            [LoglikelihoodRequest("The cat sat")])
    assert plain.skipped_tokens == 1 and len(plain.token_logprobs) == 2       # the first token has no log-prob
    assert own.token_logprobs == plain.token_logprobs and own.skipped_tokens == 0   # the server's start is not text
