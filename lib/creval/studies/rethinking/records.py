"""Typed rows of the rethinking run (one record type per table; :mod:`creval.studies.rethinking.run` says how
each is computed). The ``measures_<set>`` tables share :class:`MeasuresRecord`: a column only one set has
is optional there, and ``uniq_<L>`` is one column per n-gram length L of the set's reference index."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from creval.core.records import Record, optional, spread
from creval.judges.rubric import RubricRecord


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


@dataclass
class MeasuresRecord(Record):
    """One text of a set with its creativity index, L-uniqueness, length and templates (``texts.text_measures``)."""
    id: str
    group: str             # what a text is compared within, and left out of its reference (problem, plot, pair)
    text: str
    label: Any             # the set's human label: bool (ps, solver, msrp), writer (ttcw), originality (aut),
    #                        writers' points (lamp) or mean Creativity (confed)
    kind: str
    ci: float              # creativity index over the set's L range (Eq. 1)
    n_words: int
    has_template: float    # 1.0 when the text holds one of the set's pooled templates
    tpt: float             # template tokens per token
    uniq: dict = spread("uniq_")                  # uniq_<L>: 1 - share of words in reused L-grams
    full_words: int | None = optional()           # solver: the words before the cut to the pair's shorter text
    object: str | None = optional()               # aut: the object
    side: int | None = optional()                 # msrp: which sentence of the pair (0 or 1)
    passes: int | None = optional()               # ttcw with expert verdicts: tests passed
    originality_passes: int | None = optional()
    n_verdicts: int | None = optional()
    distinct_1: float | None = optional()         # lamp, confed: distinct-1, distinct-2 and MATTR of the text
    distinct_2: float | None = optional()
    mattr: float | None = optional()
    item: str | None = optional()                 # lamp: the item as shown (group is its instruction)
    n_writers: int | None = optional()            # lamp: writers who ranked the item
    over_raw: float | None = optional()           # lamp, an edit: writers who ranked it above the raw paragraph
    mean_rank: float | None = optional()          # lamp: the writers' mean rank (1 = best; label = 3 - it)
    total: float | None = optional()              # confed: the raters' mean total (label: their mean Creativity)
    rating_group: int | None = optional()         # confed: the block of stories one pair of raters scored
    creativity_r1: float | None = optional()      # confed: each rater's Creativity and total
    creativity_r2: float | None = optional()
    total_r1: float | None = optional()
    total_r2: float | None = optional()


@dataclass
class FormattingRecord(Record):
    """A MacGyver text's creativity index again with its step markers stripped (the formatting control)."""
    set: str
    id: str
    kind: str
    label: Any
    marked: bool           # the text had a step marker or list number
    n_words_unmarked: int
    ci_unmarked: float


@dataclass
class PerplexityRecord(Record):
    """One text's log-likelihood under one model (``measures.perplexity``); ``ppl_cond`` given its problem."""
    set: str
    id: str
    model: str
    ppl: float
    bpb: float             # bits per UTF-8 byte of the text
    n_tokens: int
    nll: float             # summed negative log-likelihood, nats
    first_nll: float
    n_bytes: int
    ppl_cond: float | None = optional()           # ps: perplexity given the problem as context


@dataclass
class TemplateRecord(Record):
    """Template statistics of one group of a set, templates extracted from the group itself (Table 2, Fig. 4)."""
    set: str
    kind: str
    texts: int
    n: int                 # template length in POS tags
    top: int
    mode: str              # sequence | compat
    rate: float
    tpt_mean: float
    cr_pos: float          # compression ratio of the POS sequence


@dataclass(kw_only=True)
class JudgeRecord(RubricRecord):
    """The rubric judge on one picked text: its rubric record with the set's columns and the headline score."""
    set: str
    id: str
    kind: str
    label: Any
    judge: float           # the headline aspect's score (Unconventionality, or Originality for stories)


@dataclass
class LampJudgeRecord(Record):
    """The pairwise novelty judge on one LAMP item's edit against its raw paragraph, asked in both orders."""
    item: str
    group: str                     # the instruction (the unit resampled)
    pair: str                      # writer_edit | ai_edit
    first_id: str                  # the edit's text id
    second_id: str                 # the raw paragraph's
    edit_shown_first: bool | None  # the judge picked the edit with the edit shown first (None: its log-probs tied)
    edit_shown_second: bool | None
    pref: float                    # 1 edit, 0 raw (both orders agree), 0.5 a flip, NaN unparsed
    p_edit: float                  # P(edit more novel), averaged over the two orders
    judge_model: str


@dataclass
class TwistRecord(Record):
    """The prompt twist on one solution: P(yes) asked "conventional?" and "unconventional?" (Sec. 5)."""
    id: str
    p_yes_conventional: float
    p_yes_unconventional: float
    says_unconventional: float     # NaN when unparsed
    says_conventional: float
    contradiction: float           # 1.0 when both answers agree (a contradiction)
    unparsed: bool
    kind: str


@dataclass
class ExampleRecord(Record):
    """One MacGyver solution as data for the chapter's worked example: reused spans and template hits."""
    id: str
    group: str
    kind: str
    text: str
    tokens: list
    span_L: int
    spans: list            # [start, end) of each span shared with another problem's solutions
    reference: dict        # the n-gram index's description
    pos_tokens: int
    template_n: int
    template_hits: list
