"""The report card from fixture records: statistics, the baseline on the same items, the paired verdict."""
import json

import numpy as np
import pandas as pd
import pytest

from creval.measures.stats import correlation as corr
from creval.measures.stats import prompts as PR
from creval.measures.stats import tracking as TR
from creval.measures.stats import verdicts as V
from creval.studies import card
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records, Study
from creval.studies.registry import STUDIES, in_order
from creval.studies.reportcard import report
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.reportcard.run import under_run_root
from creval.studies.rethinking import grading as rethinking_grading
from creval.studies.rethinking.config import RethinkingConfig


def _recs(root, cfg, tables):
    root.mkdir()
    for name, rows in tables.items():
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(root, cfg)


def test_the_card_reads_its_upstream_studies_and_shares_their_parameters():
    assert [s.name for s in in_order(["reportcard"])][-1] == "reportcard"
    assert set(STUDIES["reportcard"].reads) == {"convergent", "validation", "rethinking", "aut", "humansets", "judges"}
    cfg = ReportCardConfig.from_params({"aut_items": 7, "judge_model": "x"})
    assert cfg.upstream()["aut"] == AutConfig.from_params({"aut_items": 7, "judge_model": "x"})
    assert ReportCardConfig.from_params({"aut_items": 7}).run_id != ReportCardConfig().run_id


def test_the_card_grades_every_study_that_declares_card_rows_and_reads_each(monkeypatch):
    assert [s.name for s in card.graded_studies()] == list(STUDIES["reportcard"].reads)
    row = card.graded(card.TAN, "toy judge", "toy data", list(range(8)), {}, list(range(8)), "spearman", 0, 0)
    asked = []
    toy = Study("toy", "chapters/99-toy.ipynb", ReportCardConfig, run=lambda c: c,
                card=lambda recs, n_boot, seed: asked.append((recs, n_boot, seed)) or [row])
    monkeypatch.setitem(STUDIES, "toy", toy)
    rows = card.card_rows({"toy": "its records"}, n_boot=7, seed=3)
    assert asked == [("its records", 7, 3)] and [r["measure"] for r in rows] == ["toy judge"]
    assert list(rows[0]) == card.COLUMNS + card.SOURCE and card.card_rows({}, n_boot=7, seed=3) == []


def test_convergent_rows_grade_a_judge_against_the_majority_label(tmp_path):
    labels = [True] * 6 + [False] * 4                  # majority "yes": right on 6 of 10
    verdicts = labels[:9] + [None]                     # right on 9, one unparsed (counts as wrong)
    rows = [{"judge": "retrieval", "pair_id": f"p{i}", "criterion": "c", "label": lab, "verdict": v,
             "unparsed": v is None, "confidence": 0.9} for i, (lab, v) in enumerate(zip(labels, verdicts))]
    recs = _recs(tmp_path / "conv", None, {"human_verdicts": rows, "labels_source": [{"line": "Human labels: staged"}]})
    r = STUDIES["convergent"].card(recs, n_boot=300, seed=0)[0]
    assert r["value"] == pytest.approx(0.9) and r["baseline value"] == pytest.approx(0.6)
    assert r["difference"] == pytest.approx(0.3) and r["n"] == 10 and (r["lo"], r["hi"]) == V.wilson(9, 10)
    assert r["units"] == 10 and r["verdict"] == V.TESTABLE               # 10 pairs: fewer than 30


def test_a_judge_that_always_says_no_is_flagged_and_pairs_are_the_units(tmp_path):
    labels = [False] * 45 + [True] * 15
    rows = [{"judge": "few-shot", "pair_id": f"p{i // 2}", "criterion": "c", "label": lab, "verdict": False,
             "unparsed": False, "confidence": 0.9} for i, lab in enumerate(labels)]
    recs = _recs(tmp_path / "conv", None, {"human_verdicts": rows, "labels_source": [{"line": "Human labels"}]})
    r = STUDIES["convergent"].card(recs, n_boot=300, seed=0)[0]
    assert r["value"] == pytest.approx(0.75) == r["baseline value"] and r["units"] == 30
    assert r["verdict"] == V.TESTABLE and r["reason"] == "a constant judge answer (0 on all 60 items)"


def test_aut_rows_keep_the_strongest_baseline_and_the_verdict(tmp_path):
    humans = list(range(1, 31))
    rng = np.random.default_rng(3)
    judge = [h + rng.normal(scale=3) for h in humans]
    sd = [h + rng.normal(scale=8) for h in humans]     # a weaker baseline
    length = [5.0] * 30                                 # a constant one: no correlation at all

    def rows(scorer, mode, vals):
        return [{"dataset": "ocsai1", "object": f"o{k % 6}", "item_id": f"i{k}", "human": h, "scorer": scorer,
                 "mode": mode, "group": 0, "position": 0, "value": v, "parse_path": "text"}
                for k, (v, h) in enumerate(zip(vals, humans))]
    recs = _recs(tmp_path / "aut", AutConfig(), {"human": rows("j", "pointwise", judge) +
                                                 rows("semantic distance", "baseline", sd) +
                                                 rows("length (words)", "baseline", length)})
    r = STUDIES["aut"].card(recs, n_boot=300, seed=0)[0]
    assert r["baseline"] == "semantic distance" and r["units"] == 30   # each response, drawn within its object
    # within each object (issue 63): ranks within the object, its level removed, for the judge and the humans
    obj = [k % 6 for k in range(30)]

    def within(v):
        return PR.within_ranks(v, obj)
    assert r["value"] == pytest.approx(corr.spearman(within(judge), within(humans))["rho"])
    assert r["baseline value"] == pytest.approx(abs(corr.spearman(within(sd), within(humans))["rho"]))
    assert r["difference"] == pytest.approx(r["value"] - r["baseline value"])
    # Rabeyah et al. report no human ratings: the row tests nothing of theirs, whatever the judge does
    assert r["verdict"] == card.UNCLAIMED and r["reason"].startswith("Rabeyah et al. report no human ratings")
    assert TR.rule_word(r["tracking"]) in (TR.TRACKS, TR.NO_BETTER, TR.INCONCLUSIVE, TR.NO_TRACK)


def test_card_table_and_figure_from_records(tmp_path):
    row = card.graded(card.TAN, "m", "d", [1, 2, 3, 4, 5, 6], {"length": [6, 5, 4, 3, 2, 1]}, [1, 2, 3, 4, 5, 6],
                      "spearman", 200, 0)
    # the baseline agrees perfectly in its better orientation: the measure only ties it
    assert row["value"] == pytest.approx(1) and row["baseline value"] == pytest.approx(1)
    assert row["baseline"] == "length" and row["difference"] == pytest.approx(0)
    assert row["verdict"] == V.TESTABLE and row["reason"] == "6 item(s), fewer than the 30 a verdict needs"
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": card.with_adjusted([row]), "sources": []})
    # an untestable row is listed apart, with why, and not drawn
    assert len(report.table_card(recs)) == 0 and len(report.fig_card(recs).data) == 0
    assert report.table_untestable(recs)["why not testable"].tolist() == [row["reason"]]


def test_a_baseline_enters_in_its_better_orientation(tmp_path):
    """TTCW-like fixture: longer stories get fewer passes, so length negated is the stronger baseline, and the
    measure that beat raw length is no better than flipped length."""
    passes = [3, 5, 8, 10, 12, 15, 18, 20, 24, 27, 30, 33]
    words = [900, 820, 700, 760, 610, 640, 500, 520, 430, 380, 300, 330]        # falls as passes rise
    ci = [0.2, 0.3, 0.25, 0.4, 0.35, 0.5, 0.45, 0.6, 0.55, 0.7, 0.65, 0.8]        # rises as passes rise
    sign, b = card.oriented(words, passes, "spearman")
    assert sign == -1 and b == pytest.approx(-corr.spearman(words, passes)["rho"]) and b > 0.9
    labels = [0] * 6 + [1] * 6
    s_auc, b_auc = card.oriented(words, labels, "auc")
    assert s_auc == -1 and b_auc == pytest.approx(1 - corr.auc(labels, words)["auc"]) and b_auc == pytest.approx(1.0)
    rows = [{"id": f"s{i}", "group": f"g{i}", "text": "x", "label": "gpt4", "kind": "gpt4", "passes": p, "ci": c,
             "tpt": 0.1, "n_words": w} for i, (p, c, w) in enumerate(zip(passes, ci, words))]
    recs = _recs(tmp_path / "rethinking", RethinkingConfig(), {
        "measures_ttcw": rows, "sets": [{"set": "ttcw", "texts": 12, "labelled": True, "why": ""}]})
    got = {r["measure"]: r for r in STUDIES["rethinking"].card(recs, n_boot=300, seed=0)}
    r = got["creativity index"]
    assert r["baseline"] == "length as stored (words)"
    assert r["value"] == pytest.approx(corr.spearman(ci, passes)["rho"])
    assert r["baseline value"] == pytest.approx(-corr.spearman(words, passes)["rho"])
    assert r["difference"] == pytest.approx(r["value"] - r["baseline value"])
    # against raw length (rho < 0) the index would have "beaten" the baseline by about 1.9; flipped it does not
    assert abs(r["difference"]) < 0.1
    assert r["verdict"] == V.TESTABLE and r["reason"].startswith("12 item(s)")     # 12 stories: too few either way


def _texts(n, seed):
    """A MacGyver-like set: the label is carried by step markers (a format bit), the measure by the markers
    too plus noise."""
    rng = np.random.default_rng(seed)
    label = (np.arange(n) % 2).astype(bool)
    marked = label ^ (rng.random(n) < 0.1)
    text = ["Step 1: a\nStep 2: b" if m else "a then b" for m in marked]
    ci = marked + 0.8 * rng.normal(size=n)
    return [{"id": f"t{i}", "group": f"p{i // 2}", "text": t, "label": bool(lab), "kind": "k", "ci": float(c),
             "tpt": 0.1, "n_words": 40 + i % 7, "full_words": 60 + i % 11}
            for i, (t, lab, c) in enumerate(zip(text, label, ci))], marked


def test_a_step_marker_baseline_bites_and_supports_lu_et_al(tmp_path):
    rows, marked = _texts(120, 0)
    recs = _recs(tmp_path / "rethinking", RethinkingConfig(), {
        "measures_solver": rows, "sets": [{"set": "solver", "texts": 120, "labelled": True, "why": ""}],
        "formatting": [{"set": "solver", "id": r["id"], "marked": bool(m), "ci_unmarked": r["ci"],
                        "n_words_unmarked": 1} for r, m in zip(rows, marked)]})
    r = {x["measure"]: x for x in STUDIES["rethinking"].card(recs, n_boot=300, seed=0)}["creativity index"]
    assert r["baseline"] in ("step markers", "list lines", "line count") and r["baseline value"] > 0.85
    assert r["units"] == 60 and r["diff hi"] < 0                                  # pairs are the units
    # the label is who wrote the text: the row asks whether the index tells the crowd from GPT-4, and a format
    # bit does it better; the paper's claim (the index is higher for people's texts) cannot be read off it
    assert r["tracking"] == TR.AUTHORSHIP_WORDS[TR.NO_BETTER] and r["beaten by"] == r["baseline"] \
        and r["question"] == card.AUTHORSHIP_Q                   # the word as the page shows it (issue 66)
    assert r["verdict"] == card.INCONCLUSIVE and report.tracked(r).startswith("no better than a trivial baseline at")


def test_no_card_word_changes_with_the_seed_unless_marked_borderline(tmp_path):
    rows, marked = _texts(120, 1)
    recs = _recs(tmp_path / "rethinking", RethinkingConfig(), {
        "measures_solver": rows, "sets": [{"set": "solver", "texts": 120, "labelled": True, "why": ""}],
        "formatting": [{"set": "solver", "id": r["id"], "marked": bool(m), "ci_unmarked": r["ci"] * 0.5,
                        "n_words_unmarked": 1} for r, m in zip(rows, marked)]})
    runs = [STUDIES["rethinking"].card(recs, n_boot=200, seed=s) for s in range(10)]
    assert len(runs[0]) == 3
    for i in range(len(runs[0])):
        words = [run[i]["verdict"] for run in runs]
        usual = max(set(words), key=words.count)
        assert all(run[i]["borderline"] for run in runs if run[i]["verdict"] != usual), (runs[0][i]["measure"], words)


def test_claim_words_follow_the_papers_direction():
    assert card.claim_word(TR.NO_BETTER, "+") == card.INCONCLUSIVE            # agrees, but not beyond the surface
    assert card.claim_word(TR.NO_BETTER, "-") == card.SUPPORTS     # its lead's interval lies below the margin
    assert card.claim_word("tracks people", "+") == card.SUPPORTS
    assert card.claim_word("tracks people", "-") == card.CONTRADICTS
    assert card.claim_word("tracks authorship only", "+") == card.CONTRADICTS
    assert card.claim_word("tracks authorship only", "-") == card.SUPPORTS
    assert card.claim_word("does not track people", "-") == card.SUPPORTS
    assert card.claim_word("inconclusive here", "-") == "inconclusive here"
    assert card.claim_word("tracks people", None) == card.UNCLAIMED          # no paper's claim: no verdict
    assert card.claim_word(V.TESTABLE, None) == card.UNCLAIMED


def test_what_this_shows_and_the_tally_count_support_per_paper(tmp_path):
    good = card.graded(card.TAN, "good", "d", list(range(40)), {"length": [1.0] * 20 + [0.0] * 20}, list(range(40)),
                       "spearman", 300, 0)
    flat = card.graded(card.LU_R, "flat", "d", [0.0, 1.0] * 20, {"length": list(range(40))}, list(range(40)),
                       "spearman", 300, 0, note="bundled sample", degenerate="bundled sample")
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": card.with_adjusted([good, flat]), "sources": []})
    assert good["tracking"] == "tracks people" and good["verdict"] == card.SUPPORTS and good["p"] < 0.01
    t = report.what_this_shows(recs).set_index("verdict")
    assert t.loc[card.SUPPORTS, "rows"] == 1 and t.loc[card.SUPPORTS, "which"].startswith("good")
    assert t.loc[V.TESTABLE, "which"] == "flat · d (Lu et al. 2025 (rethinking)) (bundled sample)"
    tally = report.table_verdicts(recs).set_index("paper")
    assert tally.loc[card.TAN, card.SUPPORTS] == 1 and tally.loc[card.TAN, card.CONTRADICTS] == 0
    assert tally.loc[card.LU_R, V.TESTABLE] == 1 and tally.loc[card.TAN, "after Holm: supports the paper"] == 1


def test_sources_name_folders_under_the_shared_run_root(tmp_path):
    cfg = ReportCardConfig(run_root=str(tmp_path / "runs"))
    assert under_run_root(cfg, tmp_path / "runs" / "aut" / "abc") == "aut/abc"       # the same in any run root
    assert under_run_root(cfg, tmp_path / "elsewhere") == str(tmp_path / "elsewhere")
    recs = _recs(tmp_path / "card", ReportCardConfig(run_root="runs/default"),
                 {"card": [], "sources": [{"study": "aut", "run_dir": "aut/abc"}]})
    assert list(report.table_sources(recs)["run_dir"]) == ["runs/default/aut/abc"]


def test_surface_baselines_of_the_texts():
    f = card.format_baselines(["Step 1: fold\nStep 2: wave\n\n", "fold it and wave", "- a\n- b\n3) c\nplain"])
    assert f["line count"].tolist() == [2, 1, 4] and f["list lines"].tolist() == [2, 0, 3]
    m = pd.DataFrame({"n_words": [10, 12], "full_words": [30, 12], "text": ["a", "b"], "marked": [True, False]})
    b = rethinking_grading.rethinking_baselines(m)
    assert b["length as stored (words)"].tolist() == [30, 12] and b["length as cut (words)"].tolist() == [10, 12]
    assert b["step markers"].tolist() == [1.0, 0.0]
    same = rethinking_grading.rethinking_baselines(m.assign(full_words=[10, 12]))
    assert "length as cut (words)" not in same                               # nothing was cut: one length


def test_a_forest_row_name_links_to_the_items_it_was_computed_from():
    """Issue 53's reader's test: from chapter 08's plot to a row's items in two clicks (its name, then an item)."""
    from creval.grade.forest import forest_figure, linked
    row = {"measure": "creativity index", "word": "tracks people", "value": 0.8, "lo": 0.7, "hi": 0.9,
           "statistic": "AUROC", "difference": 0.08, "diff lo": 0.04, "diff hi": 0.12, "reason": "r"}
    url = "../browse/rethinking.html#t=measures&f.set=macgyver"
    fig = forest_figure([row, {**row, "measure": "distinct-1"}], "t",
                        link=lambda r: url if r["measure"] == "creativity index" else None)
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks == ['<a href="../browse/rethinking.html#t=measures&amp;f.set=macgyver">creativity index</a>',
                     "distinct-1"]
    assert linked("a long<br>name", "u") == '<a href="u">a long</a><br><a href="u">name</a>'
    assert forest_figure([row], "t").layout.yaxis.ticktext == ("creativity index",)   # no link asked: plain names


def test_a_forest_row_is_as_tall_as_its_wrapped_name():
    """Rows are placed by their names' heights, so a three-line name never runs into its neighbours (chapter 08's
    card had plotly space 120 names evenly, and the long LAMP names overlapped)."""
    from creval.grade.forest import forest_figure
    row = {"word": "tracks people", "value": 0.8, "lo": 0.7, "hi": 0.9, "statistic": "spearman", "difference": 0.1,
           "diff lo": 0.0, "diff hi": 0.2, "reason": "r"}
    long = "templates per token (negated) · LAMP: which writer's edits the writers preferred (edit - raw, per item)"
    fig = forest_figure([{**row, "measure": "a"}, {**row, "measure": long}, {**row, "measure": "b"}], "t")
    ys = list(fig.layout.yaxis.tickvals)
    lines = [t.count("<br>") + 1 for t in fig.layout.yaxis.ticktext]
    assert lines == [1, 3, 1] and ys == sorted(ys)
    gaps = [b - a for a, b in zip(ys, ys[1:])]
    assert gaps[0] == gaps[1] > 22                          # the long name takes more room than a one-line one
    assert [t.y[0] for t in fig.data if t.xaxis == "x"] == ys   # every row's point sits on its name


def test_experts_and_lay_readers_side_by_side_and_a_split_is_called_one(tmp_path):
    # a measure that tracks the experts and fails the crowd is a disagreement; one inconclusive on one side is not;
    # a measure read by one kind only is left out
    def row(measure, data, word, raters):
        return {"measure": measure, "human data": data, "tracking": word, "raters": raters, "question": "people"}
    rows = [row("ci", "TTCW", TR.TRACKS, "3 experts per story"), row("ci", "HANNA surprise", TR.NO_TRACK,
            "3 raters per text, 22 in all (crowd)"), row("mattr", "TTCW", V.INCONCLUSIVE, "3 experts per story"),
            row("mattr", "SLM creativity", TR.NO_BETTER + " line count", "68 lay readers"),
            row("ppl", "LAMP", TR.TRACKS, "3 expert writers per item")]
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": rows, "sources": []})
    t = report.table_kinds(recs)
    assert list(t["measure"]) == ["ci", "mattr"] and list(t["the two kinds disagree"]) == ["yes", "no"]
    assert t.iloc[0]["experts' sets"] == f"{TR.TRACKS} on TTCW"
    assert [report.rater_kind(r) for r in ("2 raters (expert; x)", "68 lay readers", "crowd", None)] == \
        ["experts", "lay readers", "crowd workers", ""]


def test_holms_word_for_lu_et_als_claim_is_said_as_the_raw_one_is():
    # Lu et al. claim a measure fails: a row that supports them reads "it fails here too", and Holm's word beside
    # it must say the same thing in the same words, never "it holds here" (which reads as the opposite)
    r = {"paper": card.LU_R, "verdict": V.SUPPORTS, "adjusted": V.SUPPORTS, "adjusted borderline": True,
         "question": "people"}
    assert report.said_here(r) == "Lu et al.: it fails · it fails here too (after Holm: it fails here too, borderline)"
    r = {**r, "adjusted": V.INCONCLUSIVE, "adjusted borderline": False}
    assert report.said_here(r).endswith("(after Holm: here: can't tell)")


def test_a_judges_flips_under_rewording_are_tallied_apart_said_in_their_own_words_and_not_drawn(tmp_path):
    # chapter 07c grades Lu et al.'s instability claim on the gap between a judge's flips and the people's: the row
    # answers another question than agreement, so the card counts it apart, says it plainly, and keeps it off the
    # forest plot of agreement with people
    from creval.studies.judges import grading
    gap = {"set": "hanna", "criterion": "surprise", "judge": "J", "variants": 4, "flip_rate": 0.17,
           "people_flip": 0.39, "gap": -0.22, "gap_lo": -0.27, "gap_hi": -0.18, "gap_mc_lo": 0.002,
           "gap_mc_hi": 0.002, "gap_p": 0.002, "gap_prompts": 96, "pairs": 13730}
    steady = grading.variant_row(gap, {"label": "Surprise (1-5)", "people": "3 raters per text (crowd)"})
    assert steady["verdict"] == V.CONTRADICTS and steady["tracking"] == "flips less often than the people"
    assert "the judge flips 0.17 of its pairs across 4 wordings, the people 0.39" in steady["reason"]
    unsteady = grading.variant_row({**gap, "gap": 0.05, "gap_lo": 0.01, "gap_hi": 0.08}, {})
    assert unsteady["verdict"] == V.SUPPORTS and unsteady["tracking"] == "flips more often than the people"
    noise = np.random.default_rng(0).normal(size=40)
    agree = card.graded(card.BOOK, "m", "d", np.arange(40.0), {"length": noise}, np.arange(40.0) ** 2, "spearman",
                        200, 0)
    assert agree["tracking"] == TR.TRACKS
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": card.with_adjusted([agree, steady, unsteady]),
                                                         "sources": []})
    text = report.summary(recs)
    assert text.startswith("Of 3 checks, 3 could be tested here; against people's judgments: 1 tracks people.")
    assert "Under rewording (2 judge and criterion rows" in text and "1 flips less often than the people" in text
    assert [len(trace.y) for trace in report.fig_card(recs).data if trace.y is not None][0] == 1
    frame = report.card_frame(recs)
    assert report.against_baseline(frame.iloc[1].to_dict()) == ""        # no baseline read back: blank, never "nan"
    said = report.said_here(frame.iloc[1].to_dict())
    assert said.startswith("Lu et al.: a judge is unstable under rewording · here: the opposite")
