"""Issue 45's small pure pieces: reply checks, reasoning fields of a spec, the empty sample's log-prob, choices that
are missing or follow a whitespace token, -0.0 entropies, bad spec numbers, reasoning tokens in the estimate."""
import math

import pytest

from creval.core.errors import CrevalError
from creval.measures import entropy
from creval.models import replies, shaping
from creval.models.base import BackendBase
from creval.models.choices import score_choices
from creval.models.records import ChoiceScores, Sample
from creval.models.spec import ModelSpec


def spec(**kw) -> ModelSpec:
    return ModelSpec(**{"name": "m", "backend": "openai", "model": "m", **kw})


def test_a_chat_reply_is_stripped_by_the_declared_rule_or_refused():
    assert replies.checked_chat(spec(thinking=True), "<think>hmm</think>\n\nYes.", "", "stop") == ("Yes.", "hmm")
    with pytest.raises(CrevalError, match=r"carries thinking \(</think>\) and the spec does not say to strip it"):
        replies.checked_chat(spec(), "so yes</think> Yes.", "", "stop")
    with pytest.raises(CrevalError, match=r"its 72-token budget ran out"):
        replies.checked_chat(spec(reasoning_room=64), "", "", "length", 8)
    with pytest.raises(CrevalError, match="has thinking and no answer"):
        replies.checked_chat(spec(), "", "I should think first", "stop")
    assert replies.checked_chat(spec(), "", "", "stop") == ("", "")        # a model may say nothing, and stop


def test_a_sample_with_thinking_is_refused_and_a_clean_one_passes():
    with pytest.raises(CrevalError, match=r"a sample carries thinking \(<think>\)"):
        replies.checked_sample(spec(thinking=True), "<think>", "")
    with pytest.raises(CrevalError, match=r"a sample carries thinking \(a reasoning field\)"):
        replies.checked_sample(spec(), "Yes", "let me see")
    replies.checked_sample(spec(), "a lever", "")


def test_reasoning_effort_and_room_are_sent_as_the_spec_says_and_bad_values_are_one_error():
    s = spec(reasoning_effort="none", reasoning_room=100, request={"token_limit": "max_completion_tokens"})
    chat = shaping.shape(s, "chat", "/chat/completions", {"max_tokens": 8})
    assert chat == {"max_completion_tokens": 108, "reasoning_effort": "none"}
    sample = shaping.shape(s, "sample", "/chat/completions", {"max_tokens": 8})
    assert sample == {"max_completion_tokens": 8, "reasoning_effort": "none"}       # room only for chat replies
    assert "reasoning_effort" not in shaping.shape(s, "loglikelihood", "/completions", {"max_tokens": 1})
    with pytest.raises(CrevalError, match="reasoning_effort must be one of none, minimal, low, medium, high"):
        replies.checked_effort(spec(reasoning_effort="max"))
    with pytest.raises(CrevalError, match="reasoning_room must be a whole number"):
        replies.checked_effort(spec(reasoning_room=-5))


def test_the_reasoning_fields_stay_out_of_an_old_specs_identity():
    assert "reasoning_effort" not in spec().identity() and "reasoning_room" not in spec().identity()
    assert spec(reasoning_effort="minimal").identity()["reasoning_effort"] == "minimal"


def test_an_empty_sample_has_no_log_prob_and_no_weight_in_the_entropy():
    empty = Sample("", ())
    assert math.isnan(empty.mean_logprob)
    # four samples, the empty one a STOP vote in its own class: before, its 0.0 (probability 1) outweighed the rest
    lps = [-1.0, -1.2, -0.9, empty.mean_logprob]
    ids = [0, 1, 1, 2]
    h = entropy.semantic_entropy(lps, ids)
    assert h == pytest.approx(entropy.semantic_entropy(lps[:3], ids[:3]))
    assert entropy.unweighted(lps) == 1
    assert entropy.semantic_entropy([math.nan, math.nan], [0, 1]) == pytest.approx(math.log(2))


def test_an_entropy_is_never_minus_zero():
    h = entropy.semantic_entropy([-0.5, -0.7], [0, 0])
    d = entropy.discrete_entropy([3, 3, 3])
    assert h == 0.0 and math.copysign(1, h) == 1 and math.copysign(1, d) == 1


def test_a_choice_missing_from_the_listed_tokens_is_unparsed_not_certain():
    steps = [("YES", -0.01, {"YES": -0.01, "Maybe": -5.0})]
    scores = score_choices(steps, ("YES", "NO"))
    assert scores["YES"] == pytest.approx(-0.01) and scores["NO"] == -math.inf
    assert ChoiceScores(scores).unparsed
    assert not ChoiceScores({"YES": -0.01, "NO": -4.0}).unparsed


def test_a_reply_that_opens_with_whitespace_is_scored_at_the_answers_token():
    steps = [("\n", -0.2, {"\n": -0.2, "NO": -3.0}), ("YES", -0.1, {"YES": -0.1, "NO": -2.5})]
    scores = score_choices(steps, ("YES", "NO"))
    assert scores["YES"] == pytest.approx(-0.3)              # through the newline, then YES
    assert scores["NO"] == pytest.approx(-2.7)               # through the newline beats NO at the first step (-3.0)


def test_bad_spec_numbers_are_one_clear_error(tmp_path):
    from creval.models.registry import read_spec
    for bad in ("-3", "0"):
        p = tmp_path / f"c{bad}.yaml"
        p.write_text(f"backend: openai\nmodel: x\nconcurrency: {bad}\n")
        with pytest.raises(CrevalError, match=rf"concurrency must be a whole number >= 1, not {bad}"):
            read_spec(p)


def test_the_estimate_counts_the_reasoning_a_reasoning_model_may_spend():
    from creval.studies.estimate import Range, reasoning
    from creval.studies.estimate.parts import calls
    part = calls("judge", "gpt-5-mini", "verdicts", 10, 100, 8)
    assert reasoning(part) == Range(0, 20000)                # minimal effort: none to 2000 tokens a call
    assert reasoning(calls("judge", "gpt-4o", "verdicts", 10, 100, 8)) == Range(0, 0)


def test_a_batch_answer_that_fails_its_check_is_held_back_and_the_others_are_read(tmp_path, monkeypatch):
    import json

    from creval.core.deferral import batch_out
    from creval.models.batchfile import read_in
    from creval.models.registry import load_model
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    (tmp_path / "srv.yaml").write_text("backend: openai\nmodel: srv\nbase_url: http://127.0.0.1:9/v1\n")
    m = load_model(str(tmp_path / "srv.yaml"))
    convos = [[{"role": "user", "content": q}] for q in ("first?", "second?")]
    with pytest.raises(Exception), batch_out(tmp_path / "req.jsonl"):
        m.chat_many(convos)
    ids = [json.loads(x)["custom_id"] for x in (tmp_path / "req.srv.chat.jsonl").read_text().splitlines()]

    def answer(cid, content):
        body = {"choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 3}}
        return json.dumps({"custom_id": cid, "response": {"status_code": 200, "body": body}})
    (tmp_path / "ans.jsonl").write_text(answer(ids[0], "<think>hmm</think> yes") + "\n" + answer(ids[1], "no") + "\n")
    got = read_in(tmp_path / "ans.jsonl")
    assert got.stored == 1 and list(got.failed) == [ids[0]] and "carries thinking" in got.failed[ids[0]]
    with batch_out(tmp_path / "again.jsonl") as wave:             # held back: not written again
        with pytest.raises(Exception):
            m.chat_many(convos)
    assert wave.written == 0 and ids[0] in wave.held


def test_a_deferral_outside_the_unit_runner_is_one_line(monkeypatch, capsys):
    import creval.commands.check as chk
    from creval.cli import main
    from creval.core.deferral import Deferred

    def written(args):
        raise Deferred("chat: 3 requests written to wave.jsonl")
    monkeypatch.setattr(chk, "cmd_check", written)
    assert main(["check", "anything"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 requests written to wave.jsonl" in err and "--batch-in" in err


def test_a_servers_log_prob_kind_is_part_of_a_calls_identity():
    from creval.models.cached import Model

    class Fake(BackendBase):
        def __init__(self, kind):
            self.spec, self.LOGPROB_KIND = spec(can={"logprobs": kind}), kind
    raw, processed = Model(Fake("raw"))._ident(), Model(Fake("processed"))._ident()
    assert raw != processed and raw["logprob_kind"] == "raw"         # a cached sample keeps its own kind


def test_a_local_models_sample_that_thinks_is_refused_too(tmp_path, monkeypatch):
    from creval.models.cached import Model
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))

    class Thinker(BackendBase):              # a local thinking model (a Qwen3 GGUF) whose samples open with <think>
        spec, LOGPROB_KIND = ModelSpec(name="thinker", backend="llamacpp", model="t"), "raw"

        def sample(self, req, indices):
            return [Sample("<think>", (-0.2,)) for _ in indices]

        def count_tokens(self, text):
            return len(text.split())
    with pytest.raises(CrevalError, match=r"a sample carries thinking \(<think>\)"):
        Model(Thinker()).sample([{"role": "user", "content": "a use for a brick?"}], 2)


def test_the_vllm_specs_shipped_and_generated_score_after_the_document_start_and_say_what_vllm_returns(tmp_path):
    from creval.models import vllm_local
    from creval.models.registry import get_spec, read_spec
    (tmp_path / "gen.yaml").write_text(vllm_local.spec_yaml("http://127.0.0.1:8123/v1"))
    for s in (read_spec(tmp_path / "gen.yaml"), get_spec("smollm2-135m-vllm")):
        assert s.document_start == "<|endoftext|>"            # SmolLM2's document separator, as in-process
        assert s.can == {"logprobs": "raw", "completions": True, "echo": True, "adds_document_start": False}
    gen, shipped = read_spec(tmp_path / "gen.yaml"), get_spec("smollm2-135m-vllm")
    assert gen.identity() == shipped.identity()                 # the same calls, the same cache keys


def test_check_marks_a_reasoning_models_chat_unsure_until_the_spec_gives_it_room():
    from creval.models import capabilities
    ok, why = capabilities.able(spec(can={"reasoning": True}), "chat")
    assert ok is None and "no `reasoning_room`" in why
    assert capabilities.able(spec(can={"reasoning": True}, reasoning_room=2000), "chat")[0] is True
    assert capabilities.able(spec(can={"reasoning": True}, reasoning_effort="none"), "chat")[0] is True
    assert capabilities.able(spec(can={"reasoning": False}), "chat")[0] is True
