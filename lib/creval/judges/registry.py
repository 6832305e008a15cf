"""Every LLM judge by name, each with its kind and the parameters it declares.

Kinds: ``criteria`` judges answer yes/no per convergent criterion (``judge(text, solution, criteria, pair_id)``);
``rubric`` scores texts on a domain rubric (Rethinking, appendix G); ``novelty`` compares two answers (chapter
04's pairwise ranking); ``aut-lists`` scores or ranks lists of AUT uses and ``aut-pointwise`` scores one use
at a time (Rabeyah et al.); ``techniques`` lists the programming techniques of code (NeoCoder's detector).

:func:`make_judge` is strict: a parameter the named judge does not declare is an error that names it
(a misspelt or misplaced setting never silently falls back to a default). One concept has one name
across judges (``max_rounds``, ``word_limit``, ``retries``, ``verdict_via``, ``seed``). A caller holding
one settings dict for several judges (a chapter, the CLI) picks each judge's share with
:func:`judge_settings`, which rejects only keys that no judge declares.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from creval.core.errors import CrevalError
from creval.judges.chateval import ChatEvalJudge
from creval.judges.novelty import NoveltyJudge
from creval.judges.retrieval import RetrievalJudge
from creval.judges.single import SingleJudge
from creval.judges.store import FragmentStore
from creval.judges.techniques import LLMDetector
from creval.models.embeddings import DEFAULT, Embedder

_DISCUSSION = ("word_limit", "max_rounds", "retries", "verdict_via", "seed", "tokens_per_word")


@dataclass(frozen=True)
class JudgeInfo:
    name: str
    params: tuple[str, ...]          # the keyword parameters it takes (defaults live on the judge class)
    summary: str
    build: Callable                  # (model, store_dir, **params) -> judge
    kind: str = "criteria"           # criteria | rubric | novelty | aut-lists | aut-pointwise | techniques


def _retrieval(model, store_dir, embedder=None, **params):
    return RetrievalJudge(model, store=FragmentStore(store_dir, Embedder(embedder or DEFAULT)), **params)


def _chateval(model, store_dir, **params):
    return ChatEvalJudge(model, **params)


def _single(mode):
    def build(model, store_dir, **params):
        return SingleJudge(model, mode, **params)
    return build


def _bound(module: str, attr: str):
    """A judge that is a function of the model: ``make_judge`` binds the model and the parameters."""
    def build(model, store_dir, **params):
        return partial(getattr(importlib.import_module(module), attr), model, **params)
    return build


def _novelty(model, store_dir, **params):
    return NoveltyJudge(model, **params)


def _techniques(model, store_dir, **params):
    return LLMDetector(model, **params)


JUDGES: dict[str, JudgeInfo] = {j.name: j for j in [
    JudgeInfo("retrieval", _DISCUSSION + ("k", "j", "l", "threshold", "init_words", "fragment_words", "confidence_via",
                                          "embedder"),
              "three analysts discuss over retrieved fragments, stop early when confident (the paper's judge)",
              _retrieval),
    JudgeInfo("chateval", _DISCUSSION, "three analysts discuss with the full history for max_rounds rounds", _chateval),
    *[JudgeInfo(m, ("retries", "verdict_via", "seed", "reason_words"), f"one call per criterion ({m})", _single(m))
      for m in ("zero-shot", "few-shot", "cot")],
    JudgeInfo("rubric", ("analysis_tokens", "reasks", "samples", "seed"),
              "analyses a text, then scores each rubric aspect as an expected value over label log-probs",
              _bound("creval.judges.rubric", "rubric_judge"), "rubric"),
    JudgeInfo("novelty", ("domain", "definition"), "which of two answers is more novel, asked in both orders",
              _novelty, "novelty"),
    JudgeInfo("aut-lists", ("retries", "via", "impute_share", "seed", "progress"),
              "scores (1-5) or ranks a list of alternative uses in one call",
              _bound("creval.judges.aut", "judge_lists"), "aut-lists"),
    JudgeInfo("aut-pointwise", ("via", "retries", "seed"), "scores one alternative use at a time (1-5)",
              _bound("creval.judges.aut", "pointwise_scores"), "aut-pointwise"),
    JudgeInfo("techniques", ("retries", "max_tokens", "max_names"), "lists the programming techniques a code uses",
              _techniques, "techniques"),
]}


def judge_names(kind: str | None = "criteria") -> tuple[str, ...]:
    """The judges of one kind (default: the convergent criteria judges), or all with ``kind=None``."""
    return tuple(n for n, j in JUDGES.items() if kind is None or j.kind == kind)


def judge_info(name: str) -> JudgeInfo:
    if name not in JUDGES:
        raise CrevalError(f"unknown judge {name!r}", f"use one of: {', '.join(JUDGES)}")
    return JUDGES[name]


def make_judge(name: str, model, *, store_dir: str | Path | None = None, **params):
    """The judge ``name`` over ``model`` with ``params`` (``None`` values mean the judge's default).

    ``store_dir``: where a judge that keeps files (the retrieval judge's fragments) keeps them."""
    info = judge_info(name)
    unknown = [k for k in params if k not in info.params]
    if unknown:
        raise CrevalError(f"judge {name!r} takes no parameter {', '.join(map(repr, unknown))}",
                          f"its parameters are {', '.join(info.params)}; to share one settings dict between judges "
                          f"pass judge_settings({name!r}, settings)")
    return info.build(model, store_dir, **{k: v for k, v in params.items() if v is not None})


def judge_settings(name: str, settings: dict) -> dict:
    """The part of a shared ``settings`` dict that judge ``name`` declares (``None`` values dropped).

    A key that no judge declares is an error naming it, so a typo is caught even where it is not used."""
    info = judge_info(name)
    everywhere = {p for j in JUDGES.values() if j.kind == info.kind for p in j.params}
    unknown = [k for k in settings if k not in everywhere]
    if unknown:
        raise CrevalError(f"no judge takes the setting {', '.join(map(repr, unknown))}",
                          f"judge settings are: {', '.join(sorted(everywhere))}")
    return {k: v for k, v in settings.items() if k in info.params and v is not None}
