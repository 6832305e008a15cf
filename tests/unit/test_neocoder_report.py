"""Chapter 05's report on hand-written records: every table and figure against values computed by hand, and
every typed record round-trips through its JSONL row."""
import json
import math

import pytest

from creval.studies.contract import Records
from creval.studies.links import dead_in
from creval.studies.neocoder import claims, reading, report
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.records import CodeRecord, HumanDetectionRecord, PositiveRecord, ProblemRecord, RoundRecord

A, B = "comprehension = for loop", "strict syntax"
C = "../browse/neocoder.html#t=codes"          # the replayed codes in the item browser
FLAGS = dict(single_test=False, yes_no=False, padded_output=False, multiline_answer=False, input_flattened=False,
             needs_checker=False, no_humans=False, verifiable=True)


def problem(pid, replayed, rounds, banned, humans, **flags):
    return ProblemRecord(pid, pid.split("-")[1], replayed, 6, 2, rounds, banned, humans, **{**FLAGS, **flags},
                         n_humans=len(humans))


def code(pid, r, state, banned, repo, strict, techniques, follows, novelty, verifiable=True, salvaged=False):
    return CodeRecord(pid, r, state, banned, "sha", {"verdict": repo},
                      {"verdict": strict, "cases": [{"verdict": strict}]},
                      repo == "OK", strict == "OK", salvaged, "static", techniques, "ok", follows, [], novelty, True,
                      verifiable, f"def solve():\n    pass  # {pid} {r}\n")


def live_round(model, r, state, chosen):
    return RoundRecord("neocoder-1A", model, "thread", r, state, [chosen] if chosen else [], ["for loop"], chosen,
                       f"0:neocoder-1A:{r}", "prompt", "reply", 10, 24, "length", "", "no_code",
                       {"verdict": "runtime error"}, {"verdict": "not parsable"}, "static", [], "none", True, [],
                       0.0, 0.0, 1.5)


TABLES = {
    "data_source": [{"data": "NeoCoder problems: neocoder from shared:/x", "problems": 2, "rounds": 12,
                     "test cases": 4, "sample": False}],
    "problems": [problem("neocoder-1A", True, [0, 1, 2], [[], ["for loop"], ["for loop", "if statement"]],
                         [["for loop"], ["while loop"]], yes_no=True),
                 problem("neocoder-2B", True, [0, 1], [[], ["while loop"]], [["while loop"]],
                         input_flattened=True, verifiable=False),
                 problem("neocoder-3C", False, [0], [[]], [], no_humans=True)],
    "codes": [code("neocoder-1A", 0, 0, [], "OK", "OK", ["for loop"], True, 0.0),
              code("neocoder-1A", 1, 1, ["for loop"], "wrong answer", "OK", ["while loop", "recursion"], True, 0.5),
              code("neocoder-1A", 2, 2, ["for loop", "if statement"], "runtime error", "wrong answer", ["recursion"],
                   True, 1.0, salvaged=True),
              code("neocoder-2B", 0, 0, [], "wrong answer", "OK", ["while loop"], True, 0.0, verifiable=False),
              code("neocoder-2B", 1, 1, ["while loop"], "time limit", "not parsable", ["while loop"], False, 0.0,
                   verifiable=False),
              code("neocoder-2B", 2, None, ["while loop"], "time limit", "not parsable", ["while loop"], False, 0.0,
                   verifiable=False)],
    "known_positives": [PositiveRecord("neocoder-1A", 0, "for loop", {A: True, B: True}),
                        PositiveRecord("neocoder-1A", 1, "if statement", {A: True, B: False}),
                        PositiveRecord("neocoder-2B", 0, "while loop", {A: True, B: True})],
    "human_detections": [HumanDetectionRecord("neocoder-1A", 0, ["for loop"],
                                              {A: ["for loop"], B: ["for loop", "if statement"]}),
                         HumanDetectionRecord("neocoder-1A", 1, ["while loop"], {A: ["while loop"], B: []})],
    "rounds": [live_round("m1", 0, 0, None), live_round("m1", 1, None, None)],
}


@pytest.fixture
def recs(tmp_path):
    for name, rows in TABLES.items():
        rows = [r if isinstance(r, dict) else r.to_dict() for r in rows]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(tmp_path, NeoCoderConfig(n_boot=50, neocoder_problems=0))


def test_records_round_trip():
    for rows in TABLES.values():
        for r in rows:
            if not isinstance(r, dict):
                assert type(r).from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_data_table1_and_flags(recs):
    # the data source by kind, never the build machine's folder
    assert report.data_source(recs).to_dict("records") == [{"data": "NeoCoder problems: neocoder from the staged "
                                                                    "copy (x)", "problems": 2, "rounds": 12,
                                                            "test cases": 4}]
    t1 = report.table1(recs)
    assert t1["problems (ours)"].tolist() == [3, 2, 1, 0, 0, 0]
    assert t1["problems (paper)"].tolist() == [199, 199, 198, 194, 176, 97] and not t1["equal"].any()
    f = report.flags(recs).set_index("flag")
    assert f.loc["yes_no", "problems"] == 1 and f.loc["input_flattened", "examples"] == "2B"
    assert f.loc["verifiable", "examples"] == "1A, 3C" and f.loc["no_humans", "problems"] == 1


def test_table3_and_verdicts(recs):
    t = report.table3(recs)
    assert t["problems"].tolist() == [2, 2, 1]
    assert t["repo-compatible"].tolist() == ["1/2", "0/2", "0/1"] and t["strict"].tolist() == ["2/2", "1/2", "0/1"]
    assert t["strict %"].tolist() == [100.0, 50.0, 0.0]
    assert t["paper pass@1"].tolist() == ["32/199", "23/199", "14/198"] and not t["equal to paper"].any()
    v = report.table3(recs, "verifiable")
    assert v["strict"].tolist() == ["1/1", "1/1", "0/1"] and set(v["paper pass@1"]) == {""}
    d = report.verdicts(recs).set_index("judge")
    assert d.loc["repo", ["OK", "wrong answer", "runtime error", "time limit"]].tolist() == [1, 2, 1, 1]
    assert d.loc["strict", ["OK", "wrong answer", "not parsable"]].tolist() == [3, 1, 1]
    assert d.loc["strict OK, repo not", "OK"] == 2 and d.loc["repo OK, strict not", "OK"] == 0
    # the one salvaged code got a wrong answer: it is counted there, not under OK
    assert d.loc["salvaged truncated codes (strict)", ["OK", "wrong answer"]].tolist() == [0, 1]


def test_repo_only_codes_are_explained_by_their_records(tmp_path):
    def wa(pid, passed, n):
        c = code(pid, 0, 0, [], "OK", "wrong answer", [], True, 0.0)
        return CodeRecord(**{**c.__dict__, "strict": {"verdict": "wrong answer", "cases": [
            {"verdict": "OK" if i < passed else "wrong answer"} for i in range(n)]}})
    codes = [wa("neocoder-1A", 1, 3), wa("neocoder-2B", 1, 3),
             code("neocoder-3C", 0, 0, [], "OK", "runtime error", [], True, 0.0)]
    for name, rows in {**TABLES, "codes": codes}.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r if isinstance(r, dict) else r.to_dict()) + "\n"
                                                        for r in rows))
    recs = Records(tmp_path, NeoCoderConfig(n_boot=50))
    v = reading.repo_only(recs)
    assert v == {"codes": 3, "verdicts": {"wrong answer": 2, "runtime error": 1}, "truncated": 0,
                 "cases": [(1, 3), (1, 3)]}
    md = reading.repo_only_md(recs)
    assert md.startswith(f"[3 code(s)]({C}&f.correct_repo=true&f.correct_strict=false) pass the "
                         "repo-compatible judge and fail the strict one: under the strict judge "
                         "2 wrong answer, 1 runtime error (the wrong answers pass 1 of 3 cases; 1 of 3 cases)")
    assert "none of them is a reply cut by the token limit" in md and dead_in(md, recs) == []


def test_creativity_columns(recs):
    c = report.creativity(recs)
    assert "different denominators" in c.attrs["caption"]
    assert c["problems"].tolist() == [2, 2, 1] and c["with human solutions"].tolist() == [2, 2, 1]
    assert c["following %"].tolist() == [100.0, 50.0, 100.0]
    assert c["convergent %"].tolist() == [100.0, 50.0, 0.0]
    assert c["divergent %"].tolist() == [0.0, 25.0, 100.0]
    assert c["NeoGauge %"].tolist() == [0.0, 25.0, 0.0]
    assert c["cumulative NeoGauge % (running sum: our definition)"].tolist() == [0.0, 25.0, 25.0]
    assert "static technique detector" in c.attrs["caption"]


def test_figures(recs):
    f = report.human_curves(recs)
    hconv, hdiv, gconv, gdiv = (list(t.y) for t in f.data)
    assert hconv[:3] == pytest.approx([100.0, 100 / 3, 50.0]) and all(math.isnan(x) for x in hconv[3:])
    assert hdiv == [100.0] * 6
    assert gconv[:3] == [100.0, 50.0, 0.0] and gdiv[:3] == [0.0, 25.0, 100.0]
    bars = {t.name: dict(zip(t.x, t.y)) for t in report.techniques(recs).data}
    assert bars["humans (stored GPT-4 labels)"] == pytest.approx({"while loop": 200 / 3, "for loop": 100 / 3})
    assert bars["GPT-4 state 1"]["while loop"] == 100.0 and bars["GPT-4 state 0"]["for loop"] == 50.0


def test_detector_check(recs):
    d = report.detector_check(recs)
    rows = d.to_dict("records")
    assert rows[0]["technique"] == "ALL" and rows[0]["known positives"] == 3
    assert rows[0][f"recall ({A})"] == 1.0 and rows[0][f"recall ({B})"] == 0.67
    assert rows[1]["technique"] == f"human lists, static names ({B})" and rows[1][f"recall ({B})"] == 0.5
    assert rows[1]["static-decidable"] == "precision 0.50"
    assert rows[2][f"recall ({A})"] == 1.0 and rows[2]["static-decidable"] == "precision 1.00"
    assert rows[3]["technique"].startswith("syntax-decidable") and rows[3]["known positives"] == 3
    assert rows[3][f"recall ({A})"] == 1.0 and rows[3][f"recall ({B})"] == 0.67
    assert [r["technique"] for r in rows[4:]] == ["for loop", "if statement", "while loop"]
    assert rows[5][f"recall ({B})"] == 0.0 and rows[5]["static-decidable"] is True


def test_example_and_live(recs):
    e = report.example(recs)
    assert e["round"].tolist() == [0, 1, 2] and e["new ban"].tolist() == ["", "for loop", "if statement"]
    assert e["strict verdict"].tolist() == ["OK", "OK", "wrong answer"] and e["per-case (strict)"][2] == "wr"
    assert e["code (first lines)"][1].startswith("def solve():") and e.attrs["caption"].endswith("neocoder-1A")
    live = report.live(recs)
    assert "model" not in live and live["round"].tolist() == [0, 1] and live["strict"].tolist() == ["not parsable"] * 2
    assert live.attrs["caption"] == "Live denial prompting with m1: one row per round"


def test_live_with_several_models(tmp_path):
    rows = [live_round("m1", 0, 0, None).to_dict(), live_round("m2", 0, 0, None).to_dict()]
    (tmp_path / "rounds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    live = report.live(Records(tmp_path, NeoCoderConfig(model="m1", models=("m2",))))
    assert live["model"].tolist() == ["m1", "m2"] and "m1, m2" in live.attrs["caption"]


def test_isolation_of_every_verdict(recs, tmp_path):
    df = report.isolation(recs)
    got = {(r["records"], r["judge"], r["isolation"]): r["verdicts"] for r in df.to_dict("records")}
    assert got == {("replayed codes", "repo", "fallback"): 6, ("replayed codes", "strict", "fallback"): 4,
                   ("replayed codes", "strict", "not run"): 2, ("live rounds", "repo", "fallback"): 2,
                   ("live rounds", "strict", "not run"): 2}
    jailed = {"verdict": "OK", "isolation": "bwrap", "memory_scope": "cgroup", "network_isolated": True}
    d = tmp_path / "jailed"
    d.mkdir()
    row = code("neocoder-1A", 0, 0, [], "OK", "OK", [], True, 0.0).to_dict()
    row["repo"], row["strict"] = jailed, {**jailed, "verdict": "time limit", "load_dependent": True}
    (d / "codes.jsonl").write_text(json.dumps(row) + "\n")
    (d / "rounds.jsonl").write_text("")
    df = report.isolation(Records(d, NeoCoderConfig(n_boot=50, neocoder_problems=0)))
    assert df.to_dict("records") == [
        {"records": "replayed codes", "judge": "repo", "isolation": "bwrap", "memory limit": "cgroup",
         "network isolated": True, "verdicts": 1, "load-dependent timeouts": 0},
        {"records": "replayed codes", "judge": "strict", "isolation": "bwrap", "memory limit": "cgroup",
         "network isolated": True, "verdicts": 1, "load-dependent timeouts": 1}]


def test_the_sentences_values_come_from_the_records(recs):
    v = reading.pass_values(recs)
    assert v["repo"] == {0: "1/2", 1: "0/2", 2: "0/1"} and v["strict"] == {0: "2/2", 1: "1/2", 2: "0/1"}
    assert v["more"] == 2 and v["first"] == 0 and v["last"] == 2 and v["paper"] and not v["equal_to_paper"]
    assert v["strict_first"] == "100.0%" and v["repo_last"] == "0.0%" and v["table1_equal"] is False
    assert (v["n_first"], v["n_last"]) == (2, 1)     # each state over its own problems
    assert v["ratio_later"] == ""         # no state >= 3 here
    assert reading.per_state({3: "2.9x", 4: "6.3x", 5: "5.5x"}) == "2.9x, 6.3x and 5.5x at states 3-5"
    assert reading.unverifiable(recs) == {"problems": 3, "unverifiable": 1, "share": "33.3%"}
    f = reading.fig2_values(recs)
    # state 0: 1A for loop, 2B while loop; states 1-2: 1A (while, recursion), 2B (while), 1A (recursion)
    assert f["for loop"] == {"state0": "50.0%", "later": "0.0%", "max": "50.0%", "rises": False}
    assert f["while loop"]["later"] == "0.0-100.0%" and f["recursion"]["max"] == "100.0%" and f["recursion"]["rises"]
    md = reading.pass_md(recs)        # the chapter's sentences, from those values
    assert "repo-compatible judge does not give the paper's counts" in md and "2 more programs" in md
    assert (f"([2]({C}&f.state=0) at state 0, [1]({C}&f.state=2) at state 2) the strict judge's pass@1 goes "
            "from 100.0% to 0.0%, against 50.0% to 0.0%") in md
    assert f"It passes [1/2]({C}&f.state=0), [0/2]({C}&f.state=1) and [0/1]({C}&f.state=2) at states 0-2" in md
    # the paired reading: only 1A has a code at states 0 and 2; both judges lose it
    d = reading.decline_values(recs)
    assert (d["problems"], d["n_first"], d["n_last"]) == (1, 2, 1)
    assert (d["strict"]["lost"], d["strict"]["gained"], d["repo"]["lost"]) == (1, 0, 1)
    assert reading.decline_md(recs).startswith(f"Table 3 counts each state over its own problems ([2]({C}&f.state=0) "
                                               f"at state 0, [1]({C}&f.state=2) at state 2), so its two ends are "
                                               "different problem sets. On the 1 problems present at both states, "
                                               "the strict judge passes 100.0%")
    assert reading.fig2_md(recs).startswith(f"For loops go from 50.0% of [GPT-4's solutions at state 0]({C}&f.state=0)"
                                            " to 0.0%")
    r = "../browse/neocoder.html#t=rounds&f.model=m1"
    assert reading.live_md(recs) == (f"`m1` answered [2 rounds]({r}) on 1 problem(s): 0 passed the strict judge and "
                                     f"[2 followed]({r}&f.follows=true) the constraints.")
    every = [reading.pass_md(recs), reading.decline_md(recs), reading.fig2_md(recs), reading.live_md(recs),
             reading.repo_only_md(recs), *claims.what_this_shows(recs)["this build"]]
    assert dead_in("\n".join(every), recs) == []          # every link opens on rows the browser holds


def test_what_this_shows_reads_each_claim_off_the_records(recs):
    t = claims.what_this_shows(recs)
    assert t.attrs["caption"].startswith("What this shows")

    def row(prefix):
        return t[t["the paper's claim"].str.startswith(prefix)].iloc[0]
    # three problems, not the paper's 199: Table 1 and Table 3's exact counts differ; the tests of 1 of 3 cannot
    # verify a correct program
    assert row("Problems per state")["verdict"] == "contradicts the paper"
    assert row("GPT-4's pass@1 per state")["verdict"] == "contradicts the paper"
    unver = row("The released tests")
    assert unver["verdict"] == "contradicts the paper"
    assert unver["this build"].startswith('<a href="../browse/neocoder.html#t=problems&amp;f.verifiable=false">1 of 3 '
                                          'problems</a> (33.3%, Wilson 95% [6.1, 79.2])')
    # the decline, one row per judge, on the one problem present at both ends: too few to test
    decline = t[t["the paper's claim"].str.startswith("pass@1 falls")]
    assert len(decline) == 2 and set(decline["verdict"]) == {"not testable here"}
    assert decline["why"].str.startswith("1 problem(s), fewer than the 30").all()
    # Fig. 5 is judged with one instrument (our detector on both sides), per problem: one problem is too few
    fig5 = row("Humans have far greater convergent")
    assert fig5["verdict"] == "not testable here"
    assert "static detector on GPT-4's codes and on the humans' Python solutions alike" in fig5["this build"]
    live = row("Live")
    assert live["verdict"] == "not testable here"
    assert 'm1: 0 of <a href="../browse/neocoder.html#t=rounds&amp;f.model=m1">2 rounds</a> pass the strict' in \
        live["this build"]
    assert set(t["verdict"]) <= {"supports the paper", "contradicts the paper", "inconclusive here",
                                 "not testable here"}


def test_fig5_gaps_read_both_sides_with_the_static_detector(recs):
    from creval.studies.neocoder import instrument
    # 1A's human Python solutions, by the static detector: [for loop], [while loop]; 2B has none (left out)
    assert instrument.human_static(recs) == {"neocoder-1A": [["for loop"], ["while loop"]]}
    g0, g1 = instrument.gaps(recs, 0), instrument.gaps(recs, 1)
    # state 0: both human solutions avoid the empty ban (1.0), GPT-4 follows and passes (1): gap 0
    # state 1 (for loop banned): one human solution of two avoids it (0.5), GPT-4 follows and passes: -0.5
    assert (g0["convergent"]["value"], g0["convergent"]["n"]) == (0.0, 1) and g1["convergent"]["value"] == -0.5
    # divergent: GPT-4's [for loop] is known to the humans (0), each human solution is new to the other (1): -1;
    # at state 1 GPT-4's [while loop, recursion] is half new: 0.5 - 1
    assert g0["divergent"]["value"] == -1.0 and g1["divergent"]["value"] == -0.5


def paired_records(tmp_path, strict, repo, n=97):
    """``n`` problems with a code at state 0 and at state 5: ``strict``/``repo`` give, per judge, how many pass at
    both states, only at 0, only at 5 (the rest pass at neither)."""
    def outcomes(both, lost, gained):
        return [(True, True)] * both + [(True, False)] * lost + [(False, True)] * gained + [(False, False)] * (
            n - both - lost - gained)
    tmp_path.mkdir(parents=True, exist_ok=True)
    problems, codes = [], []
    for i, ((s0, s5), (r0, r5)) in enumerate(zip(outcomes(*strict), outcomes(*repo))):
        pid = f"neocoder-{i}A"
        problems.append(problem(pid, True, [0, 1, 2, 3, 4, 5], [[]] * 6, [["for loop"]]))
        for state, st, rp in ((0, s0, r0), (5, s5, r5)):
            codes.append(code(pid, state, state, [], "OK" if rp else "wrong answer", "OK" if st else "wrong answer",
                              ["for loop"], True, 0.0))
    for name, rows in {**TABLES, "problems": problems, "codes": codes}.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r if isinstance(r, dict) else r.to_dict()) + "\n"
                                                        for r in rows))
    return Records(tmp_path, NeoCoderConfig(n_boot=200, neocoder_problems=0))


def test_the_decline_is_tested_on_the_same_problems_under_both_judges(tmp_path):
    # the reviewer's case: strict 25 -> 11 of 97 (17 lost, 3 gained); repo 32 -> 2 (30 lost, 0 gained)
    recs = paired_records(tmp_path, strict=(8, 17, 3), repo=(2, 30, 0))
    d = reading.decline_values(recs)
    s, r = d["strict"], d["repo"]
    assert (d["problems"], d["first"], d["last"]) == (97, 0, 5)
    assert (s["k_x"], s["k_y"], s["lost"], s["gained"]) == (25, 11, 17, 3) and s["p"] == pytest.approx(0.0025768,
                                                                                                         abs=1e-7)
    assert (r["k_x"], r["k_y"]) == (32, 2) and r["drop"] == pytest.approx(30 / 97)
    # per problem, strict drop minus repo drop: (17 - 3 - 30) / 97 points
    assert d["between"]["diff"] == pytest.approx(-16 / 97) and d["between"]["hi"] < 0
    md = reading.decline_md(recs)
    assert "On the 97 problems present at both states, the strict judge passes 25.8% [18.1, 35.3] at state 0 and " \
           "11.3% [6.5, 19.2] at state 5 (17 lost, 3 gained): a drop of 14.4 [5.8, 23.3] points (exact McNemar p = " \
           "0.0026); it keeps 44% of its state-0 rate" in md
    assert "The two drops differ by -16.5" in md and "does not explain" not in md
    assert "(30 lost, 0 gained): a drop of 30.9 [" in md and "(exact McNemar p < 0.0001)" in md
    t = claims.what_this_shows(recs)
    decline = t[t["the paper's claim"].str.startswith("pass@1 falls")]
    assert decline["verdict"].tolist() == ["supports the paper", "supports the paper"]
    assert decline["the paper's claim"].str.endswith(("under the repo-compatible judge.",
                                                      "under the strict judge.")).all()
    # the same drop in points under both judges: the sentence says the harness does not explain the decline
    same = reading.decline_md(paired_records(tmp_path / "same", strict=(8, 17, 3), repo=(8, 17, 3)))
    assert "The two drops differ by 0.0 [0.0, 0.0] points" in same and "does not explain the decline" in same


def test_a_drop_whose_interval_holds_zero_is_inconclusive(tmp_path):
    recs = paired_records(tmp_path, strict=(10, 3, 2), repo=(10, 3, 2), n=60)
    t = claims.what_this_shows(recs)
    decline = t[t["the paper's claim"].str.startswith("pass@1 falls")]
    assert set(decline["verdict"]) == {"inconclusive here"}
    assert decline["why"].str.contains("smallest effect this test could detect").all()
