"""Chapter 06's LAMP and Confederacy sets (issue 54): the mirrored paired comparison the card grades LAMP with,
the writers' ceiling from the stored counts, the rows on the bundled samples (not testable, saying so) and on
the staged data (every row gets a word; skipped where the data is not staged)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from creval.core import paths
from creval.datasets import base, confederacy, lamp
from creval.measures.stats import correlation as corr
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.studies import links
from creval.studies.human_sets import writer_agreement
from creval.studies.rethinking import grading as G
from creval.studies.rethinking import human_sets_report as H
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.data import load_texts
from creval.studies.rethinking.texts import measures_rows

STAGED = paths.REPO.parent / "shared" / "data"


class Recs(dict):
    """The few tables of the rethinking records the two sets' rows read."""
    cfg = RethinkingConfig()


def recs_of(frames: dict, labelled: dict, why: str = "") -> Recs:
    return Recs({**{f"measures_{s}": f for s, f in frames.items()}, "perplexity": pd.DataFrame(),
                 "formatting": pd.DataFrame(),
                 "sets": pd.DataFrame([{"set": s, "labelled": labelled[s], "why": why} for s in frames])})


def fixture(d_pref) -> pd.DataFrame:
    """One item per value of ``d_pref`` (the measure on the version the writers preferred minus the other),
    raw and writer_edit rows; the majority prefers the edit on even items, the raw paragraph on odd ones."""
    rows = []
    for i, d in enumerate(d_pref):
        edit_wins = i % 2 == 0
        edit, raw = (d, 0.0) if edit_wins else (0.0, d)
        for kind, v in (("raw", raw), ("writer_edit", edit)):
            rows.append({"item": f"it{i}", "group": f"ins{i}", "kind": kind, "n_writers": 3,
                         "over_raw": (3.0 if edit_wins else 1.0) if kind != "raw" else math.nan, "m": v,
                         "text": "a b c"})
    return pd.DataFrame(rows)


def auc_of(d_pref) -> float:
    m = fixture(d_pref)
    p = G.mirrored(m, "writer_edit", {"m": m["m"]})
    return corr.auc(p["y"], p["x"]["m"])["auc"]


def test_mirrored_rows_pair_each_item():
    m = fixture([2.0, 1.0, -1.0])
    p = G.mirrored(m, "writer_edit", {"m": m["m"]})
    assert p["y"].tolist() == [1, 0, 0, 1, 1, 0]            # item 1's writers preferred the raw paragraph
    assert p["x"]["m"].tolist() == [2.0, -2.0, -1.0, 1.0, -1.0, 1.0]    # edit - raw, then raw - edit
    assert p["cluster"].tolist() == ["ins0", "ins0", "ins1", "ins1", "ins2", "ins2"]


def test_mirrored_auc_by_hand():
    assert auc_of([2.0, 1.0, 3.0, 0.5]) == 1.0       # always prefers the writers' choice
    assert auc_of([-2.0, -1.0, -3.0, -0.5]) == 0.0   # always prefers the other version
    # D = 2, 1, -1 against -D = -2, -1, 1: 3 + (2 + 1/2) + (1 + 1/2) wins of 9
    assert auc_of([2.0, 1.0, -1.0]) == pytest.approx(7 / 9)


def test_mirrored_leaves_out_ties_and_missing_raw():
    m = fixture([1.0, 1.0])
    m.loc[1, "over_raw"] = 1.0
    m.loc[1, "n_writers"] = 2                             # one of two writers: no majority
    m = pd.concat([m, pd.DataFrame([{"item": "lone", "group": "g", "kind": "writer_edit", "n_writers": 3,
                                     "over_raw": 3.0, "m": 5.0, "text": "x"}])], ignore_index=True)
    p = G.mirrored(m, "writer_edit", {"m": m["m"]})
    assert p["item"].tolist() == ["it1", "it1"]


def test_a_perfect_measure_beats_length_on_the_mirrored_rows():
    rng = np.random.default_rng(0)
    d = rng.uniform(0.1, 1.0, 60)
    m = fixture(d)
    m["words"] = rng.integers(50, 60, len(m)).astype(float)
    p = G.mirrored(m, "writer_edit", {"m": m["m"], "words": m["words"]})
    t = TR.tracks_people(p["x"]["m"], p["y"], stat="auc", baselines={"words": p["x"]["words"]},
                         cluster=p["cluster"], n_boot=300, seed=0)
    assert t["value"] == 1.0 and t["word"] == TR.TRACKS


def test_writer_ceiling_matches_the_rankings_on_the_sample(monkeypatch, tmp_path):
    bare(monkeypatch, tmp_path)
    items, rankings, src = lamp.load()
    assert src.is_sample
    m = load_texts(RethinkingConfig(), "lamp")
    for edit, pair in (("writer_edit", "writer_edit"), ("ai_edit", "ai_edit")):
        assert G.writer_ceiling(m, edit)["pairwise"] == pytest.approx(writer_agreement(rankings, pair)["pairwise"])


def bare(monkeypatch, tmp_path):
    for ds in (lamp.DATASET, confederacy.DATASET):
        monkeypatch.delenv(ds.env, raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    base.FAILURES.reset()


def frames_for(cfg) -> tuple[dict, dict]:
    texts = {s: load_texts(cfg, s) for s in ("lamp", "confed")}
    frames = {s: pd.DataFrame(measures_rows(cfg, s, t)) for s, t in texts.items()}
    return frames, {s: bool(t.attrs["labelled"]) for s, t in texts.items()}


def test_rows_on_the_samples_are_not_testable(monkeypatch, tmp_path):
    bare(monkeypatch, tmp_path)
    frames, lab = frames_for(RethinkingConfig())
    assert lab == {"lamp": False, "confed": False}
    assert set(frames["lamp"]["kind"]) == {"raw", "writer_edit", "ai_edit"}
    assert set(frames["confed"]["kind"]) == {"person", "model"}
    recs = recs_of(frames, lab, "only the bundled sample")
    rows = G.lamp_rows(recs, 50, 0) + G.confed_rows(recs, 50, 0)
    assert len(rows) == 2 * 2 * 5 + 2 * 5          # LAMP: 2 comparisons, mirrored and per item; Confederacy: 2 items
    assert {r["tracking"] for r in rows} == {V.TESTABLE}
    assert all("sample" in r["note"] and "sample" in r["reason"] for r in rows)
    assert {r["source_table"] for r in rows} == {"measures_lamp", "measures_confed"}
    t = H.table_human_sets(recs, rows=rows)
    assert len(t) == len(rows) and "Not real labels here" in t.attrs["caption"]
    assert H.human_sets_md(recs, rows=rows).count("not testable here") == 2


@pytest.mark.skipif(not (STAGED / "lamp_preferences").is_dir() or not (STAGED / "confederacy_of_models").is_dir(),
                    reason="LAMP or Confederacy not staged beside the checkout")
def test_every_row_has_a_word_on_the_staged_data():
    cfg = RethinkingConfig()
    frames, lab = frames_for(cfg)
    assert lab == {"lamp": True, "confed": True}
    recs = recs_of(frames, lab)
    rows = G.lamp_rows(recs, 100, 0) + G.confed_rows(recs, 100, 0)
    assert len(rows) == 30
    assert all(TR.rule_word(r["tracking"]) in TR.WORDS and r["tracking"] != V.TESTABLE for r in rows)
    lamp_r = [r for r in rows if r["source_table"] == "measures_lamp"]
    mirrored = [r for r in lamp_r if r["human data"] in G.LAMP_PAIRS.values()]
    per_item = [r for r in lamp_r if r["human data"] in G.LAMP_WHICH.values()]
    assert {r["n"] for r in mirrored} == {402} and {r["units"] for r in lamp_r} == {200}   # 201 items, 200 instructions
    assert {r["n"] for r in per_item} == {201}
    # the writers preferred the edit on most items: the constant rule scores that share, and the mirrored rows'
    # strongest baseline is at least that (issue 66)
    share = G.writer_ceiling(frames["lamp"], "writer_edit")["majority"]
    assert share > 0.7
    assert all(r["baseline value"] >= share - 1e-9 for r in mirrored if "writer's" in r["human data"])
    unnamed = {r["paper"] for r in rows if r["measure"] in ("distinct-1", "distinct-2", "MATTR")}
    assert unnamed == {"this book's own question"}
    assert {r["units"] for r in rows if r["source_table"] == "measures_confed"} == {13}
    assert all("ceiling" in r["note"] for r in rows)
    c = H.table_human_ceilings(recs)
    assert c["agreement"].iloc[0] == "two writers agree on 85% of pairs"
    md = H.human_sets_md(recs, rows=rows)
    held = {"rethinking": {f"measures_{s}": f.to_dict("records") for s, f in frames.items()}}
    assert "LAMP, 20 rows" in md and not links.dead(md, held)
    assert not links.dead(" ".join(H.table_human_sets(recs, rows=rows)["number"]), held)
