"""AUT judge parsing, re-asks for missing items only, imputed/unparsed states, groups and use-list parsing."""
import math

import pandas as pd
import pytest

from creval.judges import aut as J
from creval.models.records import ChoiceScores, Completion
from creval.studies.aut.config import AutConfig
from creval.studies.aut.generate import generate_level, is_refusal, parse_use_list
from creval.studies.aut.run import comprehensive_order, list_plan, make_groups


def test_parse_scores_reads_ids_and_last_in_range_integer():
    text = "[1] 4\n[2] score: 2/5\n3. 5\n[4] 9\n[1] 1\nuse 5 - 3 (good)\nnothing here"
    assert J.parse_scores(text, [1, 2, 3, 4, 5]) == {1: 4, 2: 2, 3: 5, 5: 3}   # 4 out of range; repeated 1 ignored
    assert J.parse_scores("[7] 3", [1, 2]) == {}
    assert J.parse_scores("", [1]) == {}


def test_parse_ranking_brackets_numbers_and_echoed_text():
    assert J.parse_ranking("[3]\n[1]\n[3]\n[9]\n[2]", [1, 2, 3]) == [3, 1, 2]
    assert J.parse_ranking("1. 3\n2. 1\n3. 2", [1, 2, 3]) == [3, 1, 2]        # list numbering skipped
    texts = ["stir soup", "pick a lock", "comb hair"]
    assert J.parse_ranking("1. Pick a lock.\n2. comb hair\n3. stir suop", [1, 2, 3], texts) == [2, 3, 1]


def test_expected_score_from_logprobs():
    lp = {"1": math.log(0.5), "5": math.log(0.5), "2": -math.inf}
    assert J.expected_score(lp) == pytest.approx(3.0)
    assert J.expected_score({"1": -math.inf}) is None


class FakeJudge:
    """Replies from a script keyed by the last user message; records every batch it was asked."""

    def __init__(self, reply):
        self.reply, self.batches, self.choice_batches, self.budgets = reply, [], [], []

    def chat_many(self, convos, **kw):
        self.batches.append(len(convos))
        self.budgets.append(kw["max_tokens"])
        return [Completion(self.reply(c), 10, 5) for c in convos]

    def choice_logprobs_many(self, items, **kw):
        self.choice_batches.append(len(items))
        return [ChoiceScores({"1": -5.0, "2": -5.0, "3": -5.0, "4": 0.0, "5": -5.0}) for _ in items]


def test_scores_reask_only_missing_then_logprobs_or_unparsed():
    def reply(convo):
        last = convo[-1]["content"]
        if len(convo) == 1:
            return "[1] 5\n[2] 1"                     # item 3 missing
        assert "[3]" in last and "[1]" not in last    # the re-ask names only the missing use
        return "[3] oops"
    job = J.ListJob("score", "fork", ["a", "b", "c"])
    m = FakeJudge(reply)
    res = J.judge_lists(m, [job, job], retries=2, via="text")
    assert m.batches == [2, 2, 2]                     # first turns batched, then each re-ask round
    assert m.budgets == [J.list_budget([job])] * 3    # one budget for every round, whatever is left to ask
    assert res[0].raw == [5, 1, None] and res[0].paths == ["text", "text", "unparsed"] and res[0].attempts == 3
    m2 = FakeJudge(reply)
    res2 = J.judge_lists(m2, [job], retries=1, via="text+logprobs")
    assert res2[0].paths[2] == "logprobs" and res2[0].raw[2] == pytest.approx(4.0, abs=0.05)
    assert m2.choice_batches == [1]


def test_rankings_impute_a_few_missing_flag_identity_and_give_up_beyond():
    job4 = J.ListJob("rank", "fork", ["a", "b", "c", "d"])
    r = J.judge_lists(FakeJudge(lambda c: "[2]\n[1]\n[4]"), [job4], retries=0)[0]
    assert r.raw == [2.0, 1.0, 4.0, 3.0]              # use 3 alone at the bottom place
    assert r.paths == ["text", "text", "imputed", "text"]
    r = J.judge_lists(FakeJudge(lambda c: "[2]\n[1]"), [job4], retries=0)[0]
    assert r.raw == [None] * 4 and set(r.paths) == {"unparsed"}
    r = J.judge_lists(FakeJudge(lambda c: "[1]\n[2]\n[3]\n[4]"), [job4], retries=0)[0]
    assert r.identity_order and r.raw == [1.0, 2.0, 3.0, 4.0]
    # a later, more complete ordering replaces a partial one
    calls = iter(["[2]", "[2]\n[1]\n[4]\n[3]"])
    r = J.judge_lists(FakeJudge(lambda c: next(calls)), [job4], retries=1)[0]
    assert r.raw == [2.0, 1.0, 4.0, 3.0] and r.paths == ["text-retry"] * 4


def test_use_list_parsing_and_refusals():
    text = "Here are some uses:\n1. **Stir paint.**\n2) \"Comb hair\"\n- stir paint\n3. Prop a door"
    assert parse_use_list(text, 5) == ["Stir paint", "Comb hair", "Prop a door"]
    assert parse_use_list(text, 2) == ["Stir paint", "Comb hair"]
    assert parse_use_list("Scratch an itch\nRake sand", 5) == ["Scratch an itch", "Rake sand"]
    assert is_refusal("I'm sorry, but I can't assist with that.")
    assert not is_refusal("1. Use it as a bookmark")


def _uses(gens=("g1", "g2"), k=3):
    rows = []
    for g in gens:
        for code, lvl in ((1, "common"), (2, "creative"), (3, "highly_creative")):
            for i in range(k):
                rows.append({"au_id": f"{g}{lvl}{i}", "object": "fork", "generator": g, "level": lvl,
                             "level_code": code, "text": f"{g} {lvl} {i}"})
    return rows


def test_segmented_groups_hold_one_use_per_cell_and_orders_are_seeded():
    uses = _uses()
    groups = make_groups(uses, 0, "fork")
    assert len(groups) == 3 and all(len(g) == 6 for g in groups)
    for g in groups:
        assert len({(u["generator"], u["level"]) for u in g}) == 6
    assert sorted(u["au_id"] for g in groups for u in g) == sorted(u["au_id"] for u in uses)
    assert make_groups(uses, 0, "fork") == groups and make_groups(uses, 1, "fork") != groups
    assert comprehensive_order(uses, 0, "fork") != uses
    cfg = AutConfig(models=("g1", "g2"), aut_things=("fork",))
    plan = list_plan(pd.DataFrame(uses), cfg)
    # comprehensive: score + rank forward + rank reverse; segmented: 3 groups x 3
    assert len(plan) == 3 + 3 * 3
    fwd = [p for p in plan if p["setting"] == "comprehensive" and p["method"] == "rank"]
    assert fwd[1]["items"] == fwd[0]["items"][::-1]


def test_generation_unit_reasks_a_short_list_and_keeps_the_last_list_before_a_refusal():
    def reply(convo):
        last = convo[-1]["content"]
        if last.startswith("What are"):
            return "1. stir soup"                                  # short: re-asked once
        if last.startswith("Your answer"):
            return "1. stir soup\n2. comb hair"
        if last.startswith("I want"):
            return "1. pick a lock\n2. prop a door"
        return "I'm sorry, but I can't help with that."           # the forceful follow-up is refused
    m = FakeJudge(reply)
    uses, turns = generate_level(m, "g", "fork", "common", 2, retries=1)
    assert [u.text for u in uses] == ["stir soup", "comb hair"] and not uses[0].short
    assert [(t.turn, t.attempt, t.n_parsed) for t in turns] == [(0, 0, 1), (0, 1, 2)]
    uses, turns = generate_level(m, "g", "fork", "highly_creative", 2, forceful_turns=1, retries=1)
    assert [u.text for u in uses] == ["pick a lock", "prop a door"] and {u.turn for u in uses} == {0}
    assert [(t.turn, t.refusal) for t in turns] == [(0, False), (1, True)]  # a refusal is not re-asked
    assert m.batches == [1] * 4                                   # one conversation: a chain of single turns
