"""Released outputs as models (models/fixed.py, studies/compare/released.py) and their rankings
(studies/compare/ranking.py), on the bundled samples as a fresh clone sees them."""
import numpy as np
import pandas as pd
import pytest

from creval.core.errors import CrevalError
from creval.models.fixed import FixedOutputs
from creval.studies.compare import ranking, released
from creval.studies.compare.config import CompareConfig


@pytest.fixture
def fresh_clone(monkeypatch, tmp_path):
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "CREVAL_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(k, v)
    for k in ("CREVAL_MACGYVER_DIR", "CREVAL_TTCW_DIR"):
        monkeypatch.delenv(k, raising=False)


class LengthEmbedder:
    """Vectors from two text features (unit tests only): texts of similar length and wording point alike."""

    def encode(self, texts):
        return np.array([[len(t.split()), t.lower().count("the") + 1.0] for t in texts], dtype=float)


def test_fixed_outputs_answer_from_their_table_and_make_no_call():
    f = FixedOutputs.from_rows("m", [("i1", "one"), ("i1", "two"), ("i2", " "), ("i3", "three")], "here")
    assert f.items == ["i1", "i3"] and f.answers("i1") == ("one", "two") and f.answer("i3") == "three"
    assert f.describe()["kind"] == "fixed" and f.describe()["texts"] == 3
    with pytest.raises(CrevalError, match="no answer"):
        f.answer("i2")
    with pytest.raises(CrevalError, match="cannot sample"):
        f.sample([{"role": "user", "content": "x"}], 2)
    with pytest.raises(CrevalError, match="no text"):
        FixedOutputs.from_rows("empty", [("i", "")])


def test_fresh_clone_samples_carry_every_released_model(fresh_clone):
    outs, df, info = released.macgyver_outputs()
    assert set(outs) == set(released.macgyver.SOLVERS.values()) and info["sample"]
    assert all(len(o.items) == 5 for o in outs.values())
    rates = df.groupby("solver")["correct"].mean()
    assert rates["Llama-2 7B"] < rates["GPT-4"]           # the sample's labels, as written
    t_outs, st, t_info = released.ttcw_outputs()
    assert set(t_outs) == {"Claude", "GPT4", "GPT3.5"} and not t_info["verdicts"]
    capped, _, c_info = released.macgyver_outputs(cap=3, seed=1)
    assert c_info["items"] == 3 and all(len(o.items) <= 3 for o in capped.values())


def test_every_measure_of_the_released_outputs_on_the_sample(fresh_clone):
    cfg = CompareConfig(compare_released_bleu_refs=3)
    rows, answers, info = released.dataset_rows("macgyver", cfg, LengthEmbedder())
    v = pd.DataFrame(rows)
    measures = set(v["measure"])
    assert {released.CI, released.DISTINCT, released.BLEU, released.COS_PEOPLE, released.COS_MODELS,
            "people: correct", "people: efficient"} <= measures
    bounded = v[v["measure"] != released.WORDLEN]
    assert bounded["value"].between(-1 - 1e-9, 1 + 1e-9).all() and len(answers) == 40
    assert {released.SHARED3, released.MATTR, released.WORDLEN, released.RARE, released.TYPICAL} <= measures
    ci = v[v["measure"] == released.CI]
    assert len(ci) == 40 and ci["value"].between(0, 1).all()
    # a human label is the mean of the annotations: GPT-4 was labelled correct on all 5 sample problems
    gpt4 = v[(v["model"] == "GPT-4") & (v["measure"] == "people: correct")]
    assert len(gpt4) == 5 and gpt4["value"].eq(1.0).all()
    # people (Prolific) have one answer per problem: no within-people cosine, but cosines to the models
    assert not len(v[(v["model"] == "people (Prolific)") & (v["measure"] == released.COS_PEOPLE)])


def test_repetition_scores_a_model_that_repeats_itself_higher():
    same = "Use the paperclip as a hook and pull the zipper closed slowly."
    outs = {"parrot": FixedOutputs.from_rows("parrot", [(f"i{k}", same) for k in range(4)]),
            "varied": FixedOutputs.from_rows("varied", [("i0", "Tie floss to the slider."),
                                                         ("i1", "Wedge cardboard behind the frame."),
                                                         ("i2", "Tape a magnet on a hanger and fish."),
                                                         ("i3", "Shade the screen with a paper cup.")])}
    v = pd.DataFrame(released.repetition_rows("x", outs, refs=3, seed=0))
    bleu = v[v["measure"] == released.BLEU].groupby("model")["value"].mean()
    assert bleu["parrot"] == pytest.approx(1.0) and bleu["varied"] < 0.2
    assert v[v["measure"] == released.DISTINCT]["value"].eq(1.0).all()


def known_values(items=12):
    rng = np.random.default_rng(0)
    rows = []
    for it in range(items):
        base = rng.normal()
        for m, shift in (("top", 2.0), ("mid", 1.0), ("low", 0.0)):
            rows.append({"dataset": "d", "model": m, "measure": "q", "item": f"i{it}", "value": base + shift})
            rows.append({"dataset": "d", "model": m, "measure": "people: correct", "item": f"i{it}",
                         "value": float(shift > 0.5 or it % 2 == 0)})
    return pd.DataFrame(rows)


class Recs(dict):
    cfg = None


def test_rankings_with_intervals_and_agreement_with_people():
    r = ranking.rankings(known_values(), "d", n_boot=200, seed=0)
    q = r[r["measure"] == "q"].set_index("model")
    assert q.loc["top", "rank"] == 1 and q.loc["mid", "rank"] == 2 and q.loc["low", "rank"] == 3
    assert q.loc["top", "rank_lo"] == q.loc["top", "rank_hi"] == 1        # item effects cancel: a sure rank
    assert (q["lo"] <= q["mean"]).all() and (q["mean"] <= q["hi"]).all()
    recs = Recs(released=known_values(), pairwise=pd.DataFrame())
    a = ranking.agreement(recs, "d")
    assert len(a) == 1 and a.iloc[0]["models"] == 3
    assert a.iloc[0]["kendall tau"] == pytest.approx(2 / 3)     # top and mid tie on correct: tau-a 2/3
    t = ranking.table_released(recs, "d")
    assert list(t["model"])[-1] == "low" and t["q"].str.contains("#1").sum() == 1
    assert "no pairwise judgement" in ranking.table_pairwise(recs, "d").attrs["caption"]


def test_fewer_than_five_items_give_no_rank_interval():
    r = ranking.rankings(known_values(items=3), "d", n_boot=50)
    assert r["rank_lo"].isna().all() and r["rank"].notna().all()


def test_a_run_without_released_outputs_says_so():
    recs = Recs(released=pd.DataFrame(), pairwise=pd.DataFrame())
    assert ranking.table_released(recs, "macgyver").empty
    assert ranking.agreement(recs, "macgyver").empty and ranking.pairwise_vs_people(recs, "macgyver").empty
