"""Typed rows of the human-sets study: ``sets`` (one per set: where it came from, its size, whose judgment),
``texts`` (one per text: its prompt, writer, the raters' mean on each criterion, every cheap measure and the
surface baselines) and ``ceilings`` (one per set and criterion: the raters' own agreement, each held out)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record, spread


@dataclass
class SetRecord(Record):
    set: str
    title: str
    source: str               # the fallback step that answered: kind:path
    sample: bool              # the bundled sample, not the real data
    why: str                  # what the sample stands for, or ""
    n_texts: int
    n_prompts: int
    n_raters: int
    raters: str               # whose judgment: "3 raters per text, 22 in all (crowd)"
    cite: str


@dataclass
class TextRecord(Record):
    set: str
    id: str
    prompt: str
    author: str               # the writer: a model's name, or Human / person
    kind: str                 # person | model
    text: str
    n_raters: int
    values: dict = spread("")  # each criterion's raters' mean, every measure and baseline (columns of their own)


@dataclass
class CeilingRecord(Record):
    set: str
    criterion: str
    agreement: float          # mean over raters (weighted by their texts) of one held out vs the others' mean
    n_raters: int             # raters with 5 or more texts (fewer give no Spearman)
    pooled: float             # the same without removing each prompt's level
