"""The model-backed measures of the LAMP and Confederacy rows (issue 54): which texts they see (a seeded sample of
LAMP instructions with every version of each, the first stories of each Confederacy author), the pairwise novelty
judge asked in both orders (a flip is a tie), and the card rows they give, checked against values worked out by
hand. The judge's model here is a stand-in with fixed log-probs (a unit test may use one)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from creval.measures.stats import verdicts as V
from creval.studies.human_sets import judge_prefs, measure_prefs, pair_agreement
from creval.studies.rethinking import calls
from creval.studies.rethinking import grading as G
from creval.studies.rethinking import human_sets_report as H
from creval.studies.rethinking.config import RethinkingConfig


def lamp_frame(n_items: int, seed: int = 0) -> pd.DataFrame:
    """``n_items`` LAMP-shaped items (one instruction each), raw + writer_edit + ai_edit rows; the writers'
    majority prefers both edits on even items and the raw paragraph on odd ones. Texts of varied length."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        wins = i % 2 == 0
        for kind in ("raw", "writer_edit", "ai_edit"):
            words = " ".join(f"w{k}" for k in range(int(rng.integers(20, 40))))
            rows.append({"id": f"it{i}::{kind}", "item": f"it{i}", "group": f"ins{i}", "kind": kind,
                         "context": f"Write about thing {i}.", "text": f"{kind} {i}: {words}", "n_writers": 3,
                         "over_raw": math.nan if kind == "raw" else (3.0 if wins else 0.0), "ci": rng.random()})
    return pd.DataFrame(rows)


class Recs(dict):
    cfg = RethinkingConfig()


def recs_of(m: pd.DataFrame, ppl: dict | None = None, judged: list[dict] | None = None) -> Recs:
    model = RethinkingConfig().model
    p = pd.DataFrame([{"set": "lamp", "id": i, "model": model, "ppl": v, "bpb": v / 10}
                      for i, v in (ppl or {}).items()])
    return Recs({"measures_lamp": m, "measures_confed": pd.DataFrame(), "perplexity": p, "formatting": pd.DataFrame(),
                 "lamp_judge": pd.DataFrame(judged or []),
                 "sets": pd.DataFrame([{"set": "lamp", "labelled": True, "why": ""}])})


def judge_table(m: pd.DataFrame, edit: str, orders: dict) -> list[dict]:
    """``lamp_judge`` rows of ``edit`` from per-item (edit picked with the edit shown first, with it second)."""
    prefs = judge_prefs([a for a, _ in orders.values()], [b for _, b in orders.values()])
    return [{"item": it, "group": m.loc[m["item"] == it, "group"].iloc[0], "pair": edit,
             "first_id": f"{it}::{edit}", "second_id": f"{it}::raw", "edit_shown_first": a, "edit_shown_second": b,
             "pref": float(p), "p_edit": 0.5, "judge_model": "stand-in"}
            for (it, (a, b)), p in zip(orders.items(), prefs)]


# -- which texts the model-backed measures see -------------------------------------------------------------
def test_lamp_pick_is_seeded_and_keeps_every_version_of_an_instruction():
    m = lamp_frame(40)
    cfg = RethinkingConfig(rethink_lamp_model_instructions=6)
    pick = calls.lamp_pick(cfg, m)
    assert pick["group"].nunique() == 6 and len(pick) == 18
    assert pick.groupby("group")["kind"].apply(set).eq({"raw", "writer_edit", "ai_edit"}).all()
    assert pick["id"].tolist() == calls.lamp_pick(cfg, m)["id"].tolist()          # the same seed, the same draw
    other = calls.lamp_pick(RethinkingConfig(rethink_lamp_model_instructions=6, data_seed=7), m)
    assert set(other["group"]) != set(pick["group"])
    assert len(calls.lamp_pick(RethinkingConfig(rethink_lamp_model_instructions=0), m)) == 120     # 0: all
    assert list(calls.ppl_scored(cfg, "lamp", m)) == list(m["id"].isin(pick["id"]))


def test_confed_perplexity_takes_the_first_stories_of_each_author():
    t = pd.DataFrame({"id": [f"s{i}" for i in range(7)], "group": ["a", "a", "a", "b", "b", "c", "a"],
                      "kind": ["model"] * 5 + ["person", "model"]})
    got = calls.ppl_scored(RethinkingConfig(rethink_confed_ppl_per_author=2), "confed", t)
    assert got.tolist() == [True, True, False, True, True, True, False]
    assert calls.ppl_scored(RethinkingConfig(rethink_confed_ppl_per_author=0), "confed", t).all()


# -- the judge in both orders ------------------------------------------------------------------------------
class StandIn:
    """Choice log-probs: prefers the response holding 'vivid' whichever letter it has; with neither or both,
    the letter A (a position). Counts the calls."""
    name = "stand-in"

    def __init__(self):
        self.calls = 0
        self.spec = SimpleNamespace(name="stand-in", identity=lambda: {"name": "stand-in"})

    def choice_logprobs_many(self, asks, tags=None):
        out = []
        for msgs, _ in asks:
            self.calls += 1
            user = msgs[-1]["content"]
            a, b = user.split("Answer B")
            va, vb = "vivid" in a, "vivid" in b
            pick_a = va if va != vb else True
            out.append(SimpleNamespace(logprobs={"A": -0.1 if pick_a else -2.0, "B": -2.0 if pick_a else -0.1}))
        return out


def test_lamp_judge_rows_ask_both_orders_and_call_a_flip_a_tie():
    m = lamp_frame(2)
    m.loc[m["id"] == "it0::writer_edit", "text"] = "a vivid paragraph"        # the judge prefers this edit
    m.loc[m["id"] == "it1::raw", "text"] = "the vivid raw paragraph"          # and this raw one over both edits
    model = StandIn()
    rows = calls.lamp_judge_rows(RethinkingConfig(), model, m)
    assert model.calls == 8                                                     # 2 items x 2 edits x 2 orders
    got = {(r["item"], r["pair"]): (r["edit_shown_first"], r["edit_shown_second"], r["pref"]) for r in rows}
    assert got == {("it0", "writer_edit"): (True, True, 1.0),       # the edit, in both orders
                   ("it0", "ai_edit"): (True, False, 0.5),          # neither holds 'vivid': A both times, a flip
                   ("it1", "writer_edit"): (False, False, 0.0),     # the raw paragraph, in both orders
                   ("it1", "ai_edit"): (False, False, 0.0)}
    assert {r["first_id"] for r in rows if r["item"] == "it0"} == {"it0::writer_edit", "it0::ai_edit"}
    assert {r["second_id"] for r in rows if r["item"] == "it1"} == {"it1::raw"}


# -- the card rows -----------------------------------------------------------------------------------------
def test_perplexity_rows_on_a_sample_of_instructions():
    m = lamp_frame(50)
    # perplexity on 40 of the 50 items: higher on the writers' choice on 30 of them (item D = +(i + 1)), lower
    # on the other 10 (D = -(i + 1)); the writers' choice is the edit on even items, the raw one on odd ones
    ppl = {}
    for i in range(40):
        d = (i + 1.0) if i < 30 else -(i + 1.0)
        pref, other = ("writer_edit", "raw") if i % 2 == 0 else ("raw", "writer_edit")
        ppl[f"it{i}::{pref}"], ppl[f"it{i}::{other}"] = 100.0 + d, 100.0
        ppl[f"it{i}::ai_edit"] = ppl[f"it{i}::raw"]              # the AI edit: no difference at all
    rows = [r for r in G.lamp_rows(recs_of(m, ppl), 200, 0) if r["measure"] == "perplexity"
            and r["human data"] in G.LAMP_PAIRS.values()]                # the mirrored rows (not the per-item ones)
    assert [r["human data"] for r in rows] == list(G.LAMP_PAIRS.values())
    w = rows[0]
    assert w["n"] == 80 and w["units"] == 40
    # the rows hold D (1..30, then -31..-40) and -D: the AUROC is the share of (D, D') with D > -D'; only two
    # agreeing items beat each other (the 10 disagreeing ones are larger in size): (30/40)^2
    d = np.array([i + 1.0 for i in range(30)] + [-(i + 1.0) for i in range(30, 40)])
    assert np.mean([(a > -b) + 0.5 * (a == -b) for a in d for b in d]) == 0.5625
    assert w["value"] == pytest.approx(0.5625)
    assert "on 40 of 50 instructions" in w["reason"] and "rethink_lamp_model_instructions = 15" in w["reason"]
    assert w["source_table"] == "perplexity" and w["source_filters"] == {"set": "lamp"}
    assert rows[1]["tracking"] == V.TESTABLE and "constant" in rows[1]["reason"]   # the AI edit: no difference
    # the same pairs through the share of agreement: 30 of 40 items
    values = {**ppl}
    pairs = pd.DataFrame({"first_id": [f"it{i}::writer_edit" for i in range(40)],
                          "second_id": [f"it{i}::raw" for i in range(40)],
                          "experts": [1.0 if i % 2 == 0 else 0.0 for i in range(40)],
                          "unit": [f"ins{i}" for i in range(40)]})
    assert pair_agreement(pairs, measure_prefs(pairs, values), n_boot=50)["agreement"] == pytest.approx(0.75)


def test_judge_rows_read_a_flip_as_a_tie():
    m = lamp_frame(40)
    # the judge sides with the writers on items 0-29 in both orders, flips (picks A both times) on 30-39
    orders = {}
    for i in range(40):
        edit_wins = i % 2 == 0
        orders[f"it{i}"] = (edit_wins, edit_wins) if i < 30 else (True, False)
    judged = judge_table(m, "writer_edit", orders)
    assert [r["pref"] for r in judged[28:32]] == [1.0, 0.0, 0.5, 0.5]
    rows = [r for r in G.lamp_rows(recs_of(m, judged=judged), 200, 0) if r["measure"] == G.JUDGE]
    assert [r["human data"] for r in rows] == [G.LAMP_PAIRS["writer_edit"], G.LAMP_WHICH["writer_edit"]]   # no AI edits
    assert {r["paper"] for r in rows} == {"Tan et al. 2026"}             # the judge's claim is Tan et al.'s (issue 66)
    r = rows[0]
    # x per item: +0.5 on 30 agreeing items, 0 on 10 ties; against -x: a + t (a + t/2) with a = 3/4, t = 1/4
    assert r["value"] == pytest.approx(0.75 + 0.25 * (0.75 + 0.125))
    assert r["n"] == 80 and r["units"] == 40 and r["tracking"] != V.TESTABLE
    assert r["source_table"] == "lamp_judge" and r["reason"].endswith("; all 40 instructions")


def test_a_judge_that_prefers_a_position_is_not_graded():
    m = lamp_frame(40)
    orders = {f"it{i}": (True, False) if i < 32 else (i % 2 == 0, i % 2 == 0) for i in range(40)}   # 32 flips
    recs = recs_of(m, judged=judge_table(m, "writer_edit", orders))
    r = [r for r in G.lamp_rows(recs, 200, 0) if r["measure"] == G.JUDGE][0]
    assert r["tracking"] == V.TESTABLE and "copies the order" in r["reason"]
    assert "32 of 40 (80%) items" in r["reason"]
    md = H.human_sets_md(recs, rows=G.lamp_rows(recs, 50, 0))
    assert "the pairwise novelty judge 40 of LAMP's 40 instructions" in md
    assert "changed its answer with the order on 32 of 40 comparisons" in md
