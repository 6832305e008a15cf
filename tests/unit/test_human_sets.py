"""The per-pair and per-story tables of issue 54 (:mod:`creval.studies.human_sets`), on records built
by hand, with values worked out by hand; and the CSV exports on the bundled samples."""
from __future__ import annotations

import csv
import math

import numpy as np
import pandas as pd
import pytest

from creval.core.errors import CrevalError
from creval.datasets import base, confederacy, lamp
from creval.datasets.confederacy import Rating, Story
from creval.datasets.lamp import AI_EDIT, RAW, WRITER_EDIT, LampItem, LampRanking
from creval.studies import human_sets as H


@pytest.fixture(autouse=True)
def only_samples(monkeypatch, tmp_path):
    for ds in (lamp.DATASET, confederacy.DATASET):
        monkeypatch.delenv(ds.env, raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    base.FAILURES.reset()


def item(iid, unit, texts=(WRITER_EDIT, RAW, AI_EDIT)):
    return LampItem(iid, unit, 1, f"instruction of {unit}", "llm", {v: f"{v} text of {iid}" for v in texts})


def ranking(iid, unit, writer, order):
    """``order``: the versions best first."""
    return LampRanking(iid, unit, 1, writer, {v: k for k, v in enumerate(order, start=1)})


ITEMS = [item("A", "u1"), item("B", "u2")]
RANKINGS = [ranking("A", "u1", "w1", (WRITER_EDIT, AI_EDIT, RAW)),
            ranking("A", "u1", "w2", (RAW, WRITER_EDIT, AI_EDIT)),
            ranking("A", "u1", "w3", (WRITER_EDIT, RAW, AI_EDIT)),
            ranking("B", "u2", "w1", (WRITER_EDIT, RAW, AI_EDIT)),
            ranking("B", "u2", "w2", (RAW, AI_EDIT, WRITER_EDIT))]


def test_lamp_pairs_count_the_writers():
    p = H.lamp_pairs(ITEMS, RANKINGS).set_index(["item_id", "pair"])
    a = p.loc[("A", "writer_edit")]
    assert (a.n_writers, a.n_first, a.share_first, a.experts) == (3, 2, 2 / 3, 1.0)
    assert a.first_id == "A::Human-edited" and a.second_id == "A::AI-generated" and a.unit == "u1"
    assert (p.loc[("A", "ai_edit")].n_first, p.loc[("A", "ai_edit")].experts) == (1, 0.0)
    b = p.loc[("B", "writer_edit")]
    assert (b.n_writers, b.n_first) == (2, 1) and math.isnan(b.experts)        # one each way: no majority
    assert p.loc[("B", "ai_edit")].experts == 0.0                              # both put raw above the AI edit


def test_lamp_texts_points_are_three_minus_the_mean_rank():
    t = H.lamp_texts(ITEMS, RANKINGS).set_index("id")
    assert t.loc["A::Human-edited", "mean_rank"] == pytest.approx(4 / 3)      # ranks 1, 2, 1
    assert t.loc["A::Human-edited", "points"] == pytest.approx(5 / 3)
    assert t.loc["A::AI-generated", "points"] == pytest.approx(1.0)           # ranks 3, 1, 2
    assert t.loc["A::AI-edited", "points"] == pytest.approx(1 / 3)            # ranks 2, 3, 3
    assert t.loc["B::AI-edited", "n_writers"] == 2 and len(t) == 6


def test_writer_agreement_pairwise_and_leave_one_out():
    w = H.writer_agreement(RANKINGS, "writer_edit")
    # A: prefs 1, 0, 1 -> pairs (1,0) (1,1) (0,1) agree 0, 1, 0; B: 1, 0 -> 0. Pairwise 1/4.
    # Leave one out: A: w1 vs {0,1} tie 0.5, w2 vs {1,1} 0, w3 vs {1,0} 0.5; B: 0, 0 -> 1/5.
    assert w == {"pairwise": 0.25, "leave_one_out": pytest.approx(0.2), "n_items": 2}


def test_measure_and_judge_preferences():
    pairs = H.lamp_pairs(ITEMS, RANKINGS)
    values = {"A::Human-edited": 3.0, "A::AI-generated": 1.0, "B::Human-edited": 2.0, "B::AI-generated": 2.0,
              "A::AI-edited": float("nan")}
    got = H.measure_prefs(pairs, values)
    order = list(zip(pairs["item_id"], pairs["pair"]))
    assert dict(zip(order, got))[("A", "writer_edit")] == 1.0
    assert dict(zip(order, got))[("B", "writer_edit")] == H.TIE
    assert np.isnan(dict(zip(order, got))[("A", "ai_edit")]) and np.isnan(dict(zip(order, got))[("B", "ai_edit")])
    j = H.judge_prefs([True, True, False, None], [True, False, False, True])
    assert j[:3].tolist() == [1.0, 0.5, 0.0] and np.isnan(j[3])
    with pytest.raises(ValueError):
        H.judge_prefs([True], [])
    a = H.agreement_each([1, 0, 0.5, 1], [1, 1, 0, np.nan])
    assert a[:3].tolist() == [1.0, 0.0, 0.5] and np.isnan(a[3])


def test_pair_agreement_is_resampled_by_instruction():
    pairs = pd.DataFrame({"unit": ["u1", "u1", "u2", "u3", "u4", "u5"], "experts": [1, 1, 0, np.nan, 1, 1]})
    r = H.pair_agreement(pairs, [1, 0, 0, 1, 1, np.nan], n_boot=400, seed=3)
    # agree: 1, 0, 1, (expert tie), 1, (no measure) -> 3 of 4 pairs, over 3 instructions (u1, u2, u4)
    assert r["agreement"] == 0.75 and r["n"] == 4 and r["n_units"] == 3
    assert r["prefers_first"] == pytest.approx(0.5)                          # 1, 0, 0, 1
    assert 0 <= r["lo"] <= 0.75 <= r["hi"] <= 1
    flipped = H.better_orientation({"agreement": 0.25, "lo": 0.1, "hi": 0.4, "prefers_first": 0.2})
    assert flipped == {"agreement": 0.75, "lo": 0.6, "hi": 0.9, "prefers_first": 0.8, "orientation": -1}
    assert H.better_orientation({"agreement": 0.6, "lo": 0.5, "hi": 0.7, "prefers_first": 0.2})["orientation"] == 1


def test_measure_agreements_orient_measures_and_baselines():
    texts = H.lamp_texts(ITEMS, RANKINGS)
    pairs = H.lamp_pairs(ITEMS, RANKINGS)
    # words: the raw text longest, the writer's edit shortest; templates per token is negated by DIRECTION
    words = [{"Human-edited": 10, "AI-generated": 30, "AI-edited": 20}[v] for v in texts["version"]]
    tpt = [{"Human-edited": 0.1, "AI-generated": 0.3, "AI-edited": 0.2}[v] for v in texts["version"]]
    got = H.measure_agreements(pairs, texts, {"words": words, "templates_per_token": tpt}, n_boot=50)
    g = got.set_index(["measure", "pair"])
    # writer_edit: only A has a majority (the edit): fewer words -> the edit; words is a baseline, so it is
    # read the better way round (shorter preferred): agreement 1. Templates (negated): the edit too -> 1.
    assert g.loc[("words", "writer_edit"), "agreement"] == 1.0
    assert g.loc[("words", "writer_edit"), "orientation"] == -1
    assert g.loc[("templates_per_token", "writer_edit"), "agreement"] == 1.0
    # ai_edit: the majority preferred raw on A and B; negated templates prefer the AI edit (0.2 < 0.3): 0
    assert g.loc[("templates_per_token", "ai_edit"), "agreement"] == 0.0
    assert set(got["kind"]) == {"baseline", "measure"}


def ratings_table():
    stories = [Story(f"s{i}", "human" if i < 2 else f"m{i % 3}", "person" if i < 2 else "model", 1, 1 + i % 2,
                     f"f{i}", f"text {i}") for i in range(6)]
    r1, r2 = [1, 2, 3, 4, 5, 6], [2, 1, 3, 4, 6, 5]
    ratings = [Rating(f"s{i}", f"group{1 + i % 2}-rater{slot}", slot,
                      {"creativity": float(r[i]), "humor": 1.0}, 10.0 * r[i])
               for i in range(6) for slot, r in ((1, r1), (2, r2))]
    ratings[1] = Rating("s0", "group1-rater2", 2, {"creativity": float("nan"), "humor": 1.0}, 20.0)
    return stories, ratings


def test_confederacy_table_means_and_rater_columns():
    stories, ratings = ratings_table()
    t = H.confederacy_table(stories, ratings).set_index("id")
    assert t.loc["s0", "creativity"] == 1.0                                  # the blank second rating left out
    assert t.loc["s1", "creativity"] == 1.5 and t.loc["s1", "total"] == 15.0
    assert t.loc["s4", "creativity_r1"] == 5 and t.loc["s4", "creativity_r2"] == 6
    assert t.loc["s0", "raters"] == "group1-rater1 group1-rater2" and t.loc["s0", "kind"] == "person"
    assert H.rater_columns(t, "creativity") == ["creativity_r1", "creativity_r2"]


def test_rater_ceiling_and_leave_one_rater_out():
    stories, ratings = ratings_table()
    ratings[1] = Rating("s0", "group1-rater2", 2, {"creativity": 2.0, "humor": 1.0}, 20.0)
    t = H.confederacy_table(stories, ratings)
    c = H.rater_ceiling(t, "creativity")
    rho = 1 - 6 * 4 / (6 * 35)                                              # rank differences 1, 1, 0, 0, 1, 1
    assert c["rho"] == pytest.approx(rho) and c["k"] == 2 and c["n"] == 6
    assert c["ceiling"] == pytest.approx(math.sqrt(2 * rho / (1 + rho)))
    assert c["leave_one_out"] == pytest.approx(rho)                         # two raters: each against the other
    assert set(c["within"]) == {1, 2}                                       # three stories each: too few for rho
    m = np.array([[1, 2, 1], [2, 1, 2], [3, 3, 3], [4, 4, 5], [5, 5, 4]], float)
    # each rater against the mean of the other two: 9/sqrt(90), 8.5/sqrt(95), 8.5/sqrt(95) (ranks by hand)
    assert H.leave_one_rater_out(m) == pytest.approx((9 / math.sqrt(90) + 2 * 8.5 / math.sqrt(95)) / 3)
    with pytest.raises(CrevalError, match="rater agreement needs two"):
        H.rater_ceiling(t.drop(columns=["creativity_r2"]), "creativity")


def test_exports_are_files_creval_grade_reads(tmp_path):
    from creval.core.table import read_table
    out = H.export_all(tmp_path)
    w = read_table(out["lamp_writer_edit"], text="text", id="id")
    rows = list(csv.DictReader(open(out["lamp_writer_edit"])))
    assert len(w) == 12 and {r["version"] for r in rows} == {WRITER_EDIT, RAW}
    # each item: exactly one of its two versions is the one the majority preferred
    per_item = {}
    for r in rows:
        per_item.setdefault(r["item_id"], []).append(int(float(r["preferred"])))
    assert all(sorted(v) == [0, 1] for v in per_item.values())
    assert len(read_table(out["lamp_all"], text="text", id="id")) == 18
    c = list(csv.DictReader(open(out["confederacy"])))
    assert len(c) == 12 and {"creativity", "total", "creativity_r1", "creativity_r2", "author", "kind"} <= set(c[0])
    k = next(r for r in c if r["id"] == "confederacy-K2P7")
    assert float(k["creativity"]) == pytest.approx((float(k["creativity_r1"]) + float(k["creativity_r2"])) / 2)


def test_text_measures_are_the_grade_measures_per_text():
    from creval.measures import pertext as P
    items, rankings, _ = lamp.load()
    texts = H.lamp_texts(items, rankings)
    cols = H.text_measures(texts, ("ci", "lexical"))
    assert len(cols["words"]) == len(texts) == 18
    assert cols["words"].tolist() == [len(t.split()) for t in texts["text"]]
    assert np.allclose(cols["distinct_1"], P.lexical(list(texts["text"]))["distinct_1"])
    # leave-group-out: a version is read against the other instructions' texts only, so it can differ from
    # the leave-own-item-out index, whose reference holds the item's two other versions
    assert {"ci_own", "ci_group"} <= set(cols) and (cols["ci_group"] >= cols["ci_own"] - 1e-12).all()
