"""MacGyver (Tian et al., NAACL 2024; ``allenai/MacGyver``, Apache-2.0): everything this project reads of it.

Files (upstream names; found through :mod:`creval.datasets.base`, env ``CREVAL_MACGYVER_DIR``):

- ``problem_solution_pair.xlsx`` (or its lossless ``.jsonl``): 1,683 problems with ``ID, Problem,
  Solvable?, Unconventional?, Solution, Label`` -> :func:`load_problems` (the macgyver domain's
  problems, and the verified solutions with their ``Unconventional?`` flag);
- ``additional_human_solutions.xlsx`` (or ``.jsonl``): extra crowd solutions -> :func:`load_human_solutions`;
- ``benchmark_results.json``: ``problem_id -> [{model, annotation, solution}]``, one human annotation per
  benchmarked solution -> :func:`load_annotations` (ground truth for the judges) and the ``Prolific``
  crowd solutions.

One id scheme: every row carries ``problem_id = "macgyver-<ID>"`` (:func:`problem_id`), whichever file
it comes from. One text cleaner: :func:`clean` (``<br>`` is a line break, ``\\r`` dropped, blank lines
collapsed) for problems and solutions alike.

Ground truth of the judges. Each benchmarked solution carries one annotation, mapped to two labels:

| annotation                     | feasibility | effectiveness |
|--------------------------------|-------------|---------------|
| correct_efficient              | True        | True          |
| correct_inefficient            | True        | False         |
| wrong_partial_correct          | False       | False         |
| wrong_entire_wrong_solution    | False       | False         |
| wrong_fail_solvability_status  | False       | False         |
| correct_unsolvable             | excluded by default (``include_unsolvable=True``: True / False) |

``wrong_fail_solvability_status`` (a plan for an impossible problem, or "impossible" for a solvable one)
offers no working plan, so it is not feasible. ``correct_unsolvable`` answers "this cannot be done"
correctly; there is no plan to rate, so by default such rows are left out. Safety has no human label.

The bundled sample (``data/samples/macgyver/``, written for this project) has 9 problems, a few
illustrative annotations and crowd-style solutions: it only lets the pipelines run; it is NOT real data.
"""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.core.io import read_any
from creval.datasets.base import Dataset, Remote, Source, file_of, resolve, table_file

_RAW = "https://raw.githubusercontent.com/allenai/MacGyver/5e3ecc9d1b4b2edca554cc019420b675194709dc/data"

DATASET = Dataset(
    name="macgyver", env="CREVAL_MACGYVER_DIR", shared="macgyver",
    unit="problem", unit_why="solutions to one problem share its setting and its tools, so a problem's "
    "solutions are one piece of evidence, not several",
    files={"problems": ("problem_solution_pair.xlsx", "problem_solution_pair.jsonl"),
           "annotations": ("benchmark_results.json",),
           "released": ("released_outputs.json", "benchmark_results.json"),   # sample: its own file
           "human_solutions": ("additional_human_solutions.xlsx", "additional_human_solutions.jsonl")},
    required=("problems",),
    remotes=(Remote(f"{_RAW}/MacGyver/problem_solution_pair.xlsx",
                    "85faadd871e081066ed6dbe0ecafad82f4c79c16619f6b90da562a81f3ccceac", "problem_solution_pair.xlsx"),
             Remote(f"{_RAW}/MacGyver/additional_human_solutions.xlsx",
                    "de9f6c7f6ebdb467c2db360fe1d273f9663152c556b6c1b4501eb12c9d91b2cb",
                    "additional_human_solutions.xlsx"),
             Remote(f"{_RAW}/Benchmark_results/benchmark_results.json",
                    "aca1357d37317316df7212ecf93715e957cf210f26520dc4638de74d22928e96", "benchmark_results.json")),
    file_ok=True,
    how="set CREVAL_MACGYVER_DIR to a folder holding MacGyver's problem_solution_pair.xlsx "
        "(and benchmark_results.json, additional_human_solutions.xlsx), or unset it to use the fallbacks")

FEASIBLE = {"correct_efficient": True, "correct_inefficient": True, "correct_unsolvable": True,
            "wrong_partial_correct": False, "wrong_entire_wrong_solution": False,
            "wrong_fail_solvability_status": False}
EFFECTIVE = {"correct_efficient": True}
NOT_A_SOLUTION = ("unsolvable", "this is not possible")   # crowd answers that give no plan


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    """Where MacGyver is read from (see :func:`creval.datasets.base.resolve`)."""
    return resolve(DATASET, given, allow_download=allow_download)


def problem_id(raw) -> str:
    """The one problem id: ``macgyver-<ID>`` (``ID`` as in the dataset; 541.0 and "541" both give 541)."""
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    return f"macgyver-{str(raw).strip()}"


def clean(text) -> str:
    """The one MacGyver text cleaner: ``<br>`` -> line break, no ``\\r``, no blank lines, stripped."""
    text = re.sub(r"<br\s*/?>", "\n", str(text or ""), flags=re.I).replace("\r", "")
    return re.sub(r"\n\s*\n+", "\n", text).strip()


def labels_for(annotation: str) -> dict:
    return {"feasibility": FEASIBLE.get(annotation, False), "effectiveness": EFFECTIVE.get(annotation, False)}


def _sample(n: int | None, df: pd.DataFrame, seed: int) -> pd.DataFrame:
    if n is None or n >= len(df):
        return df.reset_index(drop=True)
    return df.sample(n=n, random_state=seed).reset_index(drop=True)


# -- problems --------------------------------------------------------------------------------------
def load_problems(given: str | Path | None = None) -> tuple[list[dict], Source]:
    """Every row of ``problem_solution_pair`` as ``problem_id, problem, solvable, unconventional, solution,
    label`` (``unconventional``: True/False for solvable problems, None otherwise), and its source (naming
    the file read)."""
    src = source(given, allow_download=True)
    f = table_file(DATASET, src, "problems")
    rows = read_any(f)
    if rows and not {"ID", "Problem", "Solvable?"} <= set(rows[0]):
        raise CrevalError(f"{f}: MacGyver rows need the columns 'ID', 'Problem' and 'Solvable?'",
                          f"found columns {sorted(rows[0])}; use MacGyver's problem_solution_pair.xlsx")
    out = []
    for r in rows:
        if r.get("ID") is None or not r.get("Problem"):
            continue
        u = r.get("Unconventional?")
        out.append({"problem_id": problem_id(r["ID"]), "problem": clean(r["Problem"]),
                    "solvable": str(r.get("Solvable?", "")).strip().lower() == "yes",
                    "unconventional": None if u is None else str(u).strip().lower() == "unconventional",
                    "solution": clean(r.get("Solution")), "label": r.get("Label")})
    if not out:
        raise CrevalError(f"{f}: no MacGyver rows with ID and Problem", "use problem_solution_pair.xlsx")
    return out, Source(src.kind, f)


def domain_rows(given: str | Path | None = None) -> tuple[list[dict], Source]:
    """The macgyver domain's problems: solvable ones only (``Solvable? == Yes``, as the paper's loader does),
    as fields ``id, problem, reference_solution, unconventional``, and the source (naming the file read)."""
    rows, src = load_problems(given)
    return [{"id": r["problem_id"], "problem": r["problem"], "reference_solution": r["solution"],
             "unconventional": r["unconventional"]} for r in rows if r["solvable"]], src


def load_pairs(given: str | Path | None = None) -> pd.DataFrame:
    """:func:`load_problems` as a DataFrame with ``source`` = ``macgyver`` or ``sample``."""
    rows, src = load_problems(given)
    df = pd.DataFrame(rows)
    df["source"] = "sample" if src.is_sample else "macgyver"
    df.attrs["source"] = str(src)
    return df


def load_unconventional(n_per_class: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Solvable problems with their verified solution and the ``Unconventional?`` flag:
    ``n_per_class`` unconventional and ``n_per_class`` conventional rows (seeded), balanced for AUC."""
    df = load_pairs()
    df = df[df["solvable"] & df["unconventional"].notna() & (df["solution"] != "")]
    out = pd.concat([_sample(n_per_class, df[df["unconventional"] == flag], seed) for flag in (True, False)],
                    ignore_index=True)
    out["unconventional"] = out["unconventional"].astype(bool)
    return out


# -- benchmark annotations and crowd solutions --------------------------------------------------------
def _benchmark(src: Source) -> list[dict]:
    """``benchmark_results.json`` flattened to rows ``problem_id (raw), model, annotation, solution``."""
    f = file_of(DATASET, src, "annotations")
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CrevalError(f"{f}: cannot read MacGyver benchmark results ({e})", "replace the file") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise CrevalError(f"{f}: expected {{problem_id: [{{model, annotation, solution}}, ...]}}",
                          "use MacGyver's data/Benchmark_results/benchmark_results.json")
    return [{"problem_id": k, **r} for k, v in data.items() for r in v if isinstance(r, dict)]


def load_annotations(given: str | Path | None = None, include_unsolvable: bool = False) -> tuple[list[dict], str]:
    """Human-annotated benchmark solutions ``{pair_id, problem_id, solver, annotation, problem, solution,
    labels}`` (``pair_id = <problem_id>::<solver>::<row>``) and a description of the source."""
    src = source(given, allow_download=True)
    problems = {r["problem_id"]: r["problem"] for r in load_problems(given)[0]}
    rows = []
    for i, r in enumerate(_benchmark(src)):
        ann = r.get("annotation")
        if ann not in FEASIBLE or (ann == "correct_unsolvable" and not include_unsolvable):
            continue
        pid = problem_id(r["problem_id"])
        if pid not in problems or not str(r.get("solution") or "").strip():
            continue
        rows.append({"pair_id": f"{pid}::{r['model']}::{i}", "problem_id": pid, "solver": r["model"],
                     "annotation": ann, "problem": problems[pid], "solution": clean(r["solution"]),
                     "labels": labels_for(ann)})
    where = str(src) + (" (illustrative sample, NOT real annotations)" if src.is_sample else "")
    return rows, where


def sample_pairs(n: int, seed: int = 0, given: str | Path | None = None,
                 include_unsolvable: bool = False) -> list[dict]:
    """A fixed random sample of ``n`` human-labelled pairs (same ``seed`` -> same pairs), each with ``source``."""
    rows, where = load_annotations(given, include_unsolvable)
    picked = random.Random(seed).sample(rows, min(n, len(rows)))
    for r in picked:
        r["source"] = where
    return picked


def load_human_solutions(given: str | Path | None = None) -> pd.DataFrame:
    """Crowd-written solutions: ``problem_id, solution, annotation, source, problem`` where source is
    ``prolific`` (benchmark results, model == Prolific) or ``additional`` (additional_human_solutions, rows
    whose solver judged the problem solvable); ``sample`` for the bundled sample. Answers that give no
    plan ("Unsolvable...") are dropped."""
    src = source(given, allow_download=True)
    problems = {r["problem_id"]: r["problem"] for r in load_problems(given)[0]}
    bench = file_of(DATASET, src, "annotations", required=False)
    extra = file_of(DATASET, src, "human_solutions", required=False)
    if bench is None and extra is None:
        raise CrevalError(f"macgyver: no crowd solutions in {src} (neither benchmark_results.json nor "
                          "additional_human_solutions.xlsx)", DATASET.how)
    recs = []
    for r in _benchmark(src) if bench is not None else []:
        pid = problem_id(r["problem_id"])
        if r.get("model") == "Prolific" and pid in problems and r.get("solution"):
            recs.append({"problem_id": pid, "solution": clean(r["solution"]),
                         "annotation": r.get("annotation"), "source": "prolific"})
    for r in read_any(extra) if extra is not None else []:
        if r.get("ID") is not None and str(r.get("Solvable?", "")).strip() == "Yes" and r.get("Solution"):
            recs.append({"problem_id": problem_id(r["ID"]), "solution": clean(r["Solution"]), "annotation": None,
                         "source": "additional"})
    df = pd.DataFrame(recs, columns=["problem_id", "solution", "annotation", "source"])
    df = df[~df["solution"].str.lower().str.startswith(NOT_A_SOLUTION)]
    if src.is_sample:
        df["source"] = "sample"
    df["problem"] = df["problem_id"].map(problems)
    df.attrs["source"] = str(src)
    return df.reset_index(drop=True)


def human_solution_sets(min_solutions: int = 3, problems: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Problems with at least ``min_solutions`` crowd solutions: one row per problem with
    ``problem_id, problem, solutions (list)``; ``problems`` of them drawn with ``seed``."""
    df = load_human_solutions()
    g = df.groupby("problem_id").agg(problem=("problem", "first"), solutions=("solution", list)).reset_index()
    g = g[g["solutions"].map(len) >= min_solutions]
    return _sample(problems, g, seed)


# -- Rethinking creativity evaluation (chapter 06) ----------------------------------------------------
FEASIBLE_LABELS = ("efficient", "inefficient")


def load_feasible_unconventional(n_per_class: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Solvable problems whose verified solution is feasible (``Label`` efficient or inefficient) with the
    ``Unconventional?`` flag: on the full data 573 unconventional and 230 conventional rows (the paper's
    problem-solving creative side is exactly these 573). ``n_per_class`` of each class (seeded)."""
    df = load_pairs()
    df = df[df["solvable"] & df["unconventional"].notna() & (df["solution"] != "")
            & df["label"].astype(str).str.strip().str.lower().isin(FEASIBLE_LABELS)]
    out = pd.concat([_sample(n_per_class, df[df["unconventional"] == flag], seed) for flag in (True, False)],
                    ignore_index=True)
    out["unconventional"] = out["unconventional"].astype(bool)
    out.attrs["source"] = df.attrs.get("source", "")
    return out


def load_solver_pairs(llm: str = "solutions_gpt4", human: str = "Prolific", problems: int | None = None,
                      seed: int = 0) -> pd.DataFrame:
    """One crowd solution and one ``llm`` solution of the same benchmark problem (the first of each, any
    annotation), one row per problem: ``problem_id, problem, human, llm``; ``problems`` of them (seeded).
    Empty when the source has no such pairs (the bundled sample)."""
    src = source(allow_download=True)
    problems_text = {r["problem_id"]: r["problem"] for r in load_problems()[0]}
    first: dict = {}
    for r in _benchmark(src):
        pid = problem_id(r["problem_id"])
        sol = clean(r.get("solution"))
        if pid not in problems_text or not sol or sol.lower().startswith(NOT_A_SOLUTION):
            continue
        for who, name in (("human", human), ("llm", llm)):
            if r.get("model") == name:
                first.setdefault(pid, {}).setdefault(who, sol)
    rows = [{"problem_id": p, "problem": problems_text[p], "human": v["human"], "llm": v["llm"]}
            for p, v in first.items() if "human" in v and "llm" in v]
    df = pd.DataFrame(rows, columns=["problem_id", "problem", "human", "llm"])
    df = _sample(problems, df.sort_values("problem_id"), seed) if len(df) else df
    df.attrs["source"] = str(src)
    return df


def solution_pool() -> list[tuple[str, str]]:
    """Every MacGyver solution available here, as ``(problem_id, text)``: the verified solutions, the
    benchmark solutions of every solver (when ``benchmark_results.json`` is present) and the additional crowd
    solutions (when present). The reference corpus of chapter 06's creativity index, grouped by problem."""
    docs = [(r["problem_id"], r["solution"]) for r in load_problems()[0] if r["solution"]]
    src = source(allow_download=True)
    if file_of(DATASET, src, "annotations", required=False) is not None:
        docs += [(problem_id(r["problem_id"]), clean(r.get("solution"))) for r in _benchmark(src) if r.get("solution")]
    try:
        hs = load_human_solutions()
    except CrevalError:
        hs = None
    if hs is not None:
        docs += [(r.problem_id, r.solution) for r in hs.itertuples() if r.source == "additional"]
    return docs


# -- released outputs of the benchmarked solvers (chapter 09) -------------------------------------------
# the benchmark's solvers by display name; its gpt4-prompt-N rows (GPT-4 under other prompts) are left out
SOLVERS = {"solutions_gpt4": "GPT-4", "solutions_gpt35": "GPT-3.5", "solutions_claude2": "Claude 2",
           "solutions_bard": "Bard", "llama2_7b_solutions": "Llama-2 7B", "llama2_13b_solutions": "Llama-2 13B",
           "llama2_70b_solutions": "Llama-2 70B", "Prolific": "people (Prolific)"}


def load_released(given: str | Path | None = None) -> pd.DataFrame:
    """Every benchmarked solution of the :data:`SOLVERS` with its human annotation, one row each:
    ``problem_id, solver (display name), annotation, solution, correct, efficient`` (``correct``: the
    annotation starts with ``correct`` (``correct_unsolvable`` included), ``efficient``: ``correct_efficient``).
    On the bundled sample: ``released_outputs.json``, a few solutions written for this project under the
    solvers' names (``attrs["is_sample"]``): NOT their real outputs."""
    src = source(given, allow_download=True)
    f = file_of(DATASET, src, "released")
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise CrevalError(f"{f}: cannot read MacGyver benchmark results ({e})", "replace the file") from None
    rows = [{"problem_id": problem_id(k), "solver": SOLVERS[r["model"]], "annotation": r.get("annotation"),
             "solution": clean(r.get("solution"))}
            for k, v in data.items() for r in v if isinstance(r, dict) and r.get("model") in SOLVERS]
    df = pd.DataFrame(rows, columns=["problem_id", "solver", "annotation", "solution"])
    df = df[(df["solution"] != "") & df["annotation"].notna()].reset_index(drop=True)
    df["correct"] = df["annotation"].astype(str).str.startswith("correct")
    df["efficient"] = df["annotation"].eq("correct_efficient")
    df.attrs["source"], df.attrs["is_sample"] = str(Source(src.kind, f)), src.is_sample
    return df
