"""Judges of correctness for NeoCoder programs; both run every program in :mod:`creval.sandbox`.

- ``strict``: the AST-cleaned whole program (:func:`~creval.measures.neocoder_extract.strict_program`) runs as a
  real program on the real test file, as a Codeforces judge does: for a multi-test problem once, on the case
  count followed by every case (per-case detail comes from its output lines taken in order); for a single-test
  problem once per case. Output lines are compared after trimming trailing spaces
  and trailing blank lines (``comparator="lines"``; ``"tokens"`` compares whitespace-separated tokens);
  YES/NO case-insensitively on yes/no problems. Problems whose tests cannot verify a program
  (``flags.verifiable`` false) still get a verdict; report them apart.
- ``repo``: the NeoCoder repo's harness reproduced inside the sandbox on the repo's extraction
  (:func:`~creval.measures.neocoder_extract.repo_extract`): module-level exec, mocked ``input`` over all cases
  behind a count line, prefix comparison with ``zip``, a per-case retry when anything raises, a 6 s limit for
  the whole problem. It reproduces the paper's Table 3 pass@1 row; its verdicts are not a correctness measure.

Verdicts: ``OK``, ``wrong answer``, ``runtime error``, ``time limit``, ``memory limit``, ``output limit``,
``not parsable`` (plus ``sandbox error`` if the sandbox itself failed), with per-case detail.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from creval.datasets.neocoder import Problem
from creval.measures.neocoder_extract import repo_extract, strict_program
from creval.sandbox import Limits, program_unit, repo_unit, run_units

OK, WA, RE, TLE, MLE, OLE, NP, SBX = ("OK", "wrong answer", "runtime error", "time limit", "memory limit",
                                      "output limit", "not parsable", "sandbox error")
VERDICTS = (OK, WA, RE, TLE, MLE, OLE, NP, SBX)
JUDGES = ("repo", "strict")
JUDGE_VERSION = 3          # bump when a judge's semantics change (part of the replay run's identity)
STRICT_LIMITS = Limits()
REPO_LIMITS = Limits(wall_s=6.0, cpu_s=6.0)       # the repo joins its thread after 6 s


@dataclass(frozen=True)
class CaseVerdict:
    verdict: str
    stdout: str = ""
    stderr_tail: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Verdict:
    judge: str
    verdict: str
    correct: bool
    cases: tuple[CaseVerdict, ...] = ()
    detail: str = ""
    network_isolated: bool = True

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cases"] = [c.to_dict() for c in self.cases]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        return cls(d["judge"], d["verdict"], d["correct"], tuple(CaseVerdict(**c) for c in d.get("cases", ())),
                   d.get("detail", ""), d.get("network_isolated", True))


def _norm_lines(text: str, fold: bool) -> list[str]:
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
    return _norm_lines(got, yes_no) == _norm_lines(exp, yes_no)


def _run_verdict(c: dict) -> str | None:
    """The verdict a run earns by how it ended (None: it ended normally, so its output decides)."""
    if c.get("skipped"):
        return "skipped"
    err = c.get("stderr_tail", "")
    if c.get("timed_out") or c.get("signal") == 24:                 # 24 = SIGXCPU
        return TLE
    if c.get("rc") == 75 or "MemoryError" in err:
        return MLE
    if c.get("signal") == 25 or c.get("stdout_truncated"):        # 25 = SIGXFSZ
        return OLE
    if c.get("rc") != 0 or c.get("signal"):
        return RE
    return None


def _case_verdict(c: dict, expected, yes_no: bool, comparator: str) -> CaseVerdict:
    v = _run_verdict(c) or (OK if same_output(c.get("stdout", ""), expected, yes_no, comparator) else WA)
    return CaseVerdict(v, c.get("stdout", "")[:2000], c.get("stderr_tail", "")[-1000:], c.get("wall_s", 0.0),
                       c.get("cpu_s", 0.0), c.get("max_rss_kb", 0))


def _split_verdicts(run: dict, problem: Problem, comparator: str) -> tuple[str, list[CaseVerdict]]:
    """One run over the whole test file: the run's verdict, and per-case detail from the output lines taken in
    order (each case owns as many lines as its expected answer)."""
    fold = problem.flags.yes_no
    base = _run_verdict(run)
    lines = _norm_lines(run.get("stdout", ""), False)
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


def _overall(cases: list[CaseVerdict]) -> str:
    for c in cases:
        if c.verdict not in (OK, "skipped"):
            return c.verdict
    return OK


def strict_units(problem: Problem, code: str, limits: Limits = STRICT_LIMITS, group: str = "",
                 salvage: bool = True) -> dict | None:
    prog = strict_program(code, salvage=salvage)
    if prog is None:
        return None
    return program_unit(prog, test_stdins(problem), limits, group=group or code)


def test_stdins(problem: Problem) -> list[str]:
    """The real stdin(s) of a problem's tests: for a multi-test problem ONE file, the case count then every
    case (as a Codeforces judge feeds it); for a single-test problem one file per case."""
    if problem.flags.single_test:
        return [c.stdin(with_count=False) for c in problem.cases]
    return [f"{len(problem.cases)}\n" + "".join(c.stdin(with_count=False) for c in problem.cases)]


def repo_units(problem: Problem, code: str, limits: Limits = REPO_LIMITS, group: str = "") -> dict | None:
    ext = repo_extract(code)
    if ext is None:
        return None
    return repo_unit(ext, [[list(l) for l in c.lines] for c in problem.cases],
                     [c.expected_raw for c in problem.cases], limits, group=group or code)


def _strict_verdict(problem: Problem, res: dict | None, comparator: str) -> Verdict:
    if res is None:
        return Verdict("strict", NP, False, detail="the code is not valid Python")
    iso = res.get("env", {}).get("network_isolated", False)
    if res.get("sandbox_error"):
        return Verdict("strict", SBX, False, detail=res["sandbox_error"], network_isolated=iso)
    if res.get("not_parsable"):
        return Verdict("strict", NP, False, detail=res["not_parsable"], network_isolated=iso)
    if problem.flags.single_test:
        cases = [_case_verdict(c, pc.expected, problem.flags.yes_no, comparator)
                 for c, pc in zip(res["cases"], problem.cases)]
        v = _overall(cases)
    else:
        v, cases = _split_verdicts(res["cases"][0], problem, comparator)
    return Verdict("strict", v, v == OK, tuple(cases), network_isolated=iso)


def _repo_verdict(problem: Problem, res: dict | None) -> Verdict:
    if res is None:
        return Verdict("repo", NP, False, detail="the repo's extraction found no function (code not parsable)")
    iso = res.get("env", {}).get("network_isolated", False)
    if res.get("sandbox_error") or not res.get("cases"):
        return Verdict("repo", SBX, False, detail=res.get("sandbox_error", "no result"), network_isolated=iso)
    c = res["cases"][0]
    h = c.get("harness")
    if c.get("timed_out"):
        return Verdict("repo", TLE, False, detail="code execution timeout (6 s for the whole problem)",
                       network_isolated=iso)
    if not h or h.get("stage") == "exec" or h.get("stage") == "batch" and h.get("try") is None:
        err = c.get("stderr_tail", "")
        v = MLE if "MemoryError" in err else RE
        return Verdict("repo", v, False, detail=f"the harness died: {err[-300:]}", network_isolated=iso)
    if h.get("stage") == "not executable":
        return Verdict("repo", RE, False, detail=f"code not executable ({h.get('error')})", network_isolated=iso)
    flags = h.get("per_case") or []
    outs = h.get("outputs") or []
    cases = tuple(CaseVerdict(OK if f else WA, str(o)[:2000] if o is not None else "") for f, o in
                  zip(flags, outs if h.get("try") == "per_case" else [None] * len(flags)))
    ok = all(flags)
    return Verdict("repo", OK if ok else WA, ok, cases, detail=f"{h.get('try')} try; "
                   f"{len(flags)} of {len(problem.cases)} cases compared", network_isolated=iso)


def judge_codes(items: list[tuple[Problem, str]], judges=JUDGES, comparator: str = "lines",
                progress: bool = False, workers: int | None = None, pack: str = "problem",
                salvage: bool = True) -> list[dict[str, Verdict]]:
    """``{judge: Verdict}`` for each (problem, code); every execution goes through the cached sandbox.

    ``pack``: which programs share one sandbox launch (each still runs in its own forked process, with the
    launch's leftovers killed and its folder emptied in between): ``"program"`` (both judges of one code),
    ``"problem"`` (every code of a problem; fewer interpreter starts) or ``"none"``."""
    units, where = [], []
    for i, (p, code) in enumerate(items):
        for j in judges:
            g = {"problem": p.problem_id, "program": code, "none": f"{i}:{j}"}[pack]
            u = (strict_units(p, code, group=g, salvage=salvage) if j == "strict" else repo_units(p, code, group=g))
            where.append((i, j, u is not None))
            if u is not None:
                units.append(u)
    results = iter(run_units(units, workers=workers, progress=progress))
    out: list[dict[str, Verdict]] = [{} for _ in items]
    for i, j, has in where:
        res = next(results) if has else None
        p = items[i][0]
        out[i][j] = _strict_verdict(p, res, comparator) if j == "strict" else _repo_verdict(p, res)
    return out
