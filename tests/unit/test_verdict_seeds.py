"""benchmarks/verdict_seeds.py's flip detection, on synthetic verdicts (issue 40)."""
import importlib.util

import pandas as pd

from creval.core.paths import REPO
from creval.measures.stats.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, TESTABLE, Verdict
from creval.studies.claims import claims_md

_spec = importlib.util.spec_from_file_location("verdict_seeds", REPO / "benchmarks" / "verdict_seeds.py")
VS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(VS)


def test_printed_verdicts_are_read_from_bullets_and_verdict_columns():
    md = claims_md([(Verdict(SUPPORTS, "0.3 [0.1, 0.5]", borderline=True), "Claim one.", "Here 0.3."),
                    (Verdict(TESTABLE, "3 items"), "Claim two.", ""), ("checked", "An identity.", "")])
    got = VS.read_verdicts("md", md)
    assert got == {("md", 0): (SUPPORTS, True, "Claim one. Here 0.3."), ("md", 1): (TESTABLE, False, "Claim two.")}
    df = pd.DataFrame({"claim": ["a", "b"], "verdict": [Verdict(CONTRADICTS, "x"), "OK"]})
    assert VS.read_verdicts("t", df) == {("t", "verdict", 0): (CONTRADICTS, False, "a")}
    assert VS.parse_label("inconclusive here, borderline (why (nested))") == (INCONCLUSIVE, True)


def test_a_flip_counts_as_marked_only_when_every_seed_marks_it():
    per_seed = {s: {"stable": (SUPPORTS, s == 3, ""),                                  # same word: no flip
                    "marked": (SUPPORTS if s % 2 else INCONCLUSIVE, True, "m"),         # flips, always marked
                    "half": (SUPPORTS if s < 5 else INCONCLUSIVE, s < 5, "h")}          # flips, marked by 5 of 10
                for s in range(10)}
    per_seed[7]["gone"] = (CONTRADICTS, True, "g")                                      # printed under one seed only
    got = {f["key"]: f for f in VS.flips(per_seed)}
    assert set(got) == {"marked", "half", "gone"}
    assert got["marked"]["ok"] and got["marked"]["marked"] == 10
    assert not got["half"]["ok"] and got["half"]["marked"] == 5
    assert got["half"]["words"][0] == SUPPORTS and got["half"]["words"][9] == INCONCLUSIVE
    assert not got["gone"]["ok"] and got["gone"]["words"][0] == "(absent)"
    assert VS.seeds_arg("0-9") == list(range(10)) and VS.seeds_arg("1,4") == [1, 4]


def test_a_judge_against_baseline_word_is_read_with_its_mark_from_every_module_the_chapter_calls():
    df = pd.DataFrame({"judge": ["j", "k", "l"], "verdict": ["better, borderline", "indistinguishable", "n/a"]})
    assert VS.read_verdicts("07", df) == {("07", "verdict", 0): ("better", True, "j"),
                                          ("07", "verdict", 1): ("indistinguishable", False, "k")}
    from creval.studies.registry import get_study
    calls = VS.chapter_calls(get_study("aut"))
    assert ("human", "table_vs_baselines") in calls and ("reading", "what_this_shows") in calls
    assert all(m in ("report", "reading", "human", "figures") for m, _ in calls)      # figures: its sentences
