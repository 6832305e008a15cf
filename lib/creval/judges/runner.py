"""``run_judge``: judge many problem-solution pairs into a folder (resumable), used by the convergent study's
run (one folder per judge setting, inside the study's run folder whose id covers the settings) and by
``creval judge`` on a user's own file."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tqdm.auto import tqdm

from creval.core.errors import CrevalError
from creval.core.runs import RunStore
from creval.judges.base import crit_name
from creval.judges.registry import make_judge


def pair_of(row: dict) -> tuple[str, str, str]:
    """(pair_id, problem text, solution) from a ``problems.jsonl`` row or a human-labelled pair."""
    pid = row.get("pair_id") or (f"{row['problem_id']}::{row['model']}" if row.get("model") else str(row["problem_id"]))
    text = row.get("problem_text") or row.get("problem") or row.get("text")
    if text is None or row.get("solution") is None:
        raise CrevalError(f"pair {pid} has no problem text or solution",
                          "give each row a problem (problem_text, problem or text) and a solution")
    return str(pid), str(text), str(row["solution"])


def run_judge(judge_name: str, model, problems: list[dict], criteria: Sequence, out: str | Path,
              progress: bool = True, **params) -> RunStore:
    """Judge every pair x criterion not yet in ``out/verdicts.jsonl``; write verdicts, transcripts, manifest.

    ``params`` are the judge's own (strict, see :func:`~creval.judges.registry.make_judge`); pick them from a
    shared settings dict with :func:`~creval.judges.registry.judge_settings`. ``out`` resumes whatever the
    settings: give each judge setting its own folder (the convergent study does: its run id covers them); the
    settings are recorded in ``out/manifest.json``."""
    out = Path(out)
    store = RunStore(out, {"judge": judge_name, "model": model.name, "criteria": [crit_name(c) for c in criteria],
                           **{k: v for k, v in params.items()}})
    store.note_model(model)
    judge = make_judge(judge_name, model, store_dir=out / "fragments", **params)
    store.params["judge_params"] = judge.params()
    done = {(r["pair_id"], r["criterion"]) for r in store.read("verdicts")}
    for row in tqdm(problems, desc=f"judge {judge_name}", disable=not progress):
        pid, text, sol = pair_of(row)
        todo = [c for c in criteria if (pid, crit_name(c)) not in done]
        if not todo:
            continue
        judgements = judge.judge(text, sol, todo, pid)
        extra = {k: row[k] for k in ("model", "domain", "mean_semantic_entropy", "solver", "annotation") if k in row}
        store.append("verdicts", [{**v.to_dict(), "solution_model": extra.get("model"),
                                   **{k: x for k, x in extra.items() if k != "model"}} for v in judgements])
        store.append("transcripts", [{"pair_id": v.pair_id, "criterion": v.criterion, "judge": v.judge,
                                      "problem": text, "solution": sol, "transcript": v.transcript}
                                     for v in judgements])
        store.flush_calls()
        done.update((pid, v.criterion) for v in judgements)
    store.finish()
    return store
