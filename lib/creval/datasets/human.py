"""Human ground truth for validating the novelty judge and the diversity metrics (offline).

- AUT originality ratings: Ocsai-1 (``ocsai1_all_flat.csv``, split ``main2_test``, scores 1-5, the mean of
  human judges) and the Cambridge AUT set (``{bowl,paperclip}_AUT_dataset.xlsx``, ``average`` of up to
  three raters on 0-4). Directory: ``$CREVAL_AUT_DIR`` (default ``<repo>/../shared/data/aut``).
- MacGyver: the ``Unconventional?`` flag of solvable problems' verified solutions in
  ``problem_solution_pair.xlsx`` (unconventional vs conventional tool use), and crowd-written solutions
  (the benchmark's ``Prolific`` solvers + ``additional_human_solutions``) as a human reference set for
  diversity. Directory: ``$CREVAL_MACGYVER_DIR`` (default ``<repo>/../shared/data/macgyver``).

When a directory is missing, the loaders fall back to tiny hand-written samples in ``data/samples/``
(marked illustrative; ``source == "sample"``) so every pipeline still runs; numbers on them mean nothing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from creval.core import paths
from creval.core.io import read_xlsx_rows
from creval.core.errors import CrevalError


def aut_dir() -> Path:
    return paths.dataset_dir("CREVAL_AUT_DIR", "aut")


def macgyver_dir() -> Path:
    return paths.dataset_dir("CREVAL_MACGYVER_DIR", "macgyver")


def _find(root: Path, *names: str) -> Path | None:
    for name in names:
        for p in (root / name, root / "data" / name):
            if p.exists():
                return p
    return None


def _sample(n: int | None, df: pd.DataFrame, seed: int) -> pd.DataFrame:
    if n is None or n >= len(df):
        return df.reset_index(drop=True)
    return df.sample(n=n, random_state=seed).reset_index(drop=True)


def _spread(df: pd.DataFrame, n: int | None, objects: int | None, seed: int) -> pd.DataFrame:
    """Keep the ``objects`` most frequent prompts, then ``n`` rows split evenly over them (seeded)."""
    counts = df["prompt"].value_counts()
    keep = list(counts.index[:objects]) if objects else list(counts.index)
    df = df[df["prompt"].isin(keep)]
    if n is None:
        return df.reset_index(drop=True)
    per, extra = divmod(n, len(keep))
    parts = [_sample(per + (i < extra), df[df["prompt"] == o], seed) for i, o in enumerate(keep)]
    return pd.concat(parts, ignore_index=True)


def aut_sample_file() -> Path:
    return paths.samples_dir() / "aut_sample.csv"


def load_aut_sample() -> pd.DataFrame:
    df = pd.read_csv(aut_sample_file(), comment="#")
    df["item_id"] = [f"sample-{i}" for i in range(len(df))]
    return df[["item_id", "source", "prompt", "response", "score"]]


def load_ocsai(n: int | None = None, objects: int | None = 2, split: str = "main2_test", seed: int = 0) -> pd.DataFrame:
    """Human-rated AUT responses of Ocsai-1 (``split`` of ``ocsai1_all_flat.csv``, AUT task only).

    Returns ``item_id, source, prompt (the object), response, score`` (1-5, higher = more original). Keeps the
    ``objects`` most frequent objects of the split and draws ``n`` responses spread evenly over them (seeded,
    without replacement; duplicates of the same (object, response) pair are removed first). Falls back to the
    bundled illustrative sample when the data directory is absent."""
    f = _find(aut_dir() / "ocsai1", "ocsai1_all_flat.csv") or _find(aut_dir(), "ocsai1_all_flat.csv")
    if f is None:
        return _spread(load_aut_sample(), n, objects, seed)
    try:
        df = pd.read_csv(f)
    except Exception as e:   # noqa: BLE001 - any parse failure is a bad file
        raise CrevalError(f"{f}: cannot read the Ocsai AUT table ({e})", "point CREVAL_AUT_DIR at the staged aut/ folder")
    need = {"split", "task", "prompt", "response", "score"}
    if not need <= set(df.columns):
        raise CrevalError(f"{f}: missing columns {sorted(need - set(df.columns))}", "use ocsai1_all_flat.csv")
    df = df[(df["split"] == split) & (df["task"] == "AUT")].dropna(subset=["response", "score"])
    if df.empty:
        raise CrevalError(f"{f}: no AUT rows in split {split!r}", "use split main2_test, main2_val or main2_train")
    df = df.drop_duplicates(subset=["prompt", "response"]).copy()
    df["item_id"] = [f"ocsai-{i}" for i in df.index]
    df["source"] = "ocsai1"
    df["response"] = df["response"].astype(str).str.strip()
    return _spread(df[["item_id", "source", "prompt", "response", "score"]], n, objects, seed)





def load_cambridge(n: int | None = None, objects=("bowl", "paperclip"), seed: int = 0) -> pd.DataFrame:
    """Cambridge AUT responses with the ``average`` originality of their raters (0-4).

    Returns ``item_id, source, prompt, response, score, n_raters``; ``n`` responses spread evenly over
    ``objects``. Falls back to the illustrative sample (scores 1-5) when the directory is absent."""
    root = aut_dir() / "cambridge_aut"
    frames = []
    for obj in objects:
        f = _find(root, f"{obj}_AUT_dataset.xlsx")
        if f is None:
            continue
        rows = read_xlsx_rows(f)
        recs = []
        for r in rows:
            resp, avg = r.get("Responses"), r.get("average")
            if resp is None or avg is None or str(resp).strip() == "":
                continue
            raters = [r.get(k) for k in ("rater1", "rater2", "rater3")]
            rid = r.get("id")
            rid = int(rid) if isinstance(rid, float) and rid.is_integer() else rid
            recs.append({"item_id": f"cambridge-{obj}-{rid}", "source": "cambridge", "prompt": obj,
                         "response": str(resp).strip(), "score": float(avg),
                         "n_raters": sum(v is not None for v in raters)})
        frames.append(pd.DataFrame(recs).drop_duplicates(subset=["response"]))
    if not frames:
        df = load_aut_sample()
        df["n_raters"] = 0
        return _spread(df, n, len(objects), seed)
    return _spread(pd.concat(frames, ignore_index=True), n, None, seed)


# -- MacGyver ---------------------------------------------------------------------------------------------
def _clean(text) -> str:
    return str(text or "").replace("\r", "").replace("<br>", "").strip()


def load_macgyver_pairs() -> pd.DataFrame:
    """All rows of ``problem_solution_pair.xlsx`` (openpyxl) as ``problem_id, problem, solvable, unconventional,
    solution, label, source``; ``unconventional`` is True/False for solvable problems and None otherwise.
    Falls back to ``data/samples/macgyver.jsonl``."""
    f = _find(macgyver_dir(), "problem_solution_pair.xlsx")
    if f is not None:
        rows, source = read_xlsx_rows(f), "macgyver"
    else:
        s = paths.samples_dir() / "macgyver.jsonl"
        rows, source = [json.loads(x) for x in s.read_text().splitlines() if x.strip()], "sample"
    recs = []
    for r in rows:
        if r.get("ID") is None or r.get("Problem") is None:
            continue
        u = r.get("Unconventional?")
        recs.append({"problem_id": str(r["ID"]).strip(), "problem": _clean(r["Problem"]),
                     "solvable": str(r.get("Solvable?", "")).strip() == "Yes",
                     "unconventional": None if u is None else str(u).strip().lower() == "unconventional",
                     "solution": _clean(r.get("Solution")), "label": r.get("Label"), "source": source})
    if not recs:
        raise CrevalError(f"{f}: no MacGyver rows with ID and Problem", "use problem_solution_pair.xlsx")
    return pd.DataFrame(recs)


def load_macgyver_unconventional(n_per_class: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Solvable MacGyver problems with their verified human solution and the ``Unconventional?`` flag:
    ``n_per_class`` unconventional and ``n_per_class`` conventional rows (seeded), balanced for AUC."""
    df = load_macgyver_pairs()
    df = df[df["solvable"] & df["unconventional"].notna() & (df["solution"] != "")]
    parts = [_sample(n_per_class, df[df["unconventional"] == flag], seed) for flag in (True, False)]
    out = pd.concat(parts, ignore_index=True)
    out["unconventional"] = out["unconventional"].astype(bool)
    return out


def load_macgyver_human_solutions() -> pd.DataFrame:
    """Crowd-written MacGyver solutions: ``problem_id, problem, solution, source`` where source is
    ``prolific`` (benchmark_results, model == Prolific) or ``additional`` (additional_human_solutions,
    only rows whose solver judged the problem solvable). Falls back to the illustrative sample."""
    pairs = load_macgyver_pairs()
    problems = dict(zip(pairs["problem_id"], pairs["problem"]))
    recs = []
    bench = _find(macgyver_dir(), "benchmark_results_flat.jsonl")
    if bench is not None:
        for line in bench.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                if r.get("model") == "Prolific" and str(r.get("problem_id")) in problems and r.get("solution"):
                    recs.append({"problem_id": str(r["problem_id"]), "solution": _clean(r["solution"]),
                                 "annotation": r.get("annotation"), "source": "prolific"})
    extra = _find(macgyver_dir(), "additional_human_solutions.jsonl")
    if extra is not None:
        for line in extra.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                if str(r.get("Solvable?", "")).strip() == "Yes" and r.get("Solution"):
                    recs.append({"problem_id": str(r["ID"]), "solution": _clean(r["Solution"]), "annotation": None,
                                 "source": "additional"})
    if bench is None and extra is None:
        s = paths.samples_dir() / "macgyver_human_solutions.jsonl"
        for line in s.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                recs.append({"problem_id": str(r["ID"]), "solution": r["Solution"], "annotation": None,
                             "source": "sample"})
    df = pd.DataFrame(recs, columns=["problem_id", "solution", "annotation", "source"])
    df = df[~df["solution"].str.lower().str.startswith(("unsolvable", "this is not possible"))]
    df["problem"] = df["problem_id"].map(problems)
    return df.reset_index(drop=True)


def human_solution_sets(min_solutions: int = 3, problems: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Problems with at least ``min_solutions`` crowd solutions: one row per problem with
    ``problem_id, problem, solutions (list)``; ``problems`` of them drawn with ``seed``."""
    df = load_macgyver_human_solutions()
    g = df.groupby("problem_id").agg(problem=("problem", "first"), solutions=("solution", list)).reset_index()
    g = g[g["solutions"].map(len) >= min_solutions]
    return _sample(problems, g, seed)
