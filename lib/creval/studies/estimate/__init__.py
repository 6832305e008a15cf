"""What a run will cost before any call: units, calls, tokens, money and wall time, per study and model role.

One small pure function per study (``estimate(cfg)`` in its package's ``estimate.py``, beside the run it prices;
this package is the toolkit they share) reads only the study's Config (and, where a key means
"all" or a dataset may hold fewer items than asked, the dataset's size, read cheaply from its loader) and
returns an :class:`Estimate`: the study's phases (run one after another), each with its independent units,
the longest chain of requests inside one unit (``depth``) and its calls (:class:`Part`, one per model and kind
of call). What the counts mean:

- **calls** are what the ledger counts (:mod:`creval.core.ledger`) and what a server receives: one request per
  sample index, chat turn, scored choice or log-likelihood. Calls the call cache serves within the run (the
  same prompt asked again) are left out, except where two units may ask it at the same moment (upper bound).
- a **range** ``lo..hi`` where a chain's length depends on the model: the step budget and STOP votes of step-wise
  generation, format re-asks, the log-prob fallback of a verdict, a discussion's early exit, merge-sort
  comparisons, a list that comes back short.
- **prompt tokens** come from the real prompt templates rendered for a few real items (characters / 4, as a
  server client counts them; a local tokenizer differs a little); **completion tokens** from each call's
  ``max_tokens`` (the upper bound) and :data:`TYPICAL` of it (the lower bound).
- **reasoning tokens** (:func:`reasoning`): a reasoning model's hidden reasoning before each answer, up to its
  spec's ``reasoning_room`` a call; billed as output.
- **cost** from each model spec's ``price_in``/``price_out`` (USD per 1M tokens), reasoning included.
- **wall time** (:func:`wall`): per phase the longer of the longest unit's chain and the requests spread over
  the endpoint's in-flight limit (never more at once than the units can send), at ``latency + completion /
  tokens_per_s`` a request; the speed comes from the command's flags, else the spec's
  ``extra: {latency_s, tokens_per_s}``, else a local model's measured speed (``creval throughput``); plus the
  phase's **local work** (:class:`Local`: entailment pairs, embeddings, tagging, the creativity index, sandboxed
  programs) at this machine's measured rates (:data:`LOCAL_RATES`), which no server speeds up.

The estimate assumes a server (the OpenAI-compatible path); on a local model a few judges score choices by
log-probs instead of parsing text (fewer, shorter calls), so its figures are an upper bound there.
"""
from __future__ import annotations

from typing import Callable

from creval.studies.config import Config
from creval.studies.estimate.parts import ZERO, Estimate, Local, Part, Phase, Range
from creval.studies.estimate.sizes import problems
from creval.studies.estimate.timing import LOCAL_RATES, Speed, cost, local_seconds, phase_wall, reasoning, speed, wall
from creval.studies.registry import STUDIES, get_study

__all__ = ["LOCAL_RATES", "ZERO", "Estimate", "Local", "Part", "Phase", "Range", "Speed", "cost", "estimate",
           "estimators", "local_seconds", "phase_wall",
           "problems", "reasoning", "speed", "wall"]


def estimators() -> dict[str, Callable[[Config], Estimate] | None]:
    """Each declared study's estimator (its ``Study.estimate`` or its package's ``estimate.py``; None: none)."""
    return {name: s.estimator() for name, s in STUDIES.items()}


def estimate(cfg: Config) -> Estimate:
    """What a run of ``cfg``'s study will cost; a study that declares no estimator gets an empty estimate whose
    note says so."""
    fn = get_study(cfg.study).estimator()
    if fn is None:
        return Estimate(cfg.study, [], [f"no estimate: the {cfg.study} study declares none (add estimate(cfg) in "
                                        f"its package's estimate.py)"])
    return fn(cfg)
