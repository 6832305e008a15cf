"""The correctness judges of NeoCoder programs; both run every program in :mod:`creval.sandbox`.

- ``strict``: the AST-cleaned whole program (:func:`~creval.measures.neocoder_extract.strict_program`) runs as a
  real program on the real test file, as a Codeforces judge does: for a multi-test problem once, on the case
  count followed by every case (per-case detail comes from its output lines taken in order); for a single-test
  problem once per case. Output lines are compared after trimming trailing spaces
  and trailing blank lines (``comparator="lines"``; ``"tokens"`` compares whitespace-separated tokens);
  YES/NO case-insensitively on yes/no problems. Problems whose tests cannot verify a program
  (``flags.verifiable`` false) still get a verdict; report them apart.
- ``repo``: the NeoCoder repo's harness (:func:`repo_harness`) on the repo's extraction
  (:func:`~creval.measures.neocoder_extract.repo_extract`): module-level exec, mocked ``input`` over all cases
  behind a count line, prefix comparison with ``zip``, a per-case retry when anything raises, a 6 s limit for
  the whole problem. The harness reaches the sandbox as an ordinary program (:func:`harness_program`: the
  harness's source with the code and the tests as literals), which prints its report as JSON. It reproduces
  the paper's Table 3 pass@1 row; its verdicts are not a correctness measure.

Verdicts: ``OK``, ``wrong answer``, ``runtime error``, ``time limit``, ``memory limit``, ``output limit``,
``not parsable`` (plus ``sandbox error`` if the sandbox itself failed, and ``judge error`` when what came back
cannot be a genuine record: a harness report without one output per compared case, a run count that is not the
number of tests, a skipped case with no failure before it), with per-case detail. Never OK from a record the
host cannot account for.
:func:`human_pass_rates` runs the human solutions through the strict judge (the check behind
``datasets.neocoder.UNVERIFIABLE``).
"""
from __future__ import annotations

import inspect
import json
import textwrap
from dataclasses import asdict, dataclass, replace

from creval.datasets.neocoder import Problem
from creval.measures.neocoder_extract import parse, repo_extract, strict_program
from creval.sandbox import Limits, program_unit, run_units

OK, WA, RE, TLE, MLE, OLE, NP, SBX, JE = ("OK", "wrong answer", "runtime error", "time limit", "memory limit",
                                          "output limit", "not parsable", "sandbox error", "judge error")
VERDICTS = (OK, WA, RE, TLE, MLE, OLE, NP, SBX, JE)
JUDGES = ("repo", "strict")
JUDGE_VERSION = 6          # bump when a judge's semantics change (part of the study's run identity); 6: a jail
                           # per run (sandbox runner 6), a harness report must hold one output per compared case
STRICT_LIMITS = Limits()
# the repo joins its thread after 6 s; the harness's report is its stdout (kept whole up to 1 MiB)
REPO_LIMITS = Limits(wall_s=6.0, cpu_s=6.0, capture_bytes=1 << 20)


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
    isolation: str = "fallback"          # the sandbox's: "bwrap" (jail) or "fallback" (unshare runner)
    memory_scope: str = "per-process"    # "cgroup": one memory limit for the whole program tree
    load_dependent: bool = False         # a wall-clock timeout under the CPU limit, twice (not cached)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cases"] = [c.to_dict() for c in self.cases]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        return cls(d["judge"], d["verdict"], d["correct"], tuple(CaseVerdict(**c) for c in d.get("cases", ())),
                   d.get("detail", ""), d.get("network_isolated", True),
                   d.get("isolation", "fallback"), d.get("memory_scope", "per-process"),
                   d.get("load_dependent", False))


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


def run_verdict(c: dict) -> str | None:
    """The verdict a sandbox run (one case of a unit's result) earns by how it ended (None: it ended
    normally, so its output decides)."""
    if c.get("skipped"):
        return "skipped"
    err = c.get("stderr_tail", "")
    if c.get("timed_out") or c.get("signal") == 24:                 # 24 = SIGXCPU
        return TLE
    if c.get("rc") == 75 or "MemoryError" in err or c.get("oom_killed"):
        return MLE
    if c.get("signal") == 25 or c.get("stdout_truncated"):        # 25 = SIGXFSZ
        return OLE
    if c.get("rc") != 0 or c.get("signal"):
        return RE
    return None


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


# ---------------------------------------------------------------------------------------------------
# the repo-compatible harness: its source runs in the sandbox as a program (see harness_program)

def repo_harness(code, cases, kinds):
    """Emulates JHU-CLSP/NeoCoder ``CodeForceCorrectnessEvaluator.test_correctness`` semantics: exec the code
    at module level in a namespace holding the names the evaluator module had; a zero-argument mocked input
    over a list of lines (exhaustion raises StopIteration); stdout swapped for a StringIO. First try: all cases
    at once behind a count line, output stripped and split on newlines, compared pairwise with zip (so a
    prefix passes). If anything raises: each case alone, output stripped, exceptions count as failure.
    The harness never sees the expected answers: it reports the outputs, and for a case whose expected value
    is a list (``kinds[i]`` true) the eval of the output mapped to strings (that eval runs here, in the
    sandbox; an eval that raises counts as the exception it was). The host compares after the run
    (:func:`repo_flags`).

    Runs INSIDE the sandbox as the whole program (self-contained: it imports only the standard library).
    The report goes, as JSON, to the program's real stdout, and only the report: what the code prints
    outside the swapped stdout goes to a scratch file in the working folder."""
    import builtins
    import collections
    import io
    import json as _json
    import logging as _logging
    import os
    import sys
    import typing

    sys.stdout.flush()
    report_fd = os.dup(1)
    scratch = os.open("harness-stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(scratch, 1)
    os.close(scratch)

    ns = {"__name__": "creval_repo_eval", "__builtins__": builtins, "defaultdict": collections.defaultdict,
          "Counter": collections.Counter, "json": _json, "logging": _logging}
    for nm in ("Text", "Dict", "Any", "List", "Optional", "Tuple", "Union"):
        ns[nm] = getattr(typing, nm)
    try:
        import numpy
        ns["np"] = numpy
    except Exception:
        pass
    report = {"stage": "exec", "try": None, "outputs": None, "evals": None}
    cap = 200000

    def clip(o):
        return o if len(o) <= cap else o[:cap] + "\0clipped"

    def save():
        data = _json.dumps(report).encode()
        while data:
            data = data[os.write(report_fd, data):]

    def convert(out, is_list):
        return list(map(clip, map(str, eval(out, {"__builtins__": builtins})))) if is_list else None

    real_input, real_stdout = builtins.input, sys.stdout
    try:
        exec(compile(code, "<solution>", "exec"), ns)
    except BaseException as e:
        report.update(stage="not executable", error=type(e).__name__)
        save()
        return
    solve = ns.get("solve")
    report["stage"] = "batch"

    def feed(lines):
        it = iter(lines)
        builtins.input = lambda: next(it)

    try:
        lines = [str(len(cases))] + [" ".join(row) for case in cases for row in case]
        feed(lines)
        buf = io.StringIO()
        sys.stdout = buf
        try:
            solve()
            output = buf.getvalue().strip().split("\n")
        finally:
            sys.stdout = real_stdout
            builtins.input = real_input
        evals = [convert(o, k) for o, k in zip(output, kinds)]
        report.update({"try": "batch", "outputs": [clip(o) for o in output[:len(kinds)]], "evals": evals})
        save()
        return
    except BaseException:
        sys.stdout = real_stdout
        builtins.input = real_input
    evals, outs = [], []
    for case, is_list in zip(cases, kinds):
        feed([" ".join(row) for row in case])
        buf = io.StringIO()
        sys.stdout = buf
        try:
            solve()
            o = buf.getvalue().strip()
            sys.stdout = real_stdout
            ev = convert(o, is_list)
            evals.append(ev)
            outs.append(clip(o))
        except BaseException:
            sys.stdout = real_stdout
            evals.append(None)
            outs.append(None)
        finally:
            builtins.input = real_input
    report.update({"try": "per_case", "outputs": outs, "evals": evals})
    save()


def harness_program(code: str, cases: list, kinds: list) -> str:
    """The program the sandbox runs for the repo-compatible judge: :func:`repo_harness`'s source, then one
    call of it on ``code`` (already repo-extracted), the tests' inputs and which expected values are lists, all
    as Python literals (never the expected values themselves). The harness's source
    is part of the program, so of every cached result's key: any edit of it reruns the repo judge."""
    return (textwrap.dedent(inspect.getsource(repo_harness)) +
            f"\n\nrepo_harness({code!r}, {cases!r}, {kinds!r})\n")


def repo_flags(h: dict, expected: list) -> list[bool]:
    """The host's comparison of a harness report with the expected values (zip semantics: a prefix passes)."""
    outs, evals = h.get("outputs") or [], h.get("evals") or []
    evals = evals + [None] * (len(outs) - len(evals))
    if h.get("try") == "per_case":
        return [o is not None and (ev == e if isinstance(e, list) else o == e)
                for o, ev, e in zip(outs, evals, expected)]
    return [(ev == e) if isinstance(e, list) else (o == e) for o, ev, e in zip(outs, evals, expected)]


def report_fault(h: dict, n_cases: int) -> str | None:
    """Why a harness report cannot be one the harness wrote for ``n_cases`` cases (None: it can). The genuine
    harness reports, in its batch try, the first lines of the output (at least one: ``"".split("\n")`` is
    ``[""]``; at most one per case; the repo's zip compares that prefix) and, in its per-case try, exactly one
    output (or None) per case; ``evals`` always beside them, one each. Anything else (an empty report printed
    by the program itself, a report with more outputs than cases) is a ``judge error``, never OK."""
    outs, evals, how = h.get("outputs"), h.get("evals"), h.get("try")
    if how not in ("batch", "per_case"):
        return f"unknown try {how!r}"
    if not isinstance(outs, list) or not isinstance(evals, list) or len(evals) != len(outs):
        return "outputs and evals are not two lists of one length"
    if how == "per_case" and len(outs) != n_cases:
        return f"{len(outs)} outputs for {n_cases} cases in the per-case try"
    if how == "batch" and not 1 <= len(outs) <= n_cases:
        return f"{len(outs)} outputs for {n_cases} cases in the batch try"
    if not all(o is None and how == "per_case" or isinstance(o, str) for o in outs):
        return "an output that is not a string"
    if not all(e is None or isinstance(e, list) and all(isinstance(x, str) for x in e) for e in evals):
        return "an eval that is not a list of strings"
    return None


def harness_report(case: dict) -> dict | None:
    """The harness's JSON report from one run's stdout (None when it died before reporting)."""
    try:
        got = json.loads(case.get("stdout") or "null")
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def repo_units(problem: Problem, code: str, limits: Limits = REPO_LIMITS, group: str = "") -> dict | None:
    """The sandbox unit of the repo-compatible judge (None when the repo's extraction finds no function)."""
    ext = repo_extract(code)
    if ext is None:
        return None
    prog = harness_program(ext, [[list(l) for l in c.lines] for c in problem.cases],
                           [isinstance(c.expected_raw, list) for c in problem.cases])
    return program_unit(prog, [""], limits, group=group or code)


# ---------------------------------------------------------------------------------------------------

def sandbox_env(res: dict) -> dict:
    """What isolation a sandbox result got (the Verdict fields that record it)."""
    env = res.get("env", {})
    return {"network_isolated": env.get("network_isolated", False), "isolation": env.get("isolation", "fallback"),
            "memory_scope": env.get("memory_scope", "per-process"), "load_dependent": bool(res.get("load_dependent"))}


def strict_verdict(problem: Problem, res: dict | None, comparator: str) -> Verdict:
    """The strict judge's verdict of a sandbox result (None: the code is not valid Python)."""
    if res is None:
        return Verdict("strict", NP, False, detail="the code is not valid Python", isolation="not run", memory_scope="-")
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


def repo_verdict(problem: Problem, res: dict | None) -> Verdict:
    """The repo-compatible judge's verdict of a sandbox result (None: the extraction found no function)."""
    if res is None:
        return Verdict("repo", NP, False, detail="the repo's extraction found no function (code not parsable)", isolation="not run", memory_scope="-")
    iso = sandbox_env(res)
    if res.get("sandbox_error") or not res.get("cases"):
        return Verdict("repo", SBX, False, detail=res.get("sandbox_error", "no result"), **iso)
    c = res["cases"][0]
    h = harness_report(c)
    if c.get("timed_out") or c.get("signal") == 24:      # wall clock or CPU limit (SIGXCPU), whichever first
        return Verdict("repo", TLE, False, detail="code execution timeout (6 s for the whole problem)",
                       **iso)
    if not h or h.get("stage") == "exec" or h.get("stage") == "batch" and h.get("try") is None:
        err = c.get("stderr_tail", "")
        v = MLE if "MemoryError" in err else RE
        return Verdict("repo", v, False, detail=f"the harness died: {err[-300:]}", **iso)
    if h.get("stage") == "not executable":
        return Verdict("repo", RE, False, detail=f"code not executable ({h.get('error')})", **iso)
    fault = report_fault(h, len(problem.cases))
    if fault:
        return Verdict("repo", JE, False, detail=f"malformed harness report: {fault}", **iso)
    flags = repo_flags(h, [pc.expected_raw for pc in problem.cases])
    outs = h.get("outputs") or []
    cases = tuple(CaseVerdict(OK if f else WA, str(o)[:2000] if o is not None else "") for f, o in
                  zip(flags, outs if h.get("try") == "per_case" else [None] * len(flags)))
    ok = bool(flags) and all(flags)          # zero cases compared is never OK
    return Verdict("repo", OK if ok else WA, ok, cases, detail=f"{h.get('try')} try; "
                   f"{len(flags)} of {len(problem.cases)} cases compared", **iso)


def judge_codes(items: list[tuple[Problem, str]], judges=JUDGES, comparator: str = "lines",
                progress: bool = False, workers: int | None = None, pack: str = "problem",
                salvage: bool = True) -> list[dict[str, Verdict]]:
    """``{judge: Verdict}`` for each (problem, code); every execution goes through the cached sandbox.

    ``pack``: which programs run one after another on one worker slot (every run is still a jail and a fresh
    interpreter of its own, so a program never sees another's code, stdin or output; the packing only orders
    the work): ``"program"`` (both judges of one code), ``"problem"`` (every code of a problem) or ``"none"``."""
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
        out[i][j] = strict_verdict(p, res, comparator) if j == "strict" else repo_verdict(p, res)
    return out


# ---------------------------------------------------------------------------------------------------
# the test-suite check behind ``datasets.neocoder.UNVERIFIABLE``

def human_pass_rates(problems, progress: bool = False, workers: int | None = None) -> list[dict]:
    """Run every distinct human Python 3 solution of ``problems`` through the strict judge's sandbox run (the
    whole program, real test file); one row per problem: solutions run, passed, verdict counts, the stored
    flags. Problems where at most one in five passes are the candidates for ``UNVERIFIABLE`` (cached: a rerun
    executes nothing)."""
    from collections import Counter

    units, owner = [], []
    for p in problems:
        for h in dict.fromkeys(p.human_solutions):
            try:
                parse(h)
            except (SyntaxError, ValueError):
                continue
            units.append(program_unit(h, test_stdins(p), Limits(), group=p.problem_id))
            owner.append(p)
    results = run_units(units, workers=workers, progress=progress)
    per: dict[str, Counter] = {}
    for p, r in zip(owner, results):
        if r.get("sandbox_error") or r.get("not_parsable"):
            v = NP
        elif p.flags.single_test:
            v = overall([case_verdict(c, pc.expected, p.flags.yes_no, "lines") for c, pc in zip(r["cases"], p.cases)])
        else:
            v = split_verdicts(r["cases"][0], p, "lines")[0]
        per.setdefault(p.problem_id, Counter())[v] += 1
    rows = []
    for p in problems:
        c = per.get(p.problem_id, Counter())
        n = sum(c.values())
        rows.append({"problem_id": p.problem_id, "python solutions": n, "passed": c.get("OK", 0),
                     "verdicts": dict(c), "suspect": n > 0 and c.get("OK", 0) <= max(1, n // 5),
                     "input_flattened": p.flags.input_flattened, "needs_checker": p.flags.needs_checker})
    return rows
