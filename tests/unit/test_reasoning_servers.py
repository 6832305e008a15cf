"""Issue 45: every server reply is checked before it is recorded. Against fakes that behave as the providers
document, a run ends with the right reply or one sentence naming the problem and the fix; never an empty answer or
a ``<think>`` sample recorded as ok. Sources of each fake behaviour (models/standin_providers.py):

- OpenAI reasoning models spend ``max_completion_tokens`` on hidden reasoning and return ``content: ""`` with
  ``finish_reason: "length"`` when it runs out: https://platform.openai.com/docs/guides/reasoning
  ("Allocating space for reasoning"); they take ``reasoning_effort``: https://platform.openai.com/docs/api-reference/chat/create
- Qwen3 on vLLM without a reasoning parser writes ``<think>...</think>`` into the content unless
  ``chat_template_kwargs: {enable_thinking: false}``: https://qwen.readthedocs.io/en/latest/deployment/vllm.html,
  https://docs.vllm.ai/en/latest/features/reasoning_outputs.html
- Ollama's OpenAI API puts thinking in ``message.reasoning`` and turns it off only with ``reasoning_effort: "none"``:
  https://docs.ollama.com/api/openai-compatibility (ollama/ollama#12004)
- Ollama before 0.12.11 ignores ``logprobs``: https://github.com/ollama/ollama/blob/main/docs/api/openai-compatibility.mdx
"""
import dataclasses
import re

import pytest
import yaml

from creval.core.errors import CrevalError
from creval.models.openai_compat import OpenAIBackend
from creval.models.registry import get_spec
from creval.models.requests import ChatRequest, ChoiceRequest, SampleRequest
from creval.models.spec import ModelSpec
from creval.models.standin import StandIn

HI = ({"role": "user", "content": "Is water wet? Answer [[YES]] or [[NO]]."},)
JUDGE = ChatRequest(HI, temperature=0.0, max_tokens=8)


def backend(server, name, **kw) -> OpenAIBackend:
    extra = {"max_retries": 1, "retry_backoff": 0.01}
    return OpenAIBackend(ModelSpec(**{"name": name, "backend": "openai", "model": name, "base_url": server.url,
                                      "concurrency": 4, "extra": extra, **kw}))


def shipped(name: str, server, model: str | None = None) -> OpenAIBackend:
    """A shipped spec from params/models/, pointed at the fake (no key goes to a local address)."""
    spec = get_spec(name)
    return OpenAIBackend(dataclasses.replace(spec, base_url=server.url, api_key_env="", model=model or spec.model,
                                             extra={**spec.extra, "max_retries": 1, "retry_backoff": 0.01}))


REASONING = {"token_limit": "max_completion_tokens", "drop": ["temperature", "top_p", "stop", "logprobs"]}


def test_a_reasoning_models_empty_answer_is_one_sentence_naming_the_budget_and_the_fix():
    with StandIn(latency=0, behaviour="openai-reasoning") as s:
        bare = backend(s, "o-bare", request=REASONING, can={"logprobs": "none", "completions": False})
        with pytest.raises(CrevalError, match=r"the reply is empty because its 8-token budget ran out "
                                              r"\(finish_reason \"length\"\) after 8 tokens of reasoning") as e:
            bare.chat([JUDGE])
        assert "reasoning_room" in e.value.fix and "reasoning_effort" in e.value.fix
        roomy = backend(s, "o-room", request=REASONING, reasoning_room=100)
        c, = roomy.chat([JUDGE])
        assert c.text.startswith("Use the") and c.reasoning_tokens == 16
        (_, body), = roomy.chat_requests([JUDGE])
        assert body["max_completion_tokens"] == 108


def test_the_shipped_gpt5_spec_answers_a_judges_small_budget():
    with StandIn(latency=0, behaviour="openai-reasoning") as s:
        be = shipped("gpt-5-mini", s)
        (_, body), = be.chat_requests([JUDGE])
        assert body["reasoning_effort"] == "minimal" and body["max_completion_tokens"] == 2008
        assert "temperature" not in body
        c, = be.chat([JUDGE])
        assert c.text and c.finish_reason == "stop"


def test_qwen3_thinking_in_the_content_is_refused_unless_the_spec_says_to_strip_it():
    with StandIn(latency=0, behaviour="vllm-qwen3") as s:
        plain = backend(s, "qwen3-plain", can={"logprobs": "raw"})
        with pytest.raises(CrevalError, match=r"the reply carries thinking \(<think>\) and the spec does not say"):
            plain.chat([ChatRequest(HI, max_tokens=64)])
        with pytest.raises(CrevalError, match=r"a sample carries thinking \(<think>\)"):
            plain.sample(SampleRequest(HI, max_tokens=8), [0])
        with pytest.raises(CrevalError, match=r"opens with thinking"):
            plain.choice_logprobs([ChoiceRequest(HI, ("[[YES]]", "[[NO]]"))])
        # thinking: true strips a chat reply's thinking and switches it off for samples (chat_template_kwargs)
        strip = backend(s, "qwen3-strip", thinking=True, can={"logprobs": "raw"})
        c, = strip.chat([ChatRequest(HI, max_tokens=64)])
        assert "<think>" not in c.text and c.text.startswith("Use the") and "let me think" in c.reasoning
        smp, = strip.sample(SampleRequest(HI, max_tokens=8), [0])
        assert "<think>" not in smp.text and smp.token_logprobs


def test_ollama_ignores_chat_template_kwargs_and_thinking_off_needs_reasoning_effort_none():
    with StandIn(latency=0, behaviour="ollama-think") as s:
        kw = backend(s, "ollama-kw", thinking=True, can={"logprobs": "raw"})
        with pytest.raises(CrevalError, match=r"a sample carries thinking \(a reasoning field\)"):
            kw.sample(SampleRequest(HI, max_tokens=8), [0])
        with pytest.raises(CrevalError, match=r"the reply is empty because its 8-token budget ran out"):
            kw.chat([JUDGE])
        be = shipped("ollama-qwen3", s)
        smp, = be.sample(SampleRequest(HI, max_tokens=8), [0])
        c, = be.chat([JUDGE])
        assert smp.text and smp.token_logprobs and c.text and not c.reasoning


def _check(server, spec: ModelSpec, trust: bool = False) -> str:
    from creval.commands.check import report
    from creval.models.probe import probe
    return report(spec, probe(spec), trust)


def _completed(spec: ModelSpec, text: str) -> ModelSpec:
    """The spec with the block `creval check` printed pasted in (top-level fields, request and can merged)."""
    add = yaml.safe_load(text.split("(runs read the spec; they do not probe):\n", 1)[1])
    can = {**(spec.can or {}), **add.pop("can", {})}
    req = {**(spec.request or {}), **add.pop("request", {})}
    return dataclasses.replace(spec, can=can, request=req, **add)


@pytest.mark.parametrize("behaviour,expect", [
    ("openai-reasoning", [r"reasoning_room: 2000", r"drop:\n  - top_p\n  - stop\n  - logprobs\n  - temperature"]),
    ("vllm-qwen3", [r"thinking: true", r"enable_thinking: false", r"thinking goes away with request"]),
    ("ollama-think", [r"reasoning_effort: none", r"thinking goes away with reasoning_effort"]),
])
def test_the_block_check_prints_makes_a_spec_that_runs_the_studies_requests(behaviour, expect):
    from creval.models import capabilities
    with StandIn(latency=0, behaviour=behaviour) as s:
        spec = backend(s, f"chk-{behaviour}").spec
        text = _check(s, spec)
        for line in expect:
            assert re.search(line, text), (line, text)
        done = OpenAIBackend(_completed(spec, text))
        c, = done.chat([JUDGE])                                      # a judge: temperature 0, 8 tokens
        assert c.text
        if capabilities.able(done.spec, "sample")[0]:
            smp, = done.sample(SampleRequest(HI, temperature=1.0, top_p=0.9, max_tokens=8), [0])
            assert smp.text and "<think>" not in smp.text
            r, = done.choice_logprobs([ChoiceRequest(HI, ("YES", "NO"))])
            assert not r.unparsed
        else:
            assert behaviour == "openai-reasoning"


def test_check_says_where_the_server_contradicts_the_spec_and_refuses_those_phases():
    with StandIn(latency=0, behaviour="ollama-old") as s:
        spec = dataclasses.replace(get_spec("ollama-example"), base_url=s.url)
        text = _check(s, spec)
        assert re.search(r"logprobs: none \(probe; THE SPEC SAYS raw, WHICH THE SERVER CONTRADICTS\)", text)
        assert re.search(r"step samples \(as model\)\s+no", text)
        assert re.search(r"can:\n(  .*\n)*  logprobs: none", text) and "--trust-spec" in text
        trusted = _check(s, spec, trust=True)
        assert re.search(r"step samples \(as model\)\s+yes", trusted)
