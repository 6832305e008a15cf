"""Parsing of verdicts / confidences, bounded retries and explicit 'unparsed'."""
from __future__ import annotations

import pytest

from creval.judges import parsing
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.records import ChoiceScores, Completion
from creval.models.spec import ModelSpec


class Scripted(BackendBase):
    """Backend replying from a fixed script, one reply per request, recording what it was asked."""
    LOGPROB_KIND = "raw"

    def __init__(self, replies, lp=None):
        self.spec = ModelSpec(name="scripted", backend="llamacpp", model="scripted")
        self.replies, self.asked, self.lp = list(replies), [], lp or {"[[YES]]": -0.5, "[[NO]]": -2.0}

    def chat(self, reqs):
        out = []
        for r in reqs:
            self.asked.append(r)
            out.append(Completion(self.replies.pop(0) if self.replies else "", 10, 3))
        return out

    def choice_logprobs(self, reqs):
        return [ChoiceScores(dict(self.lp), 10) for _ in reqs]

    def count_tokens(self, t):
        return len(t.split())


@pytest.fixture
def model_of(tmp_path, monkeypatch):
    # note: CallCache defines __len__, so an empty one is falsy and cached_batch's `cache or default_cache()`
    # would ignore it; point the default cache at a fresh file per model instead.
    count = [0]

    def make(replies, **kw):
        count[0] += 1
        monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / f"c{count[0]}.sqlite"))
        b = Scripted(replies, **kw)
        return Model(b), b
    return make


@pytest.mark.parametrize("text,want", [
    ("[[YES]] it works", True), ("Verdict: [[no]].", False), ("[YES] fine", True),
    ("verdict: no because", False), ("The criterion is not fulfilled.", False), ("criterion fulfilled", True),
    ("Yes, the plan works", True), ("I cannot tell", None), ("", None),
    ("[[YES]] ... actually [[NO]]", None), ("Answer [[YES]] or [[NO]]. My answer: [[NO]]", False),
])
def test_parse_verdict(text, want):
    assert parsing.parse_verdict(text) is want


@pytest.mark.parametrize("text,want", [
    ("sure. [[0.7]] ([YES])", 0.7), ("[[1.0]]", 1.0), ("[[.3]]", 0.3), ("Probability: ([0.4])", 0.4),
    ("confidence: 0.9", 0.9), ("about 80% sure", 0.8), ("no number here", None), ("[[1]]", 1.0),
])
def test_parse_confidence(text, want):
    assert parsing.parse_confidence(text) == want


def test_stance_and_pair():
    assert parsing.parse_stance("ok [[0.6]] ([NO])") is False
    assert parsing.parse_verdict_and_probability("[[NO]] ([0.2])") == (False, 0.2)
    assert parsing.parse_verdict_and_probability("[[YES]]") == (True, None)
    assert parsing.parse_verdict_and_probability("maybe") is None


def test_retry_succeeds_with_new_seed_and_temperature(model_of):
    m, b = model_of(["I think it is good", "[[YES]] good"])
    res = parsing.ask_parsed(m, [{"role": "user", "content": "q"}], parsing.parse_verdict, fmt="[[YES]]",
                             max_tokens=8, retries=2)
    assert res.value is True and res.attempts == 2 and res.path == "text-retry"
    assert b.asked[1].temperature > 0 and b.asked[1].seed != b.asked[0].seed
    assert "did not follow the required format" in b.asked[1].messages[-1]["content"]


def test_retries_are_bounded_then_unparsed(model_of):
    m, b = model_of(["blah"] * 10)
    res = parsing.ask_parsed(m, [{"role": "user", "content": "q"}], parsing.parse_verdict, fmt="[[YES]]",
                             max_tokens=8, retries=2)
    assert res.value is None and res.unparsed and res.attempts == 3 and len(b.asked) == 3
    m, b = model_of(["blah"] * 10)
    res = parsing.ask_parsed(m, [{"role": "user", "content": "q"}], parsing.parse_verdict, fmt="x",
                             max_tokens=8, retries=0)
    assert res.unparsed and len(b.asked) == 1


def test_logprob_paths(model_of):
    m, b = model_of(["blah"] * 5)
    res = parsing.ask_verdict(m, [{"role": "user", "content": "q"}], via="text+logprobs", retries=1)
    assert res.path == "logprobs" and res.value is True and res.attempts == 3
    assert res.p_yes == pytest.approx(1 / (1 + 2.718281828 ** (-1.5)), rel=1e-6)
    m, b = model_of([], lp={"[[YES]]": -3.0, "[[NO]]": -0.1})
    res = parsing.ask_verdict(m, [{"role": "user", "content": "q"}], via="logprobs")
    assert res.value is False and b.asked == []
