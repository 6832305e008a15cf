"""NeoCoder's strict judge: the AST-cleaned whole program (:func:`~creval.measures.neocoder_extract.strict_program`)
runs as a real program on the real test file, as a Codeforces judge does: for a multi-test problem once, on the
case count followed by every case (per-case detail comes from its output lines taken in order); for a
single-test problem once per case. Output lines are compared after trimming trailing spaces and trailing blank
lines (``comparator="lines"``; ``"tokens"`` compares whitespace-separated tokens); YES/NO case-insensitively on
yes/no problems."""
from __future__ import annotations

from dataclasses import replace

from creval.datasets.neocoder import Problem
from creval.measures.neocoder.verdicts import JE, NP, OK, SBX, WA, CaseVerdict, Verdict, run_verdict, sandbox_env
from creval.measures.neocoder_extract import strict_program
from creval.sandbox import Limits, program_unit

STRICT_LIMITS = Limits()


def norm_lines(text: str, fold: bool) -> list[str]:
    """Lines with trailing spaces and trailing blank lines removed (case-folded when ``fold``)."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return [ln.casefold() for ln in lines] if fold else lines


def same_output(got: str, expected: tuple[str, ...] | list[str], yes_no: bool = False,
                comparator: str = "lines") -> bool:
    """Does ``got`` (a program's stdout) answer ``expected`` (one string per line)?"""
    exp = "\n".join(expected)
    if comparator == "tokens":
        a, b = got.split(), exp.split()
        return [x.casefold() for x in a] == [x.casefold() for x in b] if yes_no else a == b
    return norm_lines(got, yes_no) == norm_lines(exp, yes_no)


def case_verdict(c: dict, expected, yes_no: bool, comparator: str) -> CaseVerdict:
    """The verdict of one sandbox run against one case's expected lines."""
    v = run_verdict(c) or (OK if same_output(c.get("stdout", ""), expected, yes_no, comparator) else WA)
    return CaseVerdict(v, c.get("stdout", "")[:2000], c.get("stderr_tail", "")[-1000:], c.get("wall_s", 0.0),
                       c.get("cpu_s", 0.0), c.get("max_rss_kb", 0))


def split_verdicts(run: dict, problem: Problem, comparator: str) -> tuple[str, list[CaseVerdict]]:
    """One run over the whole test file: the run's verdict, and per-case detail from the output lines taken in
    order (each case owns as many lines as its expected answer)."""
    fold = problem.flags.yes_no
    base = run_verdict(run)
    lines = norm_lines(run.get("stdout", ""), False)
    cases, pos = [], 0
    for pc in problem.cases:
        k = len(pc.expected)
        got = "\n".join(lines[pos:pos + k])
        pos += k
        ok = same_output(got, pc.expected, fold, "lines")
        cases.append(CaseVerdict(OK if ok else (base or WA), got[:2000]))
    if base:
        return base, [replace(cases[0], stderr_tail=run.get("stderr_tail", "")[-1000:],
                              wall_s=run.get("wall_s", 0.0), cpu_s=run.get("cpu_s", 0.0),
                              max_rss_kb=run.get("max_rss_kb", 0))] + cases[1:]
    whole = same_output(run.get("stdout", ""), [e for pc in problem.cases for e in pc.expected], fold, comparator)
    cases[0] = replace(cases[0], wall_s=run.get("wall_s", 0.0), cpu_s=run.get("cpu_s", 0.0),
                       max_rss_kb=run.get("max_rss_kb", 0))
    return (OK if whole else WA), cases


def overall(cases: list[CaseVerdict]) -> str:
    """The first case verdict that is neither OK nor skipped, else OK (a case is skipped only after a failure:
    a skipped case first is a ``judge error``; so is an empty list)."""
    for c in cases:
        if c.verdict == "skipped":
            return JE
        if c.verdict != OK:
            return c.verdict
    return OK if cases else JE


def test_stdins(problem: Problem) -> list[str]:
    """The real stdin(s) of a problem's tests: for a multi-test problem ONE file, the case count then every
    case (as a Codeforces judge feeds it); for a single-test problem one file per case."""
    if problem.flags.single_test:
        return [c.stdin(with_count=False) for c in problem.cases]
    return [f"{len(problem.cases)}\n" + "".join(c.stdin(with_count=False) for c in problem.cases)]



def strict_units(problem: Problem, code: str, limits: Limits = STRICT_LIMITS, group: str = "",
                 salvage: bool = True) -> dict | None:
    """The sandbox unit of the strict judge (None when the code is not valid Python)."""
    prog = strict_program(code, salvage=salvage)
    if prog is None:
        return None
    return program_unit(prog, test_stdins(problem), limits, group=group or code)


def strict_verdict(problem: Problem, res: dict | None, comparator: str) -> Verdict:
    """The strict judge's verdict of a sandbox result (None: the code is not valid Python)."""
    if res is None:
        return Verdict("strict", NP, False, detail="the code is not valid Python", isolation="not run",
                       memory_scope="-")
    iso = sandbox_env(res)
    if res.get("sandbox_error"):
        return Verdict("strict", SBX, False, detail=res["sandbox_error"], **iso)
    if res.get("not_parsable"):
        return Verdict("strict", NP, False, detail=res["not_parsable"], **iso)
    want = len(problem.cases) if problem.flags.single_test else 1
    if len(res.get("cases") or ()) != want:
        return Verdict("strict", JE, False, detail=f"{len(res.get('cases') or ())} runs for {want} test file(s)",
                       **iso)
    if problem.flags.single_test:
        cases = [case_verdict(c, pc.expected, problem.flags.yes_no, comparator)
                 for c, pc in zip(res["cases"], problem.cases)]
        v = overall(cases)
    else:
        v, cases = split_verdicts(res["cases"][0], problem, comparator)
    return Verdict("strict", v, v == OK, tuple(cases), **iso)
