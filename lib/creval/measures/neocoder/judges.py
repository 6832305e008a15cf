"""The correctness judges of NeoCoder programs; both run every program in :mod:`creval.sandbox`. The strict judge
lives in :mod:`creval.measures.neocoder.strict`, the repo-harness judge in :mod:`creval.measures.neocoder.repo`, the
verdict records in :mod:`creval.measures.neocoder.verdicts`; this module runs them (:func:`judge_codes`) and
re-exports their public names.

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

from collections import Counter

from creval import sandbox
from creval.datasets.neocoder import Problem
from creval.measures.neocoder.repo import (
    REPO_LIMITS,
    harness_program,
    harness_report,
    repo_flags,
    repo_harness,
    repo_units,
    repo_verdict,
    report_fault,
)
from creval.measures.neocoder.strict import (
    STRICT_LIMITS,
    case_verdict,
    norm_lines,
    overall,
    same_output,
    split_verdicts,
    strict_units,
    strict_verdict,
    test_stdins,
)
from creval.measures.neocoder.verdicts import (
    JE,
    JUDGE_VERSION,
    JUDGES,
    MLE,
    NP,
    OK,
    OLE,
    RE,
    SBX,
    TLE,
    VERDICTS,
    WA,
    CaseVerdict,
    Verdict,
    run_verdict,
    sandbox_env,
)
from creval.measures.neocoder_extract import parse
from creval.sandbox import Limits, program_unit

__all__ = ["JE", "JUDGES", "JUDGE_VERSION", "MLE", "NP", "OK", "OLE", "RE", "REPO_LIMITS", "SBX", "STRICT_LIMITS",
           "TLE", "VERDICTS", "WA", "CaseVerdict", "Verdict", "case_verdict", "harness_program", "harness_report",
           "human_pass_rates", "judge_codes", "norm_lines", "overall", "repo_flags", "repo_harness", "repo_units",
           "repo_verdict", "report_fault", "run_verdict", "same_output", "sandbox_env", "split_verdicts",
           "strict_units", "strict_verdict", "test_stdins"]


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
    results = iter(sandbox.run_units(units, workers=workers, progress=progress))
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
    units, owner = [], []
    for p in problems:
        for h in dict.fromkeys(p.human_solutions):
            try:
                parse(h)
            except (SyntaxError, ValueError):
                continue
            units.append(program_unit(h, test_stdins(p), Limits(), group=p.problem_id))
            owner.append(p)
    results = sandbox.run_units(units, workers=workers, progress=progress)
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
