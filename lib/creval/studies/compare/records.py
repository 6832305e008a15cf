"""Typed rows of the comparison, one record type per table; ``to_dict`` gives exactly the JSONL row."""
from __future__ import annotations

from dataclasses import dataclass, field

from creval.core.records import Record, column, optional


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


@dataclass
class SourceRecord(Record):
    """One study's records in one run root, as read (``status`` read | missing; ``note`` says why)."""
    root: str
    study: str
    models: list
    status: str
    run_dir: str           # "<study>/<run id>" under the root; "" when nothing was read
    run_id: str
    judge_model: str
    note: str


@dataclass
class CostRecord(Record):
    """What one read run cost for one model (``shared``: the judge, embeddings and entailment of a run of several)."""
    root: str
    study: str
    model: str
    calls: int
    input_tokens: int = column("input tokens", 0)
    output_tokens: int = column("output tokens", 0)
    cost_usd: float = column("cost usd", 0.0)
    sandbox_runs: int = column("sandbox runs", 0)     # programs run on their test cases (local work, no tokens)


@dataclass
class IdeaRecord(Record):
    """One answer to a prompt every source answered (a divergent first step's sample, an AUT use, a person's)."""
    task: str
    prompt: str
    source: str            # a model, or people
    text: str


@dataclass
class NoteRecord(Record):
    """What could not be compared, and why."""
    note: str


@dataclass
class ReleasedValueRecord(Record):
    """One released-output model's value of one measure on one item (MacGyver, TTCW; no call)."""
    dataset: str
    model: str
    measure: str
    item: str
    value: float


@dataclass
class OverusedRecord(Record):
    """A word one model uses far more often than the people on the same items (z of the log-odds)."""
    dataset: str
    model: str
    word: str
    z: float
    n_model: int = column("n model", 0)
    n_people: int = column("n people", 0)


@dataclass
class ReleasedSourceRecord(Record):
    """One data set of released outputs: where it was read, its items, its people and its models."""
    dataset: str
    source: str
    sample: bool           # the bundled sample, not the released data
    items: int
    people: str            # the source that stands for people
    models: dict           # name -> the fixed-output spec's description
    verdicts: bool | None = optional()    # ttcw: whether the expert verdicts were there


@dataclass
class PairwiseRecord(Record):
    """One item's two answers judged in both orders (:class:`creval.judges.pairwise.PairJudgement`)."""
    dataset: str
    item: str
    a: str
    b: str
    votes: list            # (a shown first, b shown first): "a" | "b" | "unparsed"
    score: float | None    # 1 a wins, 0 b wins, 0.5 a flip; None unparsed
    flip: bool
    first_picks: int
    parsed_orders: int
    state: str
    provenance: dict


@dataclass
class EquivalenceRecord(Record):
    """One divergent step's samples partitioned twice: by the equivalence judge and by entailment."""
    model: str
    domain: str
    problem_id: str
    n: int
    distinct_entailment: int
    distinct_judge: int
    labels_judge: list
    labels_entailment: list
    nli: str
    rand_index: float      # agreement of the two partitions over pairs of samples
    calls: int
    unparsed: int
    provenance: dict
