"""The formatting control of chapter 06: step markers stripped from texts and pool, the creativity index scored
again, and the report's raw-beside-stripped AUROC with the share of the gap formatting accounts for."""
import json

import pandas as pd
import pytest

from creval.measures.ngram_index import NgramIndex
from creval.studies.contract import Records
from creval.studies.links import dead_in
from creval.studies.rethinking import reading, report, sentences, texts
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.data import has_step_marker, strip_step_markers


def test_step_markers_and_list_numbers_are_stripped_and_nothing_else():
    assert strip_step_markers("Step1: Open the bottle. \nStep2: Wet the towel.") == "Open the bottle. \nWet the towel."
    assert strip_step_markers("step 1. put the bottle in\nstep 2. swing it") == "put the bottle in\nswing it"
    assert strip_step_markers("1) fold the map\n2. wave it\n- 3: done") == "fold the map\nwave it\ndone"
    assert strip_step_markers("Pour 1.5 litres; it took 2 steps.") == "Pour 1.5 litres; it took 2 steps."
    assert strip_step_markers("a <br> Step3: b") == "a <br>b"
    assert has_step_marker("Step1: x") and has_step_marker("ok\n2. y") and not has_step_marker("Use 2 cups.")


def test_pairs_are_cut_again_to_the_shorter_text_after_stripping():
    t = pd.DataFrame({"group": ["p", "p"], "kind": ["human", "llm"],
                      "full": ["fold the map and wave it", "Step1: fold it\nStep2: wave it\nStep3: done"]})
    # stripped: 6 words vs 5 words ("fold it wave it done"): both cut to 5
    assert texts.unmarked_texts("solver", t) == ["fold the map and wave", "fold it wave it done"]
    assert texts.unmarked_texts("ps", t)[1] == "fold it\nwave it\ndone"


def test_formatting_rows_score_the_stripped_text_against_the_stripped_pool(monkeypatch):
    pool = [("p2", "Step1: cut the rope\nStep2: tie the rope")]

    def reference(cfg, text_set, t, unmarked=False):
        docs = [(g, strip_step_markers(x) if unmarked else x) for g, x in pool]
        return NgramIndex.build(docs, range(1, 4), "pool")
    monkeypatch.setattr(texts, "reference", reference)
    cfg = RethinkingConfig(rethink_ci_l_min=2, rethink_ci_l_max=3)
    t = pd.DataFrame({"id": ["p1::llm"], "group": ["p1"], "kind": ["llm"], "label": [False],
                      "full": ["Step1: fold the map\nStep2: wave the map"]})
    (row,) = texts.formatting_rows(cfg, "ps", t)
    # as written, "Step1 :" and "Step2 :" (and ": ...") are shared with the pool; stripped, nothing is
    raw = texts.C.creativity_index_many(list(t["full"]), reference(cfg, "ps", t), (2, 3), "mean", ["p1"])[0]
    assert raw.ci < 1 and row["ci_unmarked"] == 1.0 and row["marked"] and row["n_words_unmarked"] == 6


def write(root, table, rows):
    (root / f"{table}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def recs(tmp_path):
    # forty pairs (the independent units: enough for a verdict), four values repeated: as written every crowd
    # text scores above every GPT-4 text (AUROC 1);
    # stripped, the crowd wins 12 of each 16 (crowd, GPT-4) pairs of values (AUROC 0.75)
    ci = {"human": [0.9, 0.8, 0.85, 0.95], "llm": [0.5, 0.6, 0.55, 0.4]}
    plain = {"human": [0.7, 0.5, 0.8, 0.9], "llm": [0.6, 0.55, 0.75, 0.45]}
    marked = {"human": [True, False, False, False], "llm": [True, True, True, True]}
    rows, fmt = [], []
    for kind in ("human", "llm"):
        for i in range(40):
            rows.append({"id": f"p{i}::{kind}", "group": f"p{i}", "text": "t", "label": kind == "human", "kind": kind,
                         "ci": ci[kind][i % 4], "n_words": 10, "tpt": 0.1})
            fmt.append({"set": "solver", "id": f"p{i}::{kind}", "kind": kind, "label": kind == "human",
                        "marked": marked[kind][i % 4], "ci_unmarked": plain[kind][i % 4], "n_words_unmarked": 9})
    write(tmp_path, "measures_solver", rows)
    write(tmp_path, "formatting", fmt)
    write(tmp_path, "sets", [{"set": "solver", "texts": 80, "labelled": True, "why": ""},
                             {"set": "ps", "texts": 0, "labelled": False, "why": "no MacGyver here"}])
    return Records(tmp_path, RethinkingConfig(n_boot=200))


def test_raw_and_stripped_aurocs_side_by_side(recs):
    t = report.table_formatting(recs)
    solver = t[t["check"].str.startswith("MacGyver crowd")].set_index("measure")
    assert solver.loc["creativity index, as written", "value"] == pytest.approx(1.0)
    assert solver.loc["creativity index, step markers stripped", "value"] == pytest.approx(0.75)
    assert "human: 25% marked, llm: 100% marked" in solver.loc["creativity index, as written", "note"]
    assert t[t["check"].str.startswith("MacGyver unconventional")]["note"].iloc[0] == "skipped: no MacGyver here"
    f = reading.formatting_values(recs)
    assert f["raw"]["text"].startswith("1.00") and f["stripped"]["text"].startswith("0.75")
    assert f["marked_gpt4"] == "100%" and f["marked_crowd"] == "25%"
    assert f["removed"] == "50%"                     # (1.00 - 0.75) of the 0.50 above chance
    md = sentences.formatting_md(recs)             # the sentence under the table, each side linked to its rows
    assert md.startswith("Step markers are in 100% of [GPT-4's texts](../browse/rethinking.html#t=formatting"
                         "&f.set=solver&f.kind=llm) and 25% of [the crowd's texts](")
    closing = sentences.closing_md(recs)
    assert "length matching (on [40 problems](../browse/rethinking.html#t=measures_solver)): AUROC 1.00" in closing
    shows = "\n".join(reading.what_this_shows(recs)["this build"])
    assert dead_in("\n".join([md, closing, shows]), recs) == []


def test_what_this_shows_credits_the_gap_to_ideas_only_when_it_survives_stripping(recs, tmp_path):
    t = reading.what_this_shows(recs).set_index("the paper's claim")
    human_llm = t[t.index.str.startswith("The creativity index is higher for human")].iloc[0]
    assert human_llm["verdict"] == "supports the paper" and "0.75" in human_llm["this build"]   # stripped: above chance
    cw = t[t.index.str.startswith("Creative writing")].iloc[0]
    assert cw["verdict"] == "not testable here" and cw["reason"] == "their texts are not released"
    # stripped to chance: the same claim is no longer supported, the gap was formatting
    f = recs["formatting"].assign(ci_unmarked=0.5)
    write(recs.root, "formatting", f.to_dict("records"))
    again = reading.what_this_shows(Records(recs.root, recs.cfg)).set_index("the paper's claim")
    row = again[again.index.str.startswith("The creativity index is higher for human")].iloc[0]
    assert row["verdict"] == "not testable here" and row["this build"].endswith("the gap is formatting")
    assert row["reason"].startswith("no interval: the statistic is undefined on 200 of 200 resamples")
