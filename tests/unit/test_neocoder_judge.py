"""Both correctness judges on the bundled sample problems (real sandbox, private cache)."""
import os

import pytest

os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")   # where no jail runs, the suite opts in (records say so)

from creval.datasets import neocoder as neocoder_data
from creval.measures.neocoder import judges as nc


@pytest.fixture
def problems(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    ps, _ = neocoder_data.load()
    return {p.native: p for p in ps}


EVEN_BLANK = """def solve():
    t = int(input())
    for _ in range(t):
        input()
        a = list(map(int, input().split()))

        print(sum(x for x in a if x % 2 == 0))
"""
EVEN_FIRST_ONLY = """def solve():
    t = int(input())
    input()
    a = list(map(int, input().split()))
    print(sum(x for x in a if x % 2 == 0))
"""
WORDS = """def solve():
    print(" ".join(input().split()[::-1]))
"""
DIV_LOWER = """def solve():
    for _ in range(int(input())):
        a, b = map(int, input().split())
        print("yes" if a % b == 0 else "no")
"""


def test_blank_line_truncation(problems):
    v = nc.judge_codes([(problems["S1A"], EVEN_BLANK)])[0]
    assert v["strict"].verdict == nc.OK and v["strict"].correct
    assert not v["repo"].correct                          # the repo cut solve() at the blank line
    assert [c.verdict for c in v["strict"].cases] == [nc.OK] * 4 and v["strict"].cases[1].stdout == "0"


def test_prefix_comparison_passes_a_partial_answer(problems):
    v = nc.judge_codes([(problems["S1A"], EVEN_FIRST_ONLY)])[0]
    assert v["repo"].correct                              # zip() compares one line of four
    assert not v["strict"].correct


def test_single_test_problem_gets_a_count_line_in_the_repo_harness(problems):
    v = nc.judge_codes([(problems["S3A"], WORDS)])[0]
    assert v["strict"].correct and not v["repo"].correct


def test_yes_no_case_insensitive_only_in_strict(problems):
    v = nc.judge_codes([(problems["S2A"], DIV_LOWER)])[0]
    assert v["strict"].correct and not v["repo"].correct


def test_not_parsable_and_runtime_error(problems):
    v = nc.judge_codes([(problems["S1A"], "def solve(:\n"), (problems["S1A"], "def solve():\n    1/0\n")])
    assert v[0]["strict"].verdict == nc.NP and v[0]["repo"].verdict != nc.OK
    assert v[1]["strict"].verdict == nc.RE and "ZeroDivisionError" in v[1]["strict"].cases[0].stderr_tail


def test_time_limit_verdict_and_skipped_cases(problems):
    v = nc.judge_codes([(problems["S3A"], "def solve():\n    while True:\n        pass\n")],
                       judges=("strict",))[0]["strict"]
    assert v.verdict == nc.TLE and [c.verdict for c in v.cases][1:] == ["skipped"] * 2


def test_same_output():
    assert nc.same_output("1 \n2\n\n", ("1", "2"))
    assert not nc.same_output("1\n", ("1", "2"))
    assert nc.same_output("yes\nNo\n", ("YES", "NO"), yes_no=True)
    assert not nc.same_output("yes\n", ("YES",))
    assert nc.same_output("1  2\n3", ("1 2 3",), comparator="tokens")


def test_human_solution_check_on_the_sample(problems):
    rows = {r["problem_id"]: r for r in nc.human_pass_rates(list(problems.values()))}
    assert rows["neocoder-S1A"]["python solutions"] == 2       # the C++ submission is skipped
    assert rows["neocoder-S1A"]["passed"] == 2 and not rows["neocoder-S1A"]["suspect"]
    assert rows["neocoder-S2A"]["passed"] == 2 and rows["neocoder-S3A"]["passed"] == 2


MODULE_PRINT = """def helper(x):
    return x
print("module level output")
def solve():
    t = int(input())
    for _ in range(t):
        input()
        a = list(map(int, input().split()))
        print(sum(x for x in a if x % 2 == 0))
"""


def test_the_repo_harness_reaches_the_sandbox_as_a_program(problems):
    from creval.sandbox import run_units
    u = nc.repo_units(problems["S1A"], MODULE_PRINT)
    assert u["mode"] == "program" and u["stdins"] == [""] and u["code"].startswith("def repo_harness(")
    compile(u["code"], "harness", "exec")                      # the harness's source, the code and tests as literals
    res = run_units([u])[0]["cases"][0]
    report = nc.harness_report(res)                            # the module-level print did not reach the report
    assert report["try"] == "batch" and "module level" not in res["stdout"]
    expected = [c.expected_raw for c in problems["S1A"].cases]
    assert all(nc.repo_flags(report, expected)) and len(nc.repo_flags(report, expected)) == len(expected)
    kinds = [isinstance(e, list) for e in expected]            # the answers never enter the sandbox: only their kinds
    assert u["code"].rstrip().endswith(f", {kinds!r})")
    assert nc.judge_codes([(problems["S1A"], MODULE_PRINT)])[0]["repo"].correct
    assert nc.harness_report({"stdout": ""}) is None and nc.harness_report({"stdout": "[1]"}) is None
