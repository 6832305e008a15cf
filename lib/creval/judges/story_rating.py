"""A judge rates a story on one criterion from 1 to 5, or says whether it passes one of TTCW's 14 tests (chapter
07c: the user's own judge placed among HANNA's and TTCW's released judges, issue 64). HANNA's criteria are the two
nearest to creativity, defined in our words after Chhun et al. (2022): Surprise (how far the story's turns are
unexpected) and Complexity (how elaborate its plot and world are). A TTCW test is shown as the released data words
it (``ttcw.load_tests``: what the test looks for, then its question, Chakrabarty et al. 2024), in our frame, with a
direct answer asked for (the paper's judges reasoned first: a cheaper reading, documented in docs/judges.md).

On a local model with raw log-probs the rating is the expected value of the model's distribution over the five
answers (:func:`creval.judges.rubric.expected_scores`: never unparsed); on a server the reply is parsed, with up
to ``reasks`` re-asks quoting the form, then ``None`` (state ``unparsed``), never a default
(:func:`creval.judges.rubric.parsed_scores`). A test's answer is 1 (passes) or 0 the same way, its expected value
on a local model the probability that it passes."""
from __future__ import annotations

from typing import Sequence

from creval.judges.base import render, template
from creval.judges.rubric import expected_scores, parsed_scores

SCALE = (1, 2, 3, 4, 5)
PASSES, VERDICT = "Passes", (0, 1)
ASPECTS = {"surprise": ("Surprise", "how far its events, ideas or ending are unexpected, yet make sense once read"),
           "complexity": ("Complexity", "how elaborate its plot, characters and world are, beyond a single line "
                                        "of events")}


def messages(prompt: str, story: str, criterion: str) -> list[dict]:
    aspect, definition = ASPECTS[criterion]
    return [{"role": "system", "content": template("story_rating_system")},
            {"role": "user", "content": render("story_rating_user", prompt=prompt, story=story, aspect=aspect,
                                               definition=definition)}]


def ttcw_messages(story: str, test: dict) -> list[dict]:
    """One TTCW test (a ``ttcw.load_tests`` row: ``category``, ``background``, ``question``) put to a judge."""
    return [{"role": "system", "content": template("ttcw_test_system")},
            {"role": "user", "content": render("ttcw_test_user", story=story, category=test["category"],
                                               background=test["background"], question=test["question"])}]


def rate(model, items: Sequence[tuple[str, str, str]], reasks: int = 2) -> list[dict]:
    """Each ``(prompt, story, criterion)`` rated by ``model``: ``{score, state, tries, via}`` (score None and
    state ``unparsed`` where no reply could be read)."""
    return _read(model, [(messages(p, s, c), ASPECTS[c][0], SCALE) for p, s, c in items], reasks)


def pass_tests(model, items: Sequence[tuple[str, dict]], reasks: int = 2) -> list[dict]:
    """Each ``(story, test)`` answered by ``model``: ``{score, state, tries, via}``, score 1 (passes), 0, the
    probability that it passes (read from log-probs), or None (``unparsed``)."""
    return _read(model, [(ttcw_messages(s, t), PASSES, VERDICT) for s, t in items], reasks)


def _read(model, asks: list[tuple], reasks: int) -> list[dict]:
    if getattr(model, "logprob_kind", "raw") == "raw":
        return [{"score": ev, "state": "ok" if ev is not None else "unparsed", "tries": 0, "via": "logprobs"}
                for ev, _ in expected_scores(model, asks)]
    return [{"score": s, "state": "ok" if s is not None else "unparsed", "tries": t, "via": "parsed"}
            for s, t in parsed_scores(model, asks, reasks)]
