"""Homogeneity measures on a hand-computed fixture: two models, fixed vectors, known entailments."""
import numpy as np
import pandas as pd
import pytest

from creval.measures import homogeneity as H
from creval.measures.nli.backends import Label
from creval.studies.compare.spread import homogeneity_rows

# model A: two answers along x and y; model B: one along x, one along -y
A = np.array([[1.0, 0.0], [0.0, 1.0]])
B = np.array([[2.0, 0.0], [0.0, -3.0]])     # not unit length: the measures normalise


def test_cosines_by_hand():
    # between: cos(a1,b1)=1, cos(a1,b2)=0, cos(a2,b1)=0, cos(a2,b2)=-1 -> mean 0
    assert H.cosine_between(A, B) == pytest.approx(0.0)
    assert H.cosine_between(A, A[:1]) == pytest.approx(0.5)       # (1 + 0) / 2
    assert H.cosine_within(A) == pytest.approx(0.0)
    assert H.cosine_within(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])) == pytest.approx(
        (np.sqrt(0.5) + 0 + np.sqrt(0.5)) / 3)
    assert np.isnan(H.cosine_within(A[:1])) and np.isnan(H.cosine_between(A, np.zeros((0, 2))))


def test_overlap_needs_entailment_both_ways():
    ab = np.array([[True, False, False], [True, True, False]])     # A_i entails B_j
    ba = np.array([[True, False], [False, False], [False, True]])  # B_j entails A_i
    same = H.same_idea(ab, ba)
    assert same.tolist() == [[True, False, False], [False, False, False]]
    assert H.overlap(same) == 0.5              # A's first idea is B's, the second only one way
    assert H.overlap(same.T) == pytest.approx(1 / 3)
    assert H.overlap(np.zeros((2, 0), bool)) == 0.0 and np.isnan(H.overlap(np.zeros((0, 2), bool)))
    sq = np.array([[True, True, False], [True, True, False], [False, False, True]])
    assert H.overlap_within(sq) == pytest.approx(2 / 3)          # the diagonal is not an overlap


class Emb:
    """Fixed vectors per text."""
    vecs = {"lever": [1, 0], "prybar": [1, 0], "rope": [0, 1], "tape": [0, -1], "hook": [1, 1], "glue": [-1, 0]}

    def encode(self, texts):
        return np.array([self.vecs[t] for t in texts], float)


class NLI:
    """'lever' and 'prybar' entail each other; 'hook' entails 'rope' but not back."""
    same = {("lever", "prybar"), ("prybar", "lever"), ("hook", "rope")}

    def __init__(self):
        self.asked = []

    def classify(self, pairs):
        self.asked += list(pairs)
        return [Label.ENTAILMENT if p in self.same else Label.NEUTRAL for p in pairs]


def test_rows_of_two_models_and_people_exact():
    ideas = pd.DataFrame([("t", "p1", "A", "lever"), ("t", "p1", "A", "rope"),
                          ("t", "p1", "B", "prybar"), ("t", "p1", "B", "tape"),
                          ("t", "p1", "people", "hook"), ("t", "p1", "people", "glue"),
                          ("t", "p2", "A", "lever")],                     # p2: one model only, left out
                         columns=["task", "prompt", "source", "text"])
    nli = NLI()
    rows = {(r["a"], r["b"]): r for r in homogeneity_rows(ideas, Emb(), nli)}
    assert {r["prompt"] for r in rows.values()} == {"p1"} and len(rows) == 9
    assert rows[("A", "B")]["overlap"] == 0.5 and rows[("B", "A")]["overlap"] == 0.5     # lever = prybar
    assert rows[("A", "B")]["cosine"] == pytest.approx(0.0)     # (1 + 0 + 0 - 1) / 4
    assert rows[("A", "A")]["cosine"] == pytest.approx(0.0) and rows[("A", "A")]["overlap"] == 0.0
    assert rows[("A", "people")]["overlap"] == 0.0               # hook entails rope one way only
    # people: hook (1,1)/sqrt2 and glue (-1,0): cos = -1/sqrt2
    assert rows[("people", "people")]["cosine"] == pytest.approx(-np.sqrt(0.5))
    assert rows[("A", "people")]["cosine"] == pytest.approx((np.sqrt(0.5) - 1 + np.sqrt(0.5) + 0) / 4)
    assert len(nli.asked) == 6 * 5                                 # every ordered pair of p1's texts, once
