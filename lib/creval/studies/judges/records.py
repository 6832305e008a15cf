"""Typed rows of the judges study (chapter 07c): ``panels`` (one per set and criterion: its size, whose judgment,
the people's ceiling, or why it could not be read), ``raters`` (one per rater of a panel, people and judges:
agreement with the people, severity, discrimination, the alternative-annotator test), ``variants`` (one per judge
and criterion where the judge was asked with several prompts: how steady it is, beside the people), ``bias`` (one
per judge and criterion: whom and what length it favours beyond the people) and ``texts`` (one per text and
criterion: the people's mean, each judge's score and the surface baselines, what the card's rows are graded on)."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record, spread


@dataclass
class OwnRecord(Record):
    id: str                   # the HANNA story
    prompt: str
    criterion: str
    judge: str                # judge_model
    score: float | None       # 1-5 (an expected value from log-probs on a local model), None: unparsed
    state: str                # ok | unparsed
    tries: int                # replies asked for (re-asks included; 0: read from log-probs)
    via: str                  # logprobs | parsed


@dataclass
class PanelRecord(Record):
    set: str
    criterion: str
    label: str                # the criterion in words, with its scale
    source: str               # the fallback step that answered: kind:path
    sample: bool
    n_texts: int
    n_prompts: int
    n_people: int
    n_judges: int
    people: str               # whose judgment: "3 raters per text, 22 in all (crowd)"
    ceiling: float            # the people's agreement, each held out against the others (NaN: not read)
    ceiling_lo: float
    ceiling_hi: float
    note: str                 # why the panel was not read, or ""


@dataclass
class RaterRecord(Record):
    set: str
    criterion: str
    rater: str
    kind: str                 # crowd, lay, expert (people) or judge
    person: bool
    n: int                    # texts it scored
    agreement: float          # Spearman with the other people's mean, each person held out in turn, within prompts
    agreement_lo: float
    agreement_hi: float
    lead: float               # a judge's agreement minus the people's ceiling, on the same references (NaN: a person)
    lead_lo: float
    lead_hi: float
    severity: float           # graded response model, people and judges in one fit: higher = stricter
    severity_lo: float
    severity_hi: float
    discrimination: float
    discrimination_lo: float
    discrimination_hi: float
    alt_winning_rate: float   # alternative-annotator test (a judge only; NaN for people)
    alt_passes: str           # "yes" | "no" | "" (a person)
    advantage: float
    epsilon: float


@dataclass
class VariantRecord(Record):
    set: str
    criterion: str
    judge: str
    variants: int             # prompt wordings the judge was asked with
    unread: float             # share of its replies the release marks unreadable
    flip_rate: float          # of pairs of texts in one prompt ordered under two wordings, the share that flips
    flip_lo: float
    flip_hi: float
    pairs: int
    text_share: float         # share of score variance between texts
    wording_share: float      # share from the wording: between variants plus text x variant
    people_flip: float        # the people's flip rate on the same prompts: two raters ordering one pair of texts
    gap: float                # flip_rate minus people_flip (consistency.flip_gap), prompts resampled for both
    gap_lo: float
    gap_hi: float
    gap_mc_lo: float          # how far each bound could move with another seed
    gap_mc_hi: float
    gap_p: float              # two-sided bootstrap p of the gap
    gap_prompts: int          # prompts where both the judge's and the people's orders were compared


@dataclass
class JudgedTextRecord(Record):
    set: str                  # hanna, ttcw, or hanna-yours, ttcw-yours (the stories your judge rated)
    criterion: str
    id: str
    prompt: str
    author: str               # who wrote it: a person's source or a model's name
    person: bool
    people: float             # the people's mean score
    n_people: int
    values: dict = spread("")  # each judge's score (judge:NAME, its mean over wordings) and the surface baselines


@dataclass
class BiasRecord(Record):
    set: str
    criterion: str
    judge: str
    author_gap: float         # (judge's person-minus-model gap) minus the people's, mean over prompts
    author_gap_lo: float
    author_gap_hi: float
    n_prompts: int
    length_lean: float        # Spearman within prompts: length against the judge's excess over the people
    length_lean_lo: float
    length_lean_hi: float
    n_texts: int
