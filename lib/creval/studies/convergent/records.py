"""Typed rows of the convergent run. A verdict row is a judge's :class:`~creval.judges.base.Judgement` as its
``to_dict`` writes it (its fields are written once, there) with the columns the run adds beside it: the
judged solution's model and data, the human label, the sweep's threshold."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from creval.core.records import Record
from creval.judges.base import Judgement

# the columns of Judgement.to_dict(): its fields (the transcript goes to its own table) and three derived ones
JUDGEMENT = [(f.name, Any, dataclasses.field(default=None)) for f in dataclasses.fields(Judgement)
             if f.name != "transcript"] + [(n, Any, dataclasses.field(default=None))
                                           for n in ("problem_id", "verdict", "unparsed")]


def verdict_record(name: str, doc: str, *extra: str) -> type:
    """A record of a Judgement's columns followed by the ``extra`` ones."""
    cls = dataclasses.make_dataclass(name, JUDGEMENT + [(n, Any, dataclasses.field(default=None)) for n in extra],
                                     bases=(Record,), namespace={"__doc__": doc, "__module__": __name__})
    return cls


# a human-labelled pair judged (solver: who wrote the solution, annotation: the crowd's note, label: 0/1)
HumanVerdictRecord = verdict_record("HumanVerdictRecord", "One judge on one labelled pair and criterion.",
                                    "solution_model", "solver", "annotation", "label")
# a solution of chapter 02 judged by bench_judge: ``model`` is the solution's model, as chapter 02 names it
BenchVerdictRecord = verdict_record("BenchVerdictRecord", "bench_judge on one solution of chapter 02.",
                                    "solution_model", "domain", "mean_semantic_entropy")
# the retrieval judge at one confidence threshold T on a labelled pair
SweepRecord = verdict_record("SweepRecord", "The retrieval judge at threshold T on one labelled pair.",
                             "solution_model", "solver", "annotation", "T", "label")


@dataclass
class TranscriptRecord(Record):
    """What was said while judging one pair on one criterion (:func:`creval.judges.runner.judge_pair`)."""
    pair_id: str
    criterion: str
    judge: str
    problem: str
    solution: str
    transcript: list


@dataclass
class HumanPairRecord(Record):
    """One human-labelled MacGyver pair (the judges' ground truth)."""
    pair_id: str
    problem_id: str
    solver: str | None
    annotation: str | None
    labels: dict                  # criterion -> 0/1
    source: str | None


@dataclass
class LabelsSourceRecord(Record):
    """Where the human labels came from (one line for the chapter)."""
    line: str


@dataclass
class SweepCallRecord(Record):
    """Per threshold T: the pairs and the chat calls made and served from the cache."""
    T: float
    pairs: int
    calls_made: int
    calls_cached: int
