"""Chapter 03's report on hand-written records: every table and figure is computed from the tables alone."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from creval.studies.contract import Records
from creval.studies.convergent import reading, report
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.links import dead_in


def recs_of(tmp_path, **tables):
    """A run folder holding ``tables`` (name -> rows), read back as the chapter reads it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(tmp_path, ConvergentConfig())


def verdict(judge, pair, crit, verdict, label=None, conf=0.8, unparsed=False, tin=100, tout=10, rounds=1, **extra):
    return {"judge": judge, "pair_id": pair, "criterion": crit, "verdict": None if unparsed else verdict,
            "unparsed": unparsed, "confidence": None if unparsed else conf, "input_tokens": tin, "output_tokens": tout,
            "rounds": rounds, "early_exit": rounds == 1, "retries": 0, **({} if label is None else {"label": label}),
            **extra}


def test_convergent_table_shares_leave_unparsed_out_and_count_them(tmp_path):
    rows = [verdict("retrieval", "p1::m", "feasibility", True, model="m", domain="macgyver", mean_semantic_entropy=1.0),
            verdict("retrieval", "p1::m", "safety", False, model="m", domain="macgyver", mean_semantic_entropy=1.0),
            verdict("retrieval", "p2::m", "feasibility", None, unparsed=True, model="m", domain="macgyver",
                    mean_semantic_entropy=0.5),
            verdict("retrieval", "p2::m", "safety", True, model="m", domain="macgyver", mean_semantic_entropy=0.5)]
    recs = recs_of(tmp_path, bench_verdicts=rows)
    t = report.convergent_table(recs).iloc[0]
    assert t["semantic entropy"] == 0.75 and t["feasibility"] == 1.0 and t["safety"] == 0.5
    assert t["Overall"] == 0.75 and t["unparsed"] == "1/4" and t["solutions"] == 2
    assert report.convergent_table(recs).attrs["caption"].startswith(
        "Convergent creativity (retrieval judge, smollm2-135m). Scale: the judge answers YES or NO per criterion")
    fig = report.fig_entropy_vs_criteria(recs)
    assert [list(tr.y) for tr in fig.data] == [[1.0], [0.5]] and "single points" in fig.layout.title.text


def test_agreement_table_against_the_labels(tmp_path):
    rows = [verdict("cot", "a", "feasibility", True, True, conf=0.9),
            verdict("cot", "b", "feasibility", False, True, conf=0.6),
            verdict("cot", "a", "effectiveness", None, False, unparsed=True),
            verdict("cot", "b", "effectiveness", False, False, conf=0.7)]
    t = report.agreement_table(recs_of(tmp_path, human_verdicts=rows))
    assert t.attrs["caption"] == "Judges vs human labels (2 pairs, judge smollm2-135m)"
    t = t.set_index("criterion")
    assert t.loc["feasibility", "accuracy"] == 0.5 and t.loc["feasibility", "auarc"] == 0.75   # (1 + 1/2) / 2
    assert t.loc["effectiveness", "coverage"] == 0.5 and t.loc["effectiveness", "accuracy"] == 1.0
    assert t.loc["all", "n"] == 4 and t.loc["all", "accuracy"] == pytest.approx(2 / 3)
    assert t.loc["all", "accuracy_all"] == 0.5 and t.loc["all", "label_yes_rate"] == 0.5


def test_threshold_table_from_the_sweep_records(tmp_path):
    sweep = [  # T = 0.3: both right after one round; T = 0.9: two rounds, one wrong, one unparsed
        {**verdict("retrieval", "a", "feasibility", True, True, conf=0.9, tin=300, tout=30), "T": 0.3},
        {**verdict("retrieval", "b", "feasibility", False, False, conf=0.8, tin=200, tout=20), "T": 0.3},
        {**verdict("retrieval", "a", "feasibility", False, True, conf=0.9, tin=600, tout=60, rounds=2), "T": 0.9},
        {**verdict("retrieval", "b", "feasibility", None, False, unparsed=True, tin=500, tout=50, rounds=2), "T": 0.9}]
    calls = [{"T": 0.3, "pairs": 2, "calls_made": 14, "calls_cached": 0},
             {"T": 0.9, "pairs": 2, "calls_made": 8, "calls_cached": 14}]
    recs = recs_of(tmp_path / "a", sweep=sweep, sweep_calls=calls)
    t = report.threshold_table(recs).set_index("T")
    assert list(t.index) == [0.3, 0.9]
    assert t.loc[0.3, "accuracy"] == 1.0 and t.loc[0.3, "auarc"] == 1.0 and t.loc[0.3, "coverage"] == 1.0
    assert t.loc[0.9, "accuracy"] == 0.0 and t.loc[0.9, "coverage"] == 0.5
    assert t.loc[0.3, "mean rounds"] == 1.0 and t.loc[0.9, "mean rounds"] == 2.0
    assert t.loc[0.3, "tokens per pair"] == 275.0 and t.loc[0.9, "tokens per pair"] == 605.0
    assert t.loc[0.9, "calls made"] == 8 and t.loc[0.9, "calls cached"] == 14
    empty = report.threshold_table(recs_of(tmp_path / "b"))
    assert list(empty.columns) == report.SWEEP_COLUMNS and empty.empty
    fig = report.fig_threshold(recs)
    assert list(fig.data[2].y) == [1.0, 2.0] and "flat" not in fig.layout.title.text
    assert t.loc[0.9, "answers"] == "" and "flat" not in report.threshold_table(recs).attrs["caption"]


def test_a_flat_sweep_of_a_constant_judge_is_flagged(tmp_path):
    # the judge says NO to both pairs at every T: the curve cannot show what T does
    sweep = [{**verdict("retrieval", p, "feasibility", False, lab, conf=0.9), "T": T}
             for T in (0.3, 0.9) for p, lab in (("a", True), ("b", False))]
    calls = [{"T": T, "pairs": 2, "calls_made": 4, "calls_cached": 0} for T in (0.3, 0.9)]
    recs = recs_of(tmp_path, sweep=sweep, sweep_calls=calls)
    t = report.threshold_table(recs)
    assert t["answers"].tolist() == ["always NO", "always NO"] and t["accuracy"].tolist() == [0.5, 0.5]
    assert ("flat: accuracy and AUARC are the same at every T; the judge gives one answer to every item at every T "
            "(always NO): the threshold changes nothing here") in t.attrs["caption"]
    assert "flat: accuracy and AUARC" in report.fig_threshold(recs).layout.title.text


def test_benchmark_rows_name_the_criteria_a_judge_answered_one_way(tmp_path):
    rows = [verdict("retrieval", f"p{i}::m", c, c == "feasibility" or i == 0, model="m", domain="macgyver",
                    mean_semantic_entropy=1.0) for i in range(3) for c in ("feasibility", "safety")]
    recs = recs_of(tmp_path, bench_verdicts=rows)
    t = report.convergent_table(recs)
    assert t["one answer to every solution"].tolist() == ["feasibility: always YES"]
    assert "In 1 row(s) the judge gave one answer" in t.attrs["caption"]
    fig = report.fig_entropy_vs_criteria(recs)
    assert [tr.name for tr in fig.data] == ["m · feasibility (always YES)", "m · safety"]
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0    # under the plot: names take no width


def test_tokens_by_agent_and_phase_per_pair(tmp_path):
    rows = [verdict("retrieval", "a", "f", True, tokens_by={"PA/init": [40, 4], "CA/verdict": [10, 2]}),
            verdict("retrieval", "a", "e", True, tokens_by={"CA/verdict": [20, 2]}),
            verdict("retrieval", "b", "f", True, tokens_by={"PA/init": [60, 6]}),
            verdict("chateval", "b", "f", True, tokens_by={"PA/discussion": [999, 9]})]
    d = report.token_breakdown(recs_of(tmp_path, human_verdicts=rows)).set_index("agent/phase")
    assert d.loc["PA/init", "input per pair"] == 50.0 and d.loc["CA/verdict", "output per pair"] == 2.0
    assert "PA/discussion" not in d.index


def test_labels_source_and_transcript_read_their_tables(tmp_path):
    assert report.labels_source(recs_of(tmp_path / "a", labels_source=[{"line": "Human labels: macgyver from x"}])) == \
        "Human labels: macgyver from x"
    assert "none" in report.labels_source(recs_of(tmp_path / "b"))
    turns = [{"agent": "PA", "phase": "discussion", "round": 1, "input_tokens": 12, "output_tokens": 3,
              "prompt": "discuss <b>", "reply": "a wedge", "retrieved": ["the door"], "retrieved_ids": ["f1"]}]
    tr = pd.DataFrame([{"judge": "cot", "pair_id": "a", "criterion": "feasibility", "problem": "P", "solution": "S",
                        "transcript": [{"agent": "judge", "phase": "verdict", "round": 0, "prompt": "", "reply": "x"}]},
                       {"judge": "retrieval", "pair_id": "b", "criterion": "feasibility", "problem": "P",
                        "solution": "S", "transcript": turns}])
    h = report.transcript_html(tr)
    assert "retrieval · pair b" in h and "discuss &lt;b&gt;" in h and "1 retrieved fragments" in h
    assert "tokens 12/3" in h
    assert report.transcript_html(tr, judge="zero-shot") == "<p><i>no transcripts in this run</i></p>"
    assert report.transcript_html(pd.DataFrame()) == "<p><i>no transcripts in this run</i></p>"


def test_paper_reference_values():
    assert math.isclose(report.PAPER_SHARE, (23758 + 3796) / (66944 + 8634))
    assert np.isnan(report.PAPER_TABLE2.set_index("framework").loc["zero-shot", "accuracy"])


def _labelled(judge, pair, crit, v, label, tin, tout):
    return verdict(judge, pair, crit, v, label, tin=tin, tout=tout)


TO = "../browse/convergent.html#t=human_verdicts&f.judge="      # a judge's verdicts in the item browser


def test_what_this_shows_reads_accuracy_and_tokens_from_the_records(tmp_path):
    human = [_labelled("retrieval", "a", "feasibility", True, True, 300, 30),
             _labelled("retrieval", "b", "feasibility", False, False, 300, 30),
             _labelled("chateval", "a", "feasibility", False, True, 900, 100),
             _labelled("chateval", "b", "feasibility", False, False, 900, 100)]
    bench = [verdict("retrieval", "p::m", "feasibility", True, model="m", domain="macgyver",
                     mean_semantic_entropy=1.0)]
    md = reading.what_this_shows(recs_of(tmp_path, human_verdicts=human, bench_verdicts=bench)).split("\n")
    # the pair is the unit (its criteria share one solution): two pairs carry no verdict
    assert md[0].startswith("- **not testable here (2 pair(s), fewer than the 30")
    # each count links to the verdicts behind it: the browser opened on that judge's rows
    assert f"retrieval 1.000 on [2 parsed verdicts]({TO}retrieval)" in md[0]
    assert f"chateval 0.500 on [2 parsed verdicts]({TO}chateval) (constant)" in md[0]
    assert "(retrieval 0.847, chateval 0.767" in md[0]
    assert md[1].startswith("- **not testable here (2 pair(s)") and "36.5%" in md[1] and "spends 33%" in md[1]
    assert md[2].startswith("- **not testable here**") and "1 model(s)" in md[2]
    note = report.fig7_note(recs_of(tmp_path, bench_verdicts=bench))
    assert note == ("Solutions per model in this build: m 1; with fewer than one bin of 15, each such line is a "
                    "single point.")


def test_a_tie_in_accuracy_does_not_reproduce_the_ranking(tmp_path):
    human = [_labelled(j, p, "feasibility", True, True, 100, 10) for j in ("retrieval", "chateval") for p in "ab"]
    md = reading.what_this_shows(recs_of(tmp_path, human_verdicts=human)).split("\n")
    assert md[0].startswith("- **not testable here (the retrieval judge is constant (always YES))**")
    assert "retrieval 1.000 on [2 parsed" in md[0]
    many = [_labelled(j, f"p{i}", "feasibility", True, True, 100, 10) for j in ("retrieval", "chateval")
            for i in range(30)]
    md = reading.what_this_shows(recs_of(tmp_path / "many", human_verdicts=many)).split("\n")
    # a judge that says YES to every pair agrees with labels that are all YES: no evidence of accuracy
    assert md[0].startswith("- **not testable here (the retrieval judge is constant (always YES))**")
    assert "retrieval 1.000 on [30 parsed" in md[0]
    # equal tokens per pair: the interval [0, 0] neither supports nor contradicts "fewer"
    assert md[1].startswith("- **inconclusive here**") and "0 [0, 0] tokens per pair on 30 pairs" in md[1]


def test_a_paired_accuracy_gain_over_pairs_supports_the_paper(tmp_path):
    # retrieval right on 2 of 3 pairs, chateval always NO against labels that are all YES (a constant judge)
    human = ([_labelled("retrieval", f"p{i}", "feasibility", i % 3 != 0, True, 100, 10) for i in range(40)]
             + [_labelled("chateval", f"p{i}", "feasibility", False, True, 300, 10) for i in range(40)])
    recs = recs_of(tmp_path, human_verdicts=human)
    md = reading.what_this_shows(recs).split("\n")
    assert md[0].startswith("- **supports the paper**") and "retrieval minus chateval 0.650 [" in md[0]
    assert f"chateval 0.000 on [40 parsed verdicts]({TO}chateval) (constant)" in md[0]
    assert not dead_in("\n".join(md), recs)             # every link opens on rows the browser holds
    assert md[1].startswith("- **supports the paper**") and "-200 [-200, -200] tokens per pair on 40 pairs" in md[1]
    t = report.agreement_table(recs).set_index(["judge", "criterion"])
    assert t.loc[("chateval", "all"), "answers"] == "always NO" and t.loc[("retrieval", "all"), "answers"] == ""
    assert t.loc[("chateval", "all"), "majority baseline"] == 1.0
    assert "Constant judges: chateval (always NO)" in report.agreement_table(recs).attrs["caption"]


def test_auarc_says_when_it_ranks_verdicts_without_a_confidence_lowest(tmp_path):
    rows = [verdict("cot", "a", "feasibility", True, True, conf=None),        # right, no confidence
            verdict("cot", "b", "feasibility", False, True, conf=0.6),        # wrong, the only confidence
            verdict("cot", "c", "feasibility", True, True, conf=None)]
    t = report.agreement_table(recs_of(tmp_path, human_verdicts=rows))
    row = t.set_index("criterion").loc["feasibility"]
    # the wrong verdict is kept first (it alone has a confidence): accuracies 0, 1/2, 2/3 -> AUARC 7/18
    assert row["no confidence"] == 2 and row["auarc"] == pytest.approx(7 / 18)
    assert "AUARC ranks them below every confidence" in t.attrs["caption"] and "In 2 row(s)" in t.attrs["caption"]
    sure = report.agreement_table(recs_of(tmp_path / "b", human_verdicts=[verdict("cot", "a", "feasibility", True,
                                                                                  True, conf=0.9)]))
    assert sure["no confidence"].tolist() == [0, 0] and "AUARC ranks" not in sure.attrs["caption"]
