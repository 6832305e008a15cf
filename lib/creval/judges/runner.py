"""Judging problem-solution pairs: :func:`judge_pair` (one pair on every criterion: the work of one unit) and
:func:`run_judge` (many pairs into a folder, one resumable unit per pair), used by ``creval judge`` on a user's
own file. The convergent study runs :func:`judge_pair` over the units of all its judges at once."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from creval.core.errors import CrevalError
from creval.core.runs import RunStore
from creval.core.units import Unit, run_units
from creval.judges.base import crit_name
from creval.judges.registry import make_judge

EXTRA = ("model", "domain", "mean_semantic_entropy", "solver", "annotation")   # row columns kept beside a verdict


def pair_of(row: dict) -> tuple[str, str, str]:
    """(pair_id, problem text, solution) from a ``problems.jsonl`` row or a human-labelled pair."""
    pid = row.get("pair_id") or (f"{row['problem_id']}::{row['model']}" if row.get("model") else str(row["problem_id"]))
    text = row.get("problem_text") or row.get("problem") or row.get("text")
    if text is None or row.get("solution") is None:
        raise CrevalError(f"pair {pid} has no problem text or solution",
                          "give each row a problem (problem_text, problem or text) and a solution")
    return str(pid), str(text), str(row["solution"])


def judge_pair(judge, row: dict, criteria: Sequence) -> dict[str, list[dict]]:
    """``judge``'s ``verdicts`` and ``transcripts`` rows of one pair, one per criterion in order: a function of
    the pair alone (the retrieval judge keeps its fragments in the pair's own collection), so pairs can be
    judged at once in threads. A verdict row carries the row's ``model`` as ``solution_model`` and its other
    :data:`EXTRA` columns."""
    pid, text, sol = pair_of(row)
    judgements = judge.judge(text, sol, list(criteria), pid)
    extra = {k: row[k] for k in EXTRA if k in row}
    return {"verdicts": [{**v.to_dict(), "solution_model": extra.get("model"),
                          **{k: x for k, x in extra.items() if k != "model"}} for v in judgements],
            "transcripts": [{"pair_id": v.pair_id, "criterion": v.criterion, "judge": v.judge, "problem": text,
                             "solution": sol, "transcript": v.transcript} for v in judgements]}


def run_judge(judge_name: str, model, problems: list[dict], criteria: Sequence, out: str | Path, *,
              width: int = 1, progress: bool = True, **params) -> RunStore:
    """Judge every pair of ``problems`` on ``criteria`` into ``out``: ``verdicts``, ``transcripts``, ``calls``
    and ``manifest.json`` (with the settings; ``out/fragments`` for the retrieval judge).

    Each pair is one resumable unit of :func:`~creval.core.units.run_units` (``out/units/pairs.jsonl``),
    ``width`` at once (:func:`creval.models.width.width` of the judge's model). ``params`` are the judge's
    own (strict, see :func:`~creval.judges.registry.make_judge`); pick them from a shared settings dict with
    :func:`~creval.judges.registry.judge_settings`. ``out`` resumes whatever the settings: give each judge
    setting its own folder."""
    out = Path(out)
    store = RunStore(out, {"judge": judge_name, "model": model.name, "criteria": [crit_name(c) for c in criteria],
                           **params})
    store.note_model(model)
    judge = make_judge(judge_name, model, store_dir=out / "fragments", **params)
    store.params["judge_params"] = judge.params()
    pairs = [Unit(pair_of(row)[0], row) for row in problems]
    tables = run_units(out, "pairs", pairs, lambda u: judge_pair(judge, u.item, criteria), width=width,
                       desc=f"judge {judge_name}", progress=progress)
    store.write("verdicts", tables.get("verdicts", []))
    store.write("transcripts", tables.get("transcripts", []))
    store.finish()
    return store
