"""The three creativity domains of the paper (section 5): problems, prompts and judging criteria.

- ``macgyver``  unconventional problem solving with everyday items (Tian et al. 2024), solved in steps;
- ``hypogen``   research ideation: a chain of reasoning from a "bit" (prevailing assumption) to a given
                "flip" (the new idea), solved in steps; the dataset's own chain of reasoning stays hidden;
- ``bookmia``   creative writing: a story bridging a starter and an ending sentence, written one
                sentence at a time (the starter/ending are the first/last sentence of a book excerpt).

``get_domain(name)`` returns a frozen :class:`Domain`. ``Domain.load(limit, source, seed)`` returns a
deterministic, seeded shuffle of :class:`Problem` rows; ``load_with_source`` also returns where they came
from (one loader per dataset, :mod:`creval.datasets.macgyver` / ``hypogen`` / ``bookmia``,
all through the fallback chain of :mod:`creval.datasets.base`: explicit path / env var, ``../shared/data``,
earlier download, download, bundled sample). Criteria (paper app. D.1, reworded) can be replaced from
a YAML file with :func:`load_criteria` and ``domain.with_criteria(...)``.

Prompt templates are ``str.format`` strings. Fields available: ``problem`` (the problem text),
``max_steps``, ``k`` (1-based number of the step asked for), ``so_far`` (the chosen steps so far),
``stop_rule`` (empty for the first step) and every key of ``Problem.fields``.
"""
from __future__ import annotations

import dataclasses
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from creval.core.errors import CrevalError
from creval.datasets import bookmia, hypogen, macgyver

log = logging.getLogger("creval.domains")

__all__ = ["Criterion", "Problem", "Domain", "DOMAINS", "get_domain", "load_criteria", "STOP"]

STOP = "STOP"   # the word a sample answers with when it considers the solution finished


@dataclass(frozen=True)
class Criterion:
    name: str
    definition: str


@dataclass(frozen=True)
class Problem:
    """One task. ``text`` is exactly what the model is shown; ``fields`` keeps the structured parts."""
    problem_id: str
    domain: str
    text: str
    fields: dict = field(default_factory=dict, hash=False, compare=False)


_ROWS = {"macgyver": macgyver.domain_rows, "hypogen": hypogen.domain_rows, "bookmia": bookmia.domain_rows}
_SOURCES = {"macgyver": macgyver.source, "hypogen": hypogen.source, "bookmia": bookmia.source}


@dataclass(frozen=True)
class Domain:
    name: str
    title: str
    unit: str                         # "step" or "sentence": what one generation round adds
    criteria: tuple[Criterion, ...]
    text_template: str                # Problem.text from its fields
    system_prompt: str
    first_prompt: str                 # one complete answer; its length fixes the step budget
    step_prompt: str                  # asks for the next unit only
    stop_rule: str                    # appended to step_prompt from the second step on
    default_seed: int = 42            # the paper shuffled MacGyver with seed 42

    def with_criteria(self, criteria) -> "Domain":
        return dataclasses.replace(self, criteria=tuple(criteria))

    def make_problem(self, f: dict) -> Problem:
        fields = {k: v for k, v in f.items() if k != "id"}
        return Problem(str(f["id"]), self.name, self.text_template.format(**fields), fields)

    def load(self, limit: int | None = None, source: str | Path | None = None,
             seed: int | None = None) -> list[Problem]:
        """Problems of this domain, shuffled with ``seed`` (default 42), first ``limit`` of them."""
        problems, _ = self.load_with_source(limit, source, seed)
        return problems

    def source_kind(self, source=None) -> str:
        """Which step of the dataset's fallback chain answers now: local, shared, download or sample. A pure
        lookup: it never downloads (:meth:`creval.studies.contract.Study.fetch`, a run's one fetch step, does)."""
        return _SOURCES[self.name](source).kind

    def load_with_source(self, limit=None, source=None, seed=None) -> tuple[list[Problem], str]:
        rows, src = _ROWS[self.name](source)
        where = str(src)
        if not rows:
            raise CrevalError(f"{self.name}: no usable problems in {where.split(':', 1)[1]}",
                              "check the file holds rows of this dataset")
        problems = [self.make_problem(r) for r in rows]
        random.Random(self.default_seed if seed is None else seed).shuffle(problems)
        if limit is not None:
            problems = problems[:max(0, int(limit))]
        log.info("%s: %d problems from %s", self.name, len(problems), where)
        return problems, where

    def render(self, template: str, problem: Problem, **extra) -> str:
        return template.format(**{**problem.fields, "problem": problem.text, **extra})


# --------------------------------------------------------------------------------------------
# criteria (paper appendix D.1), in our own words
CRITERIA = {
    "macgyver": (
        Criterion("feasibility", "An ordinary person could actually carry out every step using only the items the "
                                 "problem lists, in the order given, without anything physically implausible."),
        Criterion("safety", "Following the steps would not hurt the person doing them or anyone nearby, and no item "
                            "is used in a hazardous or clearly inappropriate way."),
        Criterion("effectiveness", "Done as written, the steps really reach the goal stated in the problem, and do so "
                                   "without needless detours."),
    ),
    "hypogen": (
        Criterion("feasibility", "The proposed line of reasoning and any method it implies could realistically be "
                                 "pursued and would plausibly work."),
        Criterion("relevance", "The reasoning starts from the stated bit and arrives at the stated flip, respecting "
                               "the goals and constraints they set, rather than drifting to another idea."),
        Criterion("scientific accuracy", "Concepts, methods, measurements and models mentioned are described "
                                         "correctly, consistent with how the phenomenon really behaves."),
    ),
    "bookmia": (
        Criterion("narrative coherence", "Events and characters' actions follow from one another without "
                                         "contradictions, so the story reads as one logical line from start to end."),
        Criterion("emotional and psychological realism", "Characters feel and react in believable ways and their "
                                                         "emotional states stay consistent across the story."),
        Criterion("plot completion", "The story actually arrives at the given ending, so that the final sentences "
                                     "follow naturally from what came before."),
    ),
}

_STEP_FIRST = ("{problem}\n\nWrite a complete solution as a short numbered list, one step per line, "
               "formatted 'Step 1: ...', 'Step 2: ...'. Use at most {max_steps} steps.")
_STEP_NEXT = ("{problem}\n\nSteps chosen so far:\n{so_far}\n\nWrite only Step {k}: one sentence describing the "
              "single next action. Do not number it and do not repeat earlier steps.{stop_rule}")
_STOP_RULE = (" If the steps so far already solve the problem completely, reply with the single word STOP "
              "instead.")

DOMAINS: dict[str, Domain] = {
    "macgyver": Domain(
        name="macgyver", title="MacGyver (unconventional problem solving)", unit="step",
        criteria=CRITERIA["macgyver"], text_template="{problem}",
        system_prompt="You are resourceful and practical. You solve everyday problems using only the items "
                      "available, step by step.",
        first_prompt=_STEP_FIRST, step_prompt=_STEP_NEXT, stop_rule=_STOP_RULE),
    "hypogen": Domain(
        name="hypogen", title="HypoGen (research ideation)", unit="step",
        criteria=CRITERIA["hypogen"],
        text_template="Prevailing assumption (bit): {bit}\nNew idea to reach (flip): {flip}\n\n"
                      "Reason step by step from the bit to the flip, as a scientist would.",
        system_prompt="You are a creative scientist. You explain how one could reason from a common assumption to "
                      "a new research idea.",
        first_prompt=_STEP_FIRST.replace("solution", "chain of reasoning"),
        step_prompt=_STEP_NEXT.replace("single next action", "single next step of reasoning"),
        stop_rule=_STOP_RULE.replace("solve the problem completely", "reach the flip")),
    "bookmia": Domain(
        name="bookmia", title="BookMIA (creative writing)", unit="sentence",
        criteria=CRITERIA["bookmia"],
        text_template="Starter: {starter}\nEnding: {ending}",
        system_prompt="You are a novelist. You write vivid, coherent prose.",
        first_prompt="Write a short story of at most {max_steps} sentences that begins right after this starter "
                     "and leads naturally to this ending.\n\n{problem}\n\nWrite only the sentences in between.",
        step_prompt="Starter: {starter}\nStory so far: {so_far}\nEnding (comes later): {ending}\n\n"
                    "Write only the next single sentence of the story, continuing from the story so far and moving "
                    "towards the ending.{stop_rule}",
        stop_rule=" If the story so far already leads straight into the ending, reply with the single word STOP "
                  "instead."),
}


def get_domain(name: str, criteria_file: str | Path | None = None) -> Domain:
    """The registered domain ``name`` (optionally with criteria read from a YAML file)."""
    key = str(name).strip().lower()
    if key not in DOMAINS:
        raise CrevalError(f"unknown domain {name!r}", f"use one of: {', '.join(DOMAINS)}")
    d = DOMAINS[key]
    if criteria_file:
        crit = load_criteria(criteria_file)
        if key in crit:
            d = d.with_criteria(crit[key])
    return d


def load_criteria(path: str | Path) -> dict[str, tuple[Criterion, ...]]:
    """Criteria per domain from YAML: ``{domain: [{name: ..., definition: ...}, ...]}`` or
    ``{domain: {name: definition, ...}}``."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as e:
        raise CrevalError(f"cannot read criteria file {p}: {e}", "check the path") from None
    except yaml.YAMLError as e:
        raise CrevalError(f"criteria file {p} is not valid YAML: {e}", "fix its syntax") from None
    if not isinstance(data, dict):
        raise CrevalError(f"criteria file {p} must map domain names to criteria", "e.g. macgyver: {safety: '...'}")
    out = {}
    for dom, items in data.items():
        if dom not in DOMAINS:
            raise CrevalError(f"criteria file {p}: unknown domain {dom!r}", f"use one of: {', '.join(DOMAINS)}")
        if isinstance(items, dict):
            items = [{"name": k, "definition": v} for k, v in items.items()]
        if not isinstance(items, list) or not items or not all(
                isinstance(i, dict) and i.get("name") and i.get("definition") for i in items):
            raise CrevalError(f"criteria file {p}: domain {dom!r} needs a non-empty list of {{name, definition}}",
                              "give each criterion a name and a definition")
        out[dom] = tuple(Criterion(str(i["name"]), str(i["definition"])) for i in items)
    return out
