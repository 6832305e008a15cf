"""NeoCoder's repo-harness judge: the NeoCoder repo's harness (:func:`repo_harness`) on the repo's extraction
(:func:`~creval.measures.neocoder_extract.repo_extract`): module-level exec, mocked ``input`` over all cases
behind a count line, prefix comparison with ``zip``, a per-case retry when anything raises, a 6 s limit for the
whole problem. The harness reaches the sandbox as an ordinary program (:func:`harness_program`: the harness's
source with the code and the tests as literals), which prints its report as JSON. It reproduces the paper's
Table 3 pass@1 row; its verdicts are not a correctness measure."""
from __future__ import annotations

import inspect
import json
import textwrap

from creval.datasets.neocoder import Problem
from creval.measures.neocoder.verdicts import JE, MLE, NP, OK, RE, SBX, TLE, WA, CaseVerdict, Verdict, sandbox_env
from creval.measures.neocoder_extract import repo_extract
from creval.sandbox import Limits, program_unit

# the repo joins its thread after 6 s; the harness's report is its stdout (kept whole up to 1 MiB)
REPO_LIMITS = Limits(wall_s=6.0, cpu_s=6.0, capture_bytes=1 << 20)


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

    Long: it is the whole program the sandbox runs, kept in one self-contained piece.

    Runs INSIDE the sandbox as the whole program (self-contained: it imports only the standard library).
    The report goes, as JSON, to the program's real stdout, and only the report: what the code prints
    outside the swapped stdout goes to a scratch file in the working folder. (One function of over 80 lines:
    its source is the whole program the sandbox runs, so it cannot call helpers of this module.)"""
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
    prog = harness_program(ext, [[list(line) for line in c.lines] for c in problem.cases],
                           [isinstance(c.expected_raw, list) for c in problem.cases])
    return program_unit(prog, [""], limits, group=group or code)


def repo_verdict(problem: Problem, res: dict | None) -> Verdict:
    """The repo-compatible judge's verdict of a sandbox result (None: the extraction found no function)."""
    if res is None:
        return Verdict("repo", NP, False, detail="the repo's extraction found no function (code not parsable)",
                       isolation="not run", memory_scope="-")
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
