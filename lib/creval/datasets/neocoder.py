"""NeoCoder (Lu et al., NAACL 2025; ``JHU-CLSP/NeoCoder``, Apache-2.0): everything this project reads of it.

Files (upstream names under ``datasets/CodeForce/NeoCoder/``; found through :mod:`creval.datasets.base`,
env ``CREVAL_NEOCODER_DIR``):

- ``NeoCoder.json``: 199 Codeforces problems (rating 800), each with 6 denial rounds: ``problem_statements``
  (round r's statement with its constraint block), ``constraints_list`` (round 0 holds the placeholder
  ``["this is the og problem"]``, later rounds the cumulative banned list, oldest first) and ``codes``
  (GPT-4's code answering round r's statement);
- ``test_cases_annotated.json``: 499 rows; ``input`` = cases, a case = lines, a line = tokens; ``output``
  = one expected value per case (a string, or a list of line strings for multi-line answers);
- ``human_solutions.json`` (problem -> 30 submissions, any language) and ``human_solution_techniques.json``
  (problem -> one technique list per submission, detected by GPT-4 upstream).

One id scheme: ``problem_id = "neocoder-<codeforces id>"`` (:func:`problem_id`); ``native`` keeps ``1901A``.

**State rule** (the paper's Table 1 and the repo's evaluator): walk the 6 rounds and drop a round whose
banned list equals the previous round's; the k-th kept round is state k. So state t is answered by the first
round whose banned set has t elements; :func:`states` returns ``{t: r}``. On the real data this gives
199/199/198/194/176/97 problems in states 0..5 (:func:`table1`).

**Per-problem flags** (:class:`Flags`): ``single_test`` (no leading t line; 3 problems), ``yes_no``
(case-insensitive YES/NO answers), ``padded_output`` (an expected string with surrounding spaces),
``multiline_answer`` (an expected value spanning several lines), ``input_flattened`` (multi-line input
merged onto one line in the test file, so a correct program reading line by line fails), ``needs_checker``
(several answers are valid, so an exact comparison rejects correct programs), ``no_humans``. A problem is
``verifiable`` unless input-flattened or needs-checker. The last two come from the table :data:`UNVERIFIABLE`,
found by running the human Python solutions through the strict judge and reading the statements.

The bundled sample (``data/samples/neocoder/``, same layout, written for this project) holds 3 short problems
with hand-written rounds, codes, tests and "human" solutions: it lets the pipelines run; it is NOT real data.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_json
from creval.datasets.base import Dataset, Remote, Source, file_of, resolve

_RAW = ("https://raw.githubusercontent.com/JHU-CLSP/NeoCoder/23cd8e64dc2129e5c4fae4bcb5dff8cec41f9d4f/"
        "datasets/CodeForce/NeoCoder")

DATASET = Dataset(
    name="neocoder", env="CREVAL_NEOCODER_DIR", shared="neocoder",
    files={"problems": ("NeoCoder/NeoCoder.json", "NeoCoder.json"),
           "tests": ("NeoCoder/test_cases_annotated.json", "test_cases_annotated.json"),
           "humans": ("NeoCoder/human_solutions.json", "human_solutions.json"),
           "human_techniques": ("NeoCoder/human_solution_techniques.json", "human_solution_techniques.json")},
    required=("problems", "tests"),
    remotes=(Remote(f"{_RAW}/NeoCoder.json",
                    "6435476f71b05bf509d819a503327811eaef47cb70a50c47b271c1167732df85", "NeoCoder.json"),
             Remote(f"{_RAW}/test_cases_annotated.json",
                    "ba6b6c81c5301c3fb573ec274d88e923b04614b874ba33aef928eb4c6f4a76ed", "test_cases_annotated.json"),
             Remote(f"{_RAW}/human_solutions.json",
                    "24d5d7424fbdb4fc603baeeac4a7327da9e7f86420aeabdacc5c3cc98aa3d83c", "human_solutions.json"),
             Remote(f"{_RAW}/human_solution_techniques.json",
                    "d508695c875951b35ef307c7ec0146c766b1b90ac1221cbd8b3c55e7489a42ec",
                    "human_solution_techniques.json")),
    how="set CREVAL_NEOCODER_DIR to a folder holding NeoCoder.json and test_cases_annotated.json "
        "(github.com/JHU-CLSP/NeoCoder, datasets/CodeForce/NeoCoder)",
)

PLACEHOLDER = "this is the og problem"     # round 0's constraint list upstream
CONSTRAINT_HEADER = "Programming constraints: DO NOT use the following techniques"

# Problems whose stored tests cannot verify a correct program (native ids). Found by running the human
# Python 3 solutions through the strict judge (no human Python solution passes, or only a few with the same
# output) and confirmed by reading the statements. reason -> ids.
# Method: 4,352 distinct human Python 3 solutions run under the strict judge; the 48 problems where at most
# one in five passes were sorted by failure mode: mostly runtime errors (reading a line that holds several
# rows) -> input_flattened; mostly wrong answers -> the statement says several answers are valid ("print
# any", "if there are multiple solutions ...") -> needs_checker (all 35 confirmed in the statements).
UNVERIFIABLE: dict[str, tuple[str, ...]] = {
    "input_flattened": ("1703C", "1704A", "1713A", "1740B", "1744B", "1749A", "1767A", "1818A", "1829C",
                        "1846A", "1862A", "1879A"),    # 1850B left out: its whole-file stdin is right
    "needs_checker": ("1701B", "1711A", "1719B", "1728A", "1728B", "1734B", "1739A", "1740A", "1741B", "1743B",
                      "1754B", "1758A", "1764A", "1775A1", "1779A", "1783A", "1787A", "1790B", "1805A", "1816A",
                      "1823A", "1828A", "1831A", "1837A", "1838A", "1844A", "1845A", "1859A", "1861A", "1862B",
                      "1864A", "1878B", "1886A", "1895B", "1898A"),
}


def problem_id(native: str) -> str:
    """``neocoder-<codeforces id>``: the one id of a problem in every record."""
    return f"neocoder-{native}"


@dataclass(frozen=True)
class Case:
    """One test case: ``lines`` of whitespace-split tokens, and the expected answer lines."""
    lines: tuple[tuple[str, ...], ...]
    expected: tuple[str, ...]          # one string per expected output line, as stored (padding kept)
    expected_raw: object = None        # the stored value (str or list of str), for the repo-compatible judge

    def stdin(self, with_count: bool) -> str:
        """The case as a real stdin: lines re-joined with one space, preceded by ``1`` for multi-test problems."""
        body = "".join(" ".join(toks) + "\n" for toks in self.lines)
        return ("1\n" + body) if with_count else body


@dataclass(frozen=True)
class Round:
    r: int
    statement: str
    banned: tuple[str, ...]            # cumulative banned list, oldest first (() at round 0)
    code: str                          # the stored GPT-4 code of this round


@dataclass(frozen=True)
class Flags:
    single_test: bool = False
    yes_no: bool = False
    padded_output: bool = False
    multiline_answer: bool = False
    input_flattened: bool = False
    needs_checker: bool = False
    no_humans: bool = False

    @property
    def verifiable(self) -> bool:
        return not (self.input_flattened or self.needs_checker)


@dataclass(frozen=True)
class Problem:
    problem_id: str
    native: str
    name: str
    statement: str                     # the original statement (round 0)
    rounds: tuple[Round, ...]
    cases: tuple[Case, ...]
    flags: Flags
    human_solutions: tuple[str, ...] = ()
    human_techniques: tuple[tuple[str, ...], ...] = ()

    @property
    def states(self) -> dict[int, int]:
        return states([rd.banned for rd in self.rounds])

    def flag_row(self) -> dict:
        return {"problem_id": self.problem_id, **asdict(self.flags), "verifiable": self.flags.verifiable,
                "n_cases": len(self.cases), "n_humans": len(self.human_solutions)}


def states(banned_lists) -> dict[int, int]:
    """``{state t: round r}``: rounds whose banned list equals the previous round's are dropped and the
    k-th kept round is state k (the repo's rule; Table 1)."""
    out: dict[int, int] = {}
    prev = None
    for r, banned in enumerate(banned_lists):
        b = tuple(banned)
        if prev is not None and b == prev:
            prev = b
            continue
        out[len(out)] = r
        prev = b
    return out


def _banned(raw: list) -> tuple[str, ...]:
    return tuple(c for c in raw if c != PLACEHOLDER)


def _expected_lines(value) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return tuple(str(value).split("\n"))


_MULTI = re.compile(r"test cases|testcases|number of tests|test case", re.I)


def _single_test(statement: str) -> bool:
    inp = statement.split("\nInput\n", 1)[1] if "\nInput\n" in statement else statement
    inp = inp.split("\nOutput\n", 1)[0]
    return not _MULTI.search(inp)


def _yes_no(statement: str, cases: list[Case]) -> bool:
    flat = [e.strip().lower() for c in cases for e in c.expected]
    if flat and all(e in ("yes", "no") for e in flat):
        return True
    out = statement.split("\nOutput\n", 1)[1] if "\nOutput\n" in statement else ""
    out = out.split("\nExamples", 1)[0]
    return bool(re.search(r"\bYES\b", out) and re.search(r"\bNO\b", out)) and all(
        e in ("yes", "no") for e in flat if e.isalpha())


def _read(path: Path | None):
    """The JSON of an optional file (None when the file is absent)."""
    return None if path is None else read_json(path)


@lru_cache(maxsize=4)
def _load(src_key: str, kind: str) -> tuple[Problem, ...]:
    src = Source(kind, Path(src_key))
    rows = _read(file_of(DATASET, src, "problems"))
    tests = {t["problem_id"]: t for t in _read(file_of(DATASET, src, "tests"))}
    humans = _read(file_of(DATASET, src, "humans", required=False)) or {}
    htech = _read(file_of(DATASET, src, "human_techniques", required=False)) or {}
    flattened, checker = set(UNVERIFIABLE["input_flattened"]), set(UNVERIFIABLE["needs_checker"])
    out = []
    for row in rows:
        native = row["problem_id"]
        if native not in tests:
            raise CrevalError(f"neocoder: problem {native} has no test cases in test_cases_annotated.json",
                              "use the test file of the same upstream commit")
        t = tests[native]
        if len(t["input"]) != len(t["output"]):
            raise CrevalError(f"neocoder: problem {native} has {len(t['input'])} inputs but "
                              f"{len(t['output'])} outputs", "use an intact test_cases_annotated.json")
        cases = [Case(tuple(tuple(str(x) for x in line) for line in inp), _expected_lines(out), out)
                 for inp, out in zip(t["input"], t["output"])]
        rounds = tuple(Round(r, st, _banned(cl), code or "") for r, (st, cl, code) in
                       enumerate(zip(row["problem_statements"], row["constraints_list"], row["codes"])))
        hs = tuple(humans.get(native) or ())
        flags = Flags(single_test=_single_test(t["problem_statement"]),
                      yes_no=_yes_no(t["problem_statement"], cases),
                      padded_output=any(isinstance(c.expected_raw, str) and c.expected_raw != c.expected_raw.strip()
                                        for c in cases),
                      multiline_answer=any(len(c.expected) > 1 for c in cases),
                      input_flattened=native in flattened, needs_checker=native in checker,
                      no_humans=not hs)
        name = t.get("problem_name") or rounds[0].statement.split("\n", 1)[0]
        out.append(Problem(problem_id(native), native, name, rounds[0].statement, rounds, tuple(cases), flags,
                           hs, tuple(tuple(x) for x in (htech.get(native) or ()))))
    return tuple(out)


def load(source: str | Path | None = None) -> tuple[tuple[Problem, ...], Source]:
    """Every NeoCoder problem (upstream order) and where they were read from."""
    src = resolve(DATASET, source, allow_download=True)
    return _load(str(src.path), src.kind), src


def table1(problems) -> dict[int, int]:
    """Problems per state (the paper's Table 1): ``{t: count}`` for t = 0..5."""
    counts = {t: 0 for t in range(6)}
    for p in problems:
        for t in p.states:
            counts[t] += 1
    return counts
