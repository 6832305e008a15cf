"""What a rubric judge's scores are, for the judge that writes them and the reports that read them: the rubric
(:data:`ASPECTS`: each domain's aspects, their allowed values and anchors; Lu et al. 2025, App. G), one text's
scores (:class:`RubricRecord`) and the spread of a score over reruns (:func:`rerun_consistency`). Pure: no
model and no prompt here (those are :mod:`creval.judges.rubric`'s)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from creval.core.records import Record

ASPECTS: dict[str, list[tuple[str, tuple, str]]] = {
    "cw": [
        ("Background Setup", (1, 2, 3, 4, 5), "1 = a stock setting seen many times; "
                                              "3 = familiar with some fresh details; "
                                              "5 = a setting unlike any you know"),
        ("Logic", (1, 2, 3, 4, 5), "1 = events contradict each other or come from nowhere; 3 = mostly coherent; "
                                   "5 = every event follows from what came before"),
        ("Development", (1, 2, 3, 4, 5), "1 = flat, no turns; 3 = some build-up; "
                                         "5 = turns that build to a strong climax"),
        ("Originality", (1, 2, 3, 4, 5), "1 = entirely predictable or borrowed; 2 = mostly predictable; "
                                         "3 = a mix of the expected and the new; 4 = clearly different from usual "
                                         "plots; 5 = surprising and inventive throughout"),
    ],
    "ps": [
        ("Problem Difficulty", (1, 2, 3, 4, 5), "1 = trivial with what is at hand; 3 = needs some thought; "
                                                "5 = very hard with what is at hand"),
        ("Unconventionality", (1, 2, 3, 4, 5), "1 = the standard way anyone would do it; 2 = mostly standard; "
                                               "3 = a somewhat unusual twist; 4 = uses objects well beyond their "
                                               "purpose; 5 = reframes the problem in a surprising way"),
        ("Efficiency", (1, 2, 3, 4, 5), "1 = many needless steps or materials; 3 = reasonable; "
                                        "5 = as few steps and materials as possible"),
    ],
    "ri": [
        ("Soundness", (1, 1.5, 2, 2.5, 3, 3.5, 4), "1 = poor, claims unsupported; 2 = fair; 3 = good; "
                                                   "4 = excellent, claims fully supported"),
        ("Presentation", (1, 2, 3, 4), "1 = poor; 2 = fair; 3 = good; 4 = excellent"),
        ("Contribution", (1, 2, 3, 4), "1 = poor, nothing new; 2 = fair; 3 = good, a clear new contribution; "
                                       "4 = excellent, opens a new direction"),
        ("Overall", tuple(range(1, 11)), "1 = trivial or wrong; 3 = reject; 5 = borderline accept; "
                                         "6 = weak accept; 8 = strong accept; 10 = award quality"),
    ],
}


@dataclass
class RubricRecord(Record):
    """One text's rubric scores: ``scores[aspect]`` (expected value or parsed), ``argmax``, ``state``."""
    item_id: str
    domain: str
    scores: dict
    argmax: dict
    state: str                     # ok | unparsed
    via: str                       # logprobs | parsed
    analysis: str
    model: str
    variant: int = 0               # 0: greedy analysis; k >= 1: the k-th sampled analysis (rerun test)
    attempts: dict = field(default_factory=dict)


def rerun_consistency(records: Sequence[RubricRecord], aspect: str) -> dict:
    """Spread of one aspect's score over reruns of the same item: mean within-item SD, the share of items
    whose arg-max score changes, and the number of items/reruns."""
    by: dict = {}
    for r in records:
        if r.scores.get(aspect) is not None:
            by.setdefault(r.item_id, []).append((r.scores[aspect], r.argmax[aspect]))
    multi = {k: v for k, v in by.items() if len(v) >= 2}
    if not multi:
        return {"aspect": aspect, "items": 0, "reruns": 0, "mean_sd": float("nan"), "argmax_changes": float("nan")}
    sds = [float(np.std([s for s, _ in v], ddof=1)) for v in multi.values()]
    changes = [len({a for _, a in v}) > 1 for v in multi.values()]
    return {"aspect": aspect, "items": len(multi), "reruns": int(np.median([len(v) for v in multi.values()])),
            "mean_sd": float(np.mean(sds)), "argmax_changes": float(np.mean(changes))}
