"""Typed rows of the rethinking run. ``measures_<set>``, ``formatting``, ``perplexity``, ``templates``,
``judge``, ``twist``, ``rerun`` and ``example`` carry each text set's own columns and the measures' (see the
module doc of :mod:`creval.studies.rethinking.run`): their columns vary with the set and the parameters (one
``uniq_<L>`` per L), so they are read as dicts."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass
class DataSourceRecord(Record):
    """Where one text set comes from, and whether it carries the human labels its check needs."""
    data: str
    where: str
    labels: str                   # yes | no


@dataclass
class SetRecord(Record):
    """One text set: its size, whether it is labelled (``why`` not), and the n-gram lengths of its CI."""
    set: str
    texts: int
    labelled: bool
    why: str
    ci_l: list[int]


@dataclass
class LlmJudgeRecord(Record):
    """A staged TTCW LLM judge's Yes count on one story."""
    judge: str
    story_id: str
    llm_passes: int
