"""The equivalence-judge partition (judges/equivalence.py, NoveltyBench's protocol) beside entailment classes."""
import math
from dataclasses import dataclass

import pandas as pd

from creval.judges import equivalence as EQ
from creval.studies.compare import ranking


@dataclass
class Scores:
    logprobs: dict


class TopicJudge:
    """Says two answers are the same when their first words match (unit tests only); counts its calls."""

    def __init__(self, broken=False):
        self.calls, self.broken = 0, broken

    def choice_logprobs_many(self, asks):
        out = []
        for msgs, _ in asks:
            self.calls += 1
            u = msgs[-1]["content"]
            a = u.split("First answer:\n")[1].split("\n")[0].split()[0]
            b = u.split("Second answer:\n")[1].split("\n")[0].split()[0]
            out.append(Scores({"Yes": float("nan"), "No": -1.0} if self.broken else
                              {"Yes": -0.1 if a == b else -4.0, "No": -1.0}))
        return out


ANSWERS = ["rope tie it", "tape stick it", "rope knot it", "glue it", "Tape stick it", "rope loop"]


def test_partition_counts_distinct_answers_whatever_the_seed():
    for seed in range(5):
        part = EQ.EquivalenceJudge(TopicJudge(), order_seed=seed).partition("task", ANSWERS)
        assert part.distinct == 3 and sorted(part.order) == list(range(6))
        lab = part.labels
        assert lab[0] == lab[2] == lab[5] and lab[1] == lab[4] and len({lab[0], lab[1], lab[3]}) == 3
    orders = {tuple(EQ.EquivalenceJudge(TopicJudge(), order_seed=s).partition("t", ANSWERS).order) for s in range(5)}
    assert len(orders) > 1                                      # the seed shuffles the judge's input order


def test_identical_texts_join_without_a_call_and_unparsed_is_a_new_class():
    judge = TopicJudge()
    part = EQ.EquivalenceJudge(judge).partition("t", ["Same text", "same  TEXT"])
    assert part.distinct == 1 and judge.calls == 0
    broken = EQ.EquivalenceJudge(TopicJudge(broken=True)).partition("t", ["rope a", "rope b"])
    assert broken.distinct == 2 and broken.unparsed == 1 and broken.log[0][2] is None


def test_rand_index_and_the_page_table():
    assert EQ.pair_agreement([0, 0, 1], [5, 5, 7]) == 1.0
    assert EQ.pair_agreement([0, 0, 0], [0, 1, 2]) == 0.0
    assert math.isnan(EQ.pair_agreement([0], [0]))
    prov = {"judge_model": "j", "prompt_sha": EQ.prompt_hash(), "order_seed": 0}
    rows = [{"model": "m", "domain": "macgyver", "problem_id": f"p{k}", "n": 6, "distinct_entailment": k + 1,
             "distinct_judge": k + 2, "rand_index": 0.8, "calls": 5, "unparsed": 0, "provenance": prov}
            for k in range(5)]

    class Recs(dict):
        cfg = None
    t = ranking.table_equivalence(Recs(equivalence=pd.DataFrame(rows)))
    assert len(t) == 5 and "Spearman" in t.attrs["caption"] and "1.00" in t.attrs["caption"]
    rows[0]["provenance"] = {**prov, "prompt_sha": "other"}
    refused = ranking.table_equivalence(Recs(equivalence=pd.DataFrame(rows)))
    assert "prompt_sha" in refused["refused"].iloc[0]
