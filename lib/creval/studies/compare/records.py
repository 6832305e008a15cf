"""Typed rows of the comparison (``values``, ``homogeneity``); ``to_dict`` gives exactly the JSONL row."""
from __future__ import annotations

from dataclasses import dataclass, field

from creval.core.records import Record


@dataclass
class Value(Record):
    """One model's value of one measure on one item (a problem, a problem at a round, a text, an AUT cell)."""
    model: str
    study: str           # the study whose records hold it
    measure: str         # e.g. "semantic entropy (macgyver)", "NeoGauge term (round 0)"
    item: str            # what two models' values are paired on
    value: float         # NaN when the study measured nothing there
    judge: str = ""      # judge_model behind the value, "" for a measure without a judge
    provenance: dict = field(default_factory=dict)   # how it was judged (compare/provenance.py); {} unjudged


@dataclass
class Homogeneity(Record):
    """Sources a and b (models, or ``people``) on one prompt; a == b: within one source."""
    task: str            # "AUT uses" | "divergent first step (<domain>)"
    prompt: str          # the AUT object or the problem id
    a: str
    b: str
    n_a: int
    n_b: int
    cosine: float        # mean embedding cosine between a's and b's texts (within: over pairs i < j)
    overlap: float       # share of a's ideas that are also one of b's (bidirectional entailment)
