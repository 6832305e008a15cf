"""The pairwise judge (judges/pairwise.py), fitted by Bradley-Terry, on fixture outputs with a known order; a
flip is a tie and is counted; a changed judge prompt makes the comparison refused (studies/compare/provenance)."""
import math
import re
from dataclasses import dataclass

import pandas as pd
import pytest

from creval.core.errors import CrevalError
from creval.judges import base
from creval.judges import pairwise as PW
from creval.measures import bradley_terry as BT
from creval.studies.compare import provenance as P
from creval.studies.compare import ranking


@dataclass
class Scores:
    logprobs: dict


@dataclass
class Spec:
    name: str = "fake-judge"

    def identity(self) -> dict:
        return {"backend": "fake", "model": "rule v1"}


class FakeJudge:
    """Prefers the answer with the higher ``quality=K``; on equal quality it picks the one shown first (a pure
    position preference). Unit tests only."""
    spec = Spec()

    def __init__(self, broken: bool = False):
        self.broken, self.asks = broken, 0

    def choice_logprobs_many(self, asks):
        out = []
        for msgs, choices in asks:
            self.asks += 1
            user = msgs[-1]["content"]
            qa, qb = (int(x) for x in re.findall(r"quality=(\d+)", user.split("Answer A:")[1])[:2])
            if self.broken:
                out.append(Scores({"A": float("nan"), "B": -1.0}))
                continue
            a = -0.1 if qa >= qb else -3.0
            out.append(Scores({"A": a, "B": -1.0}))
        return out


QUALITY = {"best": 4, "good": 3, "fair": 2, "poor": 1}


def jobs(items: int, quality=QUALITY):
    names = list(quality)
    return [(f"it{i}", "Fix the tent door.", a, f"{a} answer quality={quality[a]}", b,
             f"{b} answer quality={quality[b]}") for i in range(items)
            for k, a in enumerate(names) for b in names[k + 1:]]


def test_known_order_is_recovered_through_the_judge_and_bradley_terry():
    judge = PW.PairwiseJudge(FakeJudge(), "macgyver", words=50, order_seed=0)
    js = judge.judge_many(jobs(8))
    assert judge.model.asks == 2 * len(js)                      # each pair judged in both orders
    fit = BT.bootstrap(list(QUALITY), [(j.item, j.a, j.b, j.score) for j in js], n_boot=40, seed=0)
    assert [fit["models"][i] for i in BT.order(fit["theta"])] == ["best", "good", "fair", "poor"]
    assert PW.position_bias(js)["flip_rate"] == 0.0 and PW.position_bias(js)["first_rate"] == 0.5


def test_a_flip_is_a_tie_and_is_counted():
    judge = PW.PairwiseJudge(FakeJudge(), "macgyver")
    (j,) = judge.judge_many([("x", "task", "a", "quality=2", "b", "quality=2")])
    assert j.flip and j.score == 0.5 and j.votes == ("a", "b") and j.first_picks == 2
    bias = PW.position_bias([j])
    assert bias["flip_rate"] == 1.0 and bias["first_rate"] == 1.0
    (w,) = judge.judge_many([("x", "task", "a", "quality=1", "b", "quality=3")])
    assert w.score == 0.0 and not w.flip and w.votes == ("b", "b")


def test_missing_log_probs_are_unparsed_never_a_default():
    judge = PW.PairwiseJudge(FakeJudge(broken=True), "ttcw")
    (j,) = judge.judge_many([("x", "task", "a", "quality=1", "b", "quality=3")])
    assert j.state == "unparsed" and j.score is None
    assert PW.position_bias([j])["unparsed"] == 1 and math.isnan(PW.position_bias([j])["flip_rate"])


class Recs(dict):
    cfg = None


def rows_of(judge, dataset="macgyver"):
    return [{"dataset": dataset, **j.to_dict(), "provenance": judge.provenance} for j in judge.judge_many(jobs(6))]


def test_every_record_carries_provenance_and_a_changed_prompt_is_refused(tmp_path, monkeypatch):
    old = PW.PairwiseJudge(FakeJudge(), "macgyver", order_seed=7)
    assert set(P.FIELDS) <= set(old.provenance) and old.provenance["order_seed"] == 7
    before = rows_of(old)
    recs = Recs(pairwise=pd.DataFrame(before), released=pd.DataFrame(columns=["dataset", "model", "measure",
                                                                                "item", "value"]))
    assert "refused" not in ranking.table_pairwise(recs, "macgyver").columns
    # the judge's prompt changes: a new prompt hash, and the mixed records are not compared
    for name in PW.TEMPLATES:
        (tmp_path / f"{name}.txt").write_text(base.template(name))
    (tmp_path / "pairwise_user.txt").write_text(base.template("pairwise_user") + "\nThink of the reader.")
    monkeypatch.setattr(base, "PROMPTS", tmp_path)
    base.template.cache_clear()
    try:
        new = PW.PairwiseJudge(FakeJudge(), "macgyver", order_seed=7)
        after = rows_of(new)
    finally:
        base.template.cache_clear()
    assert new.provenance["prompt_sha"] != old.provenance["prompt_sha"]
    assert P.differences(old.provenance, new.provenance) == ["prompt_sha"]
    recs["pairwise"] = pd.DataFrame(before + after)
    t = ranking.table_pairwise(recs, "macgyver")
    assert list(t.columns) == ["refused"] and "prompt_sha" in t["refused"].iloc[0]
    with pytest.raises(CrevalError, match="prompt_sha"):
        P.check(list(recs["pairwise"]["provenance"]), "the two runs")
    ok, why = P.comparable([old.provenance, {**old.provenance, "order_seed": 8}])
    assert not ok and "order_seed" in why and "prompt_sha" not in why


def test_a_judge_that_only_prefers_a_position_gives_no_order_and_no_tau():
    flat = {m: 2 for m in QUALITY}                    # equal quality: the fake picks whichever is shown first
    judge = PW.PairwiseJudge(FakeJudge(), "macgyver")
    rows = [{"dataset": "macgyver", **j.to_dict(), "provenance": judge.provenance}
            for j in judge.judge_many(jobs(4, flat))]
    released = pd.DataFrame([{"dataset": "macgyver", "model": m, "measure": "people: correct", "item": f"it{i}",
                              "value": float(q > 2)} for m, q in QUALITY.items() for i in range(4)])
    recs = Recs(pairwise=pd.DataFrame(rows), released=released)
    caption = ranking.table_pairwise(recs, "macgyver").attrs["caption"]
    assert "No order" in caption and "Noise floor" not in caption and "flip with the order" in caption
    assert ranking.pairwise_vs_people(recs, "macgyver").empty
    assert "Nothing to compare" in ranking.table_pairwise_vs_people(recs, "macgyver").attrs["caption"]
