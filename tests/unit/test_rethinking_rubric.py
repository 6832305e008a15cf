"""Rubric judge (chapter 06) with a fake model: expected value from label log-probs, bounded re-asks then
'unparsed' on a server, the prompt-twist test and rerun consistency."""
import math
from types import SimpleNamespace

import pytest

from creval.judges import rubric as R


class Fake:
    name = "fake"

    def __init__(self, kind="raw", replies=None, probs=None, yes=None):
        self.logprob_kind = kind
        self.replies = replies or {}
        self.probs = probs or {}
        self.yes = yes or {}
        self.batches = []

    def chat_many(self, convs, temperature=0.0, max_tokens=256, **kw):
        """The analysis to a 2-turn conversation; to a scoring one, the next reply of the aspect it asks."""
        if len(convs[0]) == 2:
            return [SimpleNamespace(text="analysis") for _ in convs]
        self.batches.append(len(convs))
        return [SimpleNamespace(text=self.replies[self._aspect(c)].pop(0)) for c in convs]

    @staticmethod
    def _aspect(conv):
        return next(a for a, _, _ in R.ASPECTS["ps"] if a in conv[3]["content"])

    def sample(self, messages, n, temperature=1.0, max_tokens=64, seed=0):
        return [SimpleNamespace(text=f"analysis {i}") for i in range(n)]

    def choice_logprobs_many(self, items):
        out = []
        for msgs, choices in items:
            if choices == ["Yes", "No"]:
                pol = "unconventional" if "unconventional?" in msgs[-1]["content"] else "conventional"
                p = self.yes[pol]
                out.append(SimpleNamespace(logprobs={"Yes": math.log(p), "No": math.log(1 - p)}))
                continue
            analysis = msgs[-2]["content"]
            d = self.probs.get(analysis, {})
            out.append(SimpleNamespace(logprobs={c: math.log(d.get(c, 1e-9)) for c in choices}))
        return out


def test_expected_value_from_label_logprobs():
    probs = {"analysis": {"[[Unconventionality: 2]]": 0.25, "[[Unconventionality: 4]]": 0.75,
                          "[[Problem Difficulty: 3]]": 1.0, "[[Efficiency: 5]]": 1.0}}
    recs = R.rubric_judge(Fake(probs=probs), [{"id": "a", "text": "use the cup", "problem": "p"}], "ps")
    (r,) = recs
    assert r.scores["Unconventionality"] == pytest.approx(0.25 * 2 + 0.75 * 4, abs=1e-6)
    assert r.argmax["Unconventionality"] == 4
    assert r.scores["Efficiency"] == pytest.approx(5, abs=1e-6)
    assert r.state == "ok" and r.via == "logprobs"


def test_server_parses_with_bounded_reasks_then_unparsed():
    m = Fake(kind="server", replies={"Problem Difficulty": ["I think 3", "[[Problem Difficulty: 3]]"],  # 1 re-ask
                                     "Unconventionality": ["[[Unconventionality: 9]]", "nope", "still no"],  # unparsed
                                     "Efficiency": ["Efficiency: 4"]})
    (r,) = R.rubric_judge(m, [{"id": "a", "text": "t", "problem": "p"}], "ps", reasks=2)
    assert r.scores == {"Problem Difficulty": 3.0, "Unconventionality": None, "Efficiency": 4.0}
    assert r.attempts == {"Problem Difficulty": 2, "Unconventionality": 3, "Efficiency": 1}
    assert r.state == "unparsed"
    assert m.batches == [3, 2, 1]            # every question at once, then one batch of re-asks per round


def test_parse_score_and_half_steps():
    assert R.parse_score("[[Soundness: 2.5]]", "Soundness", R.ASPECTS["ri"][0][1]) == 2.5
    assert R.parse_score("[[Soundness: 2.7]]", "Soundness", R.ASPECTS["ri"][0][1]) is None
    assert R.answer("Overall", 7.0) == "[[Overall: 7]]"


def test_twist_counts_contradictions():
    m = Fake(yes={"conventional": 0.8, "unconventional": 0.7})
    (r,) = R.twist_test(m, [{"id": "a", "text": "t", "problem": "p"}])
    assert r["contradiction"] and r["p_yes_conventional"] == pytest.approx(0.8)
    m = Fake(yes={"conventional": 0.2, "unconventional": 0.7})
    assert not R.twist_test(m, [{"id": "a", "text": "t", "problem": "p"}])[0]["contradiction"]


def test_rerun_consistency():
    probs = {"analysis 0": {"[[Unconventionality: 1]]": 1.0}, "analysis 1": {"[[Unconventionality: 3]]": 1.0}}
    recs = R.rubric_judge(Fake(probs=probs), [{"id": "a", "text": "t", "problem": "p"}], "ps", samples=2)
    assert [r.variant for r in recs] == [1, 2]
    c = R.rerun_consistency(recs, "Unconventionality")
    assert c["items"] == 1 and c["mean_sd"] == pytest.approx(math.sqrt(2), abs=1e-4) and c["argmax_changes"] == 1.0
