"""Typed records of the NeoCoder study: one :class:`ProblemRecord` per problem of the release, one
:class:`CodeRecord` per stored GPT-4 round (the replay), one :class:`PositiveRecord` per known positive and one
:class:`HumanDetectionRecord` per human solution (the detector check), and one :class:`RoundRecord` per live
denial-prompting round."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record, column


@dataclass(frozen=True)
class ProblemRecord(Record):
    """One problem of the release: its flags, its states and the human technique lists."""
    problem_id: str
    native: str
    replayed: bool                    # among the first ``neocoder_problems`` (all when 0)
    n_rounds: int
    n_cases: int
    state_rounds: list                # the round answering each state t (index t)
    state_banned: list                # the banned list of each state t, oldest first
    human_techniques: list            # the stored technique list of each human solution (GPT-4-detected upstream)
    single_test: bool
    yes_no: bool
    padded_output: bool
    multiline_answer: bool
    input_flattened: bool
    needs_checker: bool
    no_humans: bool
    verifiable: bool
    n_humans: int


@dataclass(frozen=True)
class CodeRecord(Record):
    """A stored code of one round, judged and analysed."""
    problem_id: str
    round: int
    state: int | None                 # None for a duplicate round (its banned list equals the previous one)
    banned: list                      # the round's banned techniques, oldest first
    code_sha: str
    repo: dict                        # Verdict.to_dict() of the repo-compatible judge
    strict: dict                      # Verdict.to_dict() of the strict judge
    correct_repo: bool
    correct_strict: bool
    salvaged: bool                    # strict judge ran a parsable prefix of a truncated reply
    detector: str
    techniques: list                  # detected in the cleaned program
    detection_status: str
    follows: bool
    novel: list                       # detected techniques no human solution of the problem shows
    novelty: float
    has_humans: bool
    verifiable: bool
    code: str = ""                    # the stored code itself


@dataclass(frozen=True)
class PositiveRecord(Record):
    """A known positive of the technique detector: the ban drawn at round ``round + 1`` was detected by GPT-4
    in the code of ``round``; ``found`` says, per static-detector variant, whether ours detects it too."""
    problem_id: str
    round: int
    technique: str
    found: dict                       # {variant: bool}


@dataclass(frozen=True)
class HumanDetectionRecord(Record):
    """One parsable human Python solution: its stored technique labels and what each static-detector
    variant finds in it."""
    problem_id: str
    solution: int                     # index among the problem's human solutions
    labels: list
    found: dict                       # {variant: [technique, ...]}


@dataclass(frozen=True)
class RoundRecord(Record):
    """One live round of Algorithm 1 (denial prompting) for one problem."""
    problem_id: str
    model: str
    mode: str                          # "thread" (Algorithm 1) | "fresh" (benchmarking: stored statements)
    round: int
    state: int | None
    banned: list                       # after this round's draw, oldest first
    candidates: list                   # sorted detected - banned of the previous round's code
    chosen: str | None                 # the new ban, None when no candidate was left
    rng_key: str
    prompt: str                        # the user turn of this round
    reply: str
    input_tokens: int
    output_tokens: int
    finish_reason: str
    code: str
    extraction: str                    # ok | truncated | no_code
    verdict_repo: dict
    verdict_strict: dict
    detector: str
    techniques: list
    detection_status: str
    follows: bool
    novel: list
    novelty: float
    neogauge_term: float               # follows * correct (strict) * novelty
    seconds: float = 0.0


@dataclass
class DataSourceRecord(Record):
    """Where the NeoCoder problems came from and how much of them the run replays."""
    data: str                     # the provenance line (datasets.base.provenance)
    problems: int
    rounds: int
    test_cases: int = column("test cases", 0)
    sample: bool = False          # our bundled sample, not the real release
