"""Ranges, parts, phases and estimates, and token counts of real prompts (see :mod:`creval.studies.estimate`)."""
from __future__ import annotations

from dataclasses import dataclass, field

TYPICAL = 0.5          # share of a call's max_tokens a reply typically uses: the lower bound of completion tokens
LIST_WORDS = 6         # words of one alternative use as generators write them (the prompt asks for about five)


# -- ranges and parts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Range:
    """A quantity known only within bounds (``lo == hi`` when exact)."""
    lo: float
    hi: float

    def __add__(self, o) -> "Range":
        o = Range.of(o)
        return Range(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __mul__(self, k) -> "Range":
        return Range(self.lo * k.lo, self.hi * k.hi) if isinstance(k, Range) else Range(self.lo * k, self.hi * k)

    __rmul__ = __mul__

    @staticmethod
    def of(x) -> "Range":
        return x if isinstance(x, Range) else Range(x, x)


ZERO = Range(0, 0)


@dataclass(frozen=True)
class Part:
    """The calls of one kind that one model makes in a phase."""
    role: str              # model (under test) | judge
    model: str
    what: str
    calls: Range           # one request each
    prompt: Range          # tokens, all calls together
    completion: Range


@dataclass(frozen=True)
class Local:
    """Work this machine does itself in a phase, with no model call: entailment pairs, embedded texts, tagged
    words, sandboxed programs, creativity-index texts (timed at :data:`creval.studies.estimate.timing.LOCAL_RATES`)."""
    kind: str              # a key of LOCAL_RATES
    what: str
    items: Range


@dataclass(frozen=True)
class Phase:
    """Units that run together; phases of a study run one after another."""
    name: str
    units: int
    depth: Range           # requests one after another in the longest unit
    parts: tuple[Part, ...]
    breadth: int = 1       # requests one unit sends at once at most (a batch inside the unit)
    local: tuple[Local, ...] = ()


@dataclass
class Estimate:
    study: str
    phases: list[Phase]
    notes: list[str] = field(default_factory=list)

    @property
    def parts(self) -> list[Part]:
        return [p for ph in self.phases for p in ph.parts]

    @property
    def local(self) -> list[Local]:
        return [w for ph in self.phases for w in ph.local]

    @property
    def units(self) -> int:
        return sum(ph.units for ph in self.phases)


def calls(role: str, model: str, what: str, n, prompt_each, max_tokens: int, *,
          completion: Range | None = None) -> Part:
    """``n`` calls (a number or a Range) of about ``prompt_each`` prompt tokens and at most ``max_tokens``
    reply tokens each (``completion``: per call, when it is not that)."""
    n = Range.of(n)
    each = completion if completion is not None else Range(TYPICAL * max_tokens, max_tokens)
    return Part(role, model, what, n, n * Range.of(prompt_each), n * each)


def local(kind: str, what: str, n) -> Local:
    """``n`` items (a number or a Range) of local work of ``kind``."""
    return Local(kind, what, Range.of(n))


def choices(role: str, model: str, what: str, n, prompt_each) -> Part:
    """Scored choices: one request each, one reply token counted (as the ledger does)."""
    return calls(role, model, what, n, prompt_each, 1, completion=Range(1, 1))


# -- token counts of real prompts ------------------------------------------------------------------------
def toks(text: str) -> int:
    """Tokens of a text as a server client counts them (about four characters a token)."""
    return max(1, round(len(text) / 4))


def msg_toks(messages) -> int:
    """Prompt tokens of a chat (contents plus a few template tokens per message, as Model.prompt_tokens)."""
    return toks("\n".join(m["content"] for m in messages)) + 4 * len(messages)


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def words(n: int) -> str:
    """Filler text of ``n`` words (the length of a reply not written yet)."""
    return " ".join(["word"] * max(0, int(n)))


def reply_words(max_tokens: int) -> str:
    """A typical reply to a call of ``max_tokens`` (TYPICAL of it; 'word ' is 5 characters, 4 a token)."""
    return words(TYPICAL * max_tokens * 4 / 5)


