"""The judge protocol, the judgement record, prompt templates and token accounting shared by all judges.

Every judge answers ``judge(problem, solution, criteria, pair_id) -> list[Judgement]`` (one judgement per
criterion). Tokens are never estimated: each model call runs inside ``LEDGER.tagged(judge=..., pair=...,
criterion=..., agent=..., phase=...)`` and the verdict's token counts are summed from the ledger records
of its calls. Cache hits are recorded with the tokens of the stored completion, so a warm rerun reports
the same token counts as the cold run and token comparisons stay valid.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

from creval.core.ledger import CallRecord

PROMPTS = Path(__file__).parent / "prompts"
MODEL_KINDS = ("chat", "choice", "sample")


@lru_cache(maxsize=64)
def template(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text().strip()


def render(name: str, **kw) -> str:
    return template(name).format(**kw)


def clip_words(text: str, n: int) -> str:
    """At most ``n`` words (used for stored fragments; replies themselves are bounded by max_tokens)."""
    w = text.split()
    return text.strip() if len(w) <= n else " ".join(w[:n]) + " ..."


def crit_name(c) -> str:
    return c.name if hasattr(c, "name") else str(c["name"])


def crit_def(c) -> str:
    return c.definition if hasattr(c, "definition") else str(c["definition"])


@dataclass
class Turn:
    """One model call of a judge, for transcripts."""
    agent: str                 # PA | SA | CA | judge | Debater-1 ...
    phase: str                 # init | discussion | confidence | verdict | judge
    round: int
    prompt: str                # short summary (the instruction part, not the whole problem text)
    reply: str
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 1
    retrieved_ids: list = field(default_factory=list)
    retrieved: list = field(default_factory=list)
    parsed: object = None

    def to_dict(self) -> dict:
        return asdict(self)


JUDGEMENT_KINDS = ("bool", "scale")


@dataclass
class Judgement:
    """One judge's judgement of one item (``pair_id``) against one criterion.

    ``value`` is a yes/no verdict (``kind="bool"``) or a number on ``scale = (low, high)`` (``kind="scale"``),
    ``None`` when nothing parsed (``state="unparsed"``). ``parsed_by`` names the path that produced it:
    ``text`` | ``text-retry`` | ``logprobs`` | ``majority:<paths>`` | ``unparsed``. ``confidence``: the judge's
    confidence that the value is right (0-1), ``None`` if unknown; ``p_yes``: a stated or log-prob
    probability that the criterion is met. Tokens are summed from the ledger records of its calls.
    Rows also carry ``verdict`` (the yes/no value, ``None`` for a scale) and ``unparsed``, for table readers.
    """
    pair_id: str
    criterion: str
    value: bool | float | None
    judge: str
    model: str
    kind: str = "bool"
    scale: tuple[float, float] | None = None
    confidence: float | None = None
    p_yes: float | None = None
    state: str = "ok"              # ok | unparsed
    parsed_by: str = "text"
    rounds: int = 0
    early_exit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    retries: int = 0               # extra re-asks spent on format failures
    tokens_by: dict = field(default_factory=dict)   # "agent/phase" -> [input, output]
    transcript: list = field(default_factory=list)  # list of Turn dicts
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in JUDGEMENT_KINDS:
            raise ValueError(f"judgement kind must be one of {JUDGEMENT_KINDS}, not {self.kind!r}")
        if self.kind == "scale" and self.scale is None:
            raise ValueError("a scale judgement needs its scale (low, high)")
        if self.value is None:
            self.state, self.parsed_by = "unparsed", "unparsed"

    @property
    def problem_id(self) -> str:
        return self.pair_id.split("::")[0]

    @property
    def unparsed(self) -> bool:
        return self.state == "unparsed"

    @property
    def verdict(self) -> bool | None:
        """The yes/no value (``None`` when unparsed or a scale judgement)."""
        return self.value if self.kind == "bool" else None

    def to_dict(self, with_transcript: bool = False) -> dict:
        d = asdict(self)
        d["scale"] = list(self.scale) if self.scale is not None else None
        d.update(problem_id=self.problem_id, verdict=self.verdict, unparsed=self.unparsed)
        if not with_transcript:
            d.pop("transcript")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Judgement":
        """From a row of ``verdicts.jsonl`` (also rows written before this record, with ``verdict`` /
        ``verdict_path`` / ``unparsed``); columns the runner added beside the record are ignored."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if "value" not in d:
            kw["value"] = None if d.get("unparsed") else d.get("verdict")
        if "parsed_by" not in d and "verdict_path" in d:
            kw["parsed_by"] = d["verdict_path"]
        if kw.get("scale") is not None:
            kw["scale"] = tuple(kw["scale"])
        return cls(**kw)


@runtime_checkable
class Judge(Protocol):
    name: str
    model: object

    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Judgement]:
        """One judgement per criterion, in the order of ``criteria``."""

    def params(self) -> dict:
        """The settings that change its judgements (a run resumes only with the same ones)."""


def verdict_confidence(verdict: bool | None, p_yes: float | None) -> float | None:
    """Confidence that the verdict is right, from a probability that the criterion is met."""
    if verdict is None or p_yes is None:
        return None
    return p_yes if verdict else 1.0 - p_yes


def model_records(records: list[CallRecord]) -> list[CallRecord]:
    return [r for r in records if r.kind in MODEL_KINDS]


def token_summary(records: list[CallRecord]) -> dict:
    """Totals and an ``agent/phase`` breakdown from ledger records (cache hits included)."""
    recs = model_records(records)
    by: dict[str, list[int]] = {}
    for r in recs:
        key = f"{r.tags.get('agent', '?')}/{r.tags.get('phase', '?')}"
        agg = by.setdefault(key, [0, 0])
        agg[0] += r.input_tokens
        agg[1] += r.output_tokens
    return {"input_tokens": sum(r.input_tokens for r in recs), "output_tokens": sum(r.output_tokens for r in recs),
            "calls": len(recs), "cached_calls": sum(r.cached for r in recs), "tokens_by": by}


def split_evenly(total: int, n: int) -> list[int]:
    base, rem = divmod(total, n)
    return [base + (1 if i < rem else 0) for i in range(n)]


def fill_tokens(v: Judgement, records: list[CallRecord]) -> Judgement:
    s = token_summary(records)
    v.input_tokens, v.output_tokens = s["input_tokens"], s["output_tokens"]
    v.calls, v.tokens_by = s["calls"], s["tokens_by"]
    return v


def records_for(records: list[CallRecord], **tags) -> list[CallRecord]:
    return [r for r in records if all(r.tags.get(k) == v for k, v in tags.items())]
