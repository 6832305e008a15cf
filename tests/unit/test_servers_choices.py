"""No silent wrong value from choice scores (issue 32, item 3): spelling variants combine by their best, a choice
set with no log-prob is unparsed, and every judge that reads choice scores says so instead of taking a label."""
import math

import numpy as np
import pytest

from creval.core.errors import CrevalError
from creval.models.choices import score_choices, token_steps
from creval.models.records import ChoiceScores


def chat_step(token, lp, alts):
    return {"token": token, "logprob": lp, "top_logprobs": [{"token": t, "logprob": x} for t, x in alts]}


def test_the_issues_example_b_scores_its_best_spelling_not_the_later_one():
    # reply "A"; alternatives "B" at -1.8 and " B" at -7.0: both are B at the reply's start
    reply = {"logprobs": {"content": [chat_step("A", -0.2, [("A", -0.2), ("B", -1.8), (" B", -7.0)])]}}
    got = score_choices(token_steps(reply), ["A", "B"])
    assert got["B"] == pytest.approx(-1.8) and got["A"] == pytest.approx(-0.2)
    # the order the server lists them in does not matter
    reply = {"logprobs": {"content": [chat_step("A", -0.2, [("A", -0.2), (" B", -7.0), ("B", -1.8)])]}}
    assert score_choices(token_steps(reply), ["A", "B"])["B"] == pytest.approx(-1.8)
    # the completions shape too (a dict per step)
    legacy = {"logprobs": {"tokens": ["A"], "token_logprobs": [-0.2], "top_logprobs": [{"A": -0.2, " B": -7.0,
                                                                                       "B": -1.8}]}}
    assert score_choices(token_steps(legacy), ["A", "B"])["B"] == pytest.approx(-1.8)


def test_a_generated_spelling_takes_the_better_listed_one_and_case_stays_apart():
    reply = {"logprobs": {"content": [chat_step(" Yes", -0.9, [(" Yes", -0.9), ("Yes", -0.6), ("yes", -0.1)])]}}
    got = score_choices(token_steps(reply), ["Yes", "No"])
    assert got["Yes"] == pytest.approx(-0.6)          # "yes" is another answer: not merged
    assert got["No"] == -math.inf


def test_no_log_probs_is_unparsed_and_an_empty_reply_has_no_steps():
    bare = {"message": {"content": "A"}}             # a server that dropped the field (Ollama < 0.12.11)
    assert token_steps(bare) == []
    s = ChoiceScores(score_choices(token_steps(bare), ["A", "B"]))
    assert s.unparsed and s.logprobs == {"A": -math.inf, "B": -math.inf}
    assert ChoiceScores({"A": -math.inf, "B": -3.0}).unparsed       # A not listed: P(B) would read 1.0 (issue 45)
    assert not ChoiceScores({"A": -1.0, "B": -3.0}).unparsed


class Judge:
    """A model whose choice scores are all -inf: a server that returned no log-probs."""
    name = "nolp"

    def choice_logprobs_many(self, items, tags=None):
        return [ChoiceScores({c: -math.inf for c in choices}) for _, choices in items]

    def choice_logprobs(self, messages, choices):
        return self.choice_logprobs_many([(messages, choices)])[0]


def test_entailment_by_llm_refuses_to_label_pairs_without_log_probs():
    from creval.measures.nli.backends import LLMNLI
    nli = LLMNLI(Judge(), use_cache=False)
    with pytest.raises(CrevalError, match=r"without a log-prob in 2 of 2 pairs \(2 with no label scored.*; 0 with"):
        nli._compute([("a", "b"), ("b", "a")])


class OneMissing(Judge):
    """Only "contradiction" is missing from the listed top log-probs: the labels still cannot be compared."""
    def choice_logprobs_many(self, items, tags=None):
        return [ChoiceScores({c: (-math.inf if c == "contradiction" else -1.0) for c in choices})
                for _, choices in items]


def test_entailment_by_llm_says_when_only_some_labels_are_missing():
    from creval.measures.nli.backends import LLMNLI
    with pytest.raises(CrevalError) as err:
        LLMNLI(OneMissing(), use_cache=False)._compute([("a", "b"), ("b", "a"), ("c", "d")])
    msg = str(err.value)
    assert "without a log-prob in 3 of 3 pairs (0 with no label scored" in msg
    assert "3 with some labels missing from the log-probs it listed" in msg and "gave none" not in msg


def test_the_novelty_judge_refuses_to_call_it_a_tie():
    from creval.judges.novelty import NoveltyJudge
    with pytest.raises(CrevalError, match="neither A nor B a log-prob in 2 of 2"):
        NoveltyJudge(Judge()).compare(("q", "x"), ("q", "y"))


class OnlyA(Judge):
    """A server that listed "A" among its top log-probs but never "B"."""
    def choice_logprobs_many(self, items, tags=None):
        return [ChoiceScores({c: (-0.5 if c == "A" else -math.inf) for c in choices}) for _, choices in items]


def test_the_novelty_judge_says_when_only_one_choice_lacks_a_log_prob():
    from creval.judges.novelty import NoveltyJudge
    with pytest.raises(CrevalError) as err:
        NoveltyJudge(OnlyA()).compare(("q", "x"), ("q", "y"))
    assert "only one of A and B a log-prob in 2 of 2" in str(err.value) and "neither" not in str(err.value)


def test_twist_test_and_rubric_scores_are_unparsed_not_contradictions_or_the_lowest_score():
    from creval.judges.rubric import expected_scores, twist_test
    row, = twist_test(Judge(), [{"id": "1", "problem": "p", "text": "t"}])
    assert row["unparsed"] and np.isnan(row["contradiction"]) and np.isnan(row["p_yes_conventional"])
    assert expected_scores(Judge(), [([], "Originality", (1, 2, 3))]) == [(None, None)]


def test_p_yes_and_aut_pointwise_are_unparsed():
    from creval.judges.aut import pointwise_scores
    from creval.judges.parsing import logprob_verdict
    assert logprob_verdict(Judge(), []).unparsed
    assert pointwise_scores(Judge(), [("brick", "a door stop")]) == [(None, "unparsed")]
