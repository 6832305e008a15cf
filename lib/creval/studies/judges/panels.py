"""What the judges study reads (chapter 07c): for each set, one *panel* per criterion, the texts with the
people's scores (texts x people) and each released judge's (texts x prompt wordings) on the same scale, the
prompt each text answers, who wrote it and its length. The data come through each dataset's loader (its fallback
chain); a set whose source holds no judges or no per-rater scores (our bundled samples) gives a panel with a note
saying so and nothing to read.

- HANNA (Chhun et al. 2022, TACL 2024): 1,056 stories x 3 crowd raters, five judges x four prompt wordings, on the
  criteria nearest to creativity (Surprise, Complexity; 1-5).
- TTCW (Chakrabarty et al. 2024): 48 stories x 3 of 11 experts, seven judges, one wording; a rater's score of a
  story is the number of the 14 Torrance tests it says the story passes (0-14), the paper's own aggregate. A judge
  that did not answer all 14 tests of a story has no score for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from creval.core.errors import CrevalError
from creval.datasets import hanna, ttcw
from creval.datasets.base import Dataset
from creval.datasets.rated import fold
from creval.measures.stats.bias import words


@dataclass
class Panel:
    set: str
    criterion: str
    label: str
    source: str
    sample: bool
    ids: list[str] = field(default_factory=list)
    prompt: np.ndarray = field(default_factory=lambda: np.zeros(0, object))
    person: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))     # written by a person
    words: np.ndarray = field(default_factory=lambda: np.zeros(0))
    people: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))      # texts x people
    people_names: list[str] = field(default_factory=list)
    people_kind: str = ""
    judges: dict[str, np.ndarray] = field(default_factory=dict)               # name -> texts x wordings
    unread: dict[str, float] = field(default_factory=dict)
    note: str = ""
    texts: list[str] = field(default_factory=list)           # the stories, to ask a judge of one's own
    prompt_texts: list[str] = field(default_factory=list)    # the prompts' words
    author: np.ndarray = field(default_factory=lambda: np.zeros(0, object))   # who wrote it: a person or a model

    @property
    def readable(self) -> bool:
        return not self.note

    def subset(self, keep: np.ndarray, **changes) -> "Panel":
        """The panel on the texts where ``keep`` holds, only the people who rated any of them."""
        who = np.isfinite(self.people[keep]).any(axis=0)
        take = np.flatnonzero(keep)
        return replace(self, ids=[self.ids[i] for i in take], prompt=self.prompt[keep], person=self.person[keep],
                       author=self.author[keep] if len(self.author) else self.author,
                       words=self.words[keep], people=self.people[np.ix_(keep, who)],
                       people_names=[n for n, w in zip(self.people_names, who) if w],
                       judges={j: m[keep] for j, m in self.judges.items()},
                       texts=[self.texts[i] for i in take] if self.texts else [],
                       prompt_texts=[self.prompt_texts[i] for i in take] if self.prompt_texts else [], **changes)

    def first_prompts(self, k: int, seed: int) -> "Panel":
        """The panel on ``k`` of its prompts picked with ``seed`` (every prompt when ``k`` is 0 or not below their
        number)."""
        prompts = sorted(set(self.prompt.tolist()))
        if not self.readable or not k or k >= len(prompts):
            return self
        picked = set(np.random.default_rng(seed).choice(prompts, k, replace=False).tolist())
        return self.subset(np.array([g in picked for g in self.prompt]))


@dataclass(frozen=True)
class PanelSource:
    dataset: Dataset
    build: Callable[[], list[Panel]]


def hanna_panels() -> list[Panel]:
    long, src = hanna.load()
    creative = [c for c in hanna.CRITERIA if c.creative]
    judged = hanna.load_judges()
    texts, mats, raters = fold(long, [c.column for c in creative])
    ids = list(texts["id"])
    out = []
    for c in creative:
        p = Panel("hanna", c.column, f"{c.label} ({c.lo:g}-{c.hi:g})", str(src), src.is_sample)
        if judged.empty:
            p.note = f"this source holds no LLM judges' scores ({hanna.JUDGE_FILE})"
            out.append(p)
            continue
        mine = judged[judged["criterion"] == c.column]
        for name, g in mine.groupby("judge", sort=False):
            wide = g.pivot(index="id", columns="variant", values="score").reindex(ids)
            p.judges[str(name)] = wide.to_numpy(float)
            p.unread[str(name)] = float(1 - g["parsed"].mean())
        p.ids, p.prompt = ids, texts["prompt"].to_numpy(object)
        p.person, p.words = (texts["kind"] == "person").to_numpy(), words(texts["text"])
        p.author = texts["author"].astype(str).to_numpy(object)
        p.people, p.people_names, p.people_kind = mats[c.column], raters, hanna.SET.rater_kind
        p.texts, p.prompt_texts = list(texts["text"]), list(texts["prompt_text"])
        out.append(p)
    return out


TTCW_LABEL = "Torrance tests passed (0-14)"


def ttcw_panels() -> list[Panel]:
    src = ttcw.source(allow_download=True)
    p = Panel("ttcw", "tests_passed", TTCW_LABEL, str(src), src.is_sample)
    if not ttcw.has_verdicts() or not ttcw.llm_judge_models():
        p.note = "this source holds no experts' verdicts or no LLM judges' replies (the bundled sample has neither)"
        return [p]
    stories = ttcw.load_stories(with_text_only=False).set_index("story_id")
    experts = ttcw.load_expert_counts()
    wide = experts.pivot(index="story_id", columns="rater", values="passes").reindex(stories.index)
    ids = list(stories.index)
    p.ids, p.prompt = [f"ttcw-{k}" for k in ids], stories["group"].to_numpy(object)
    p.person = (stories["source"] == "NewYorker").to_numpy()
    p.author = stories["source"].astype(str).to_numpy(object)
    p.texts = [t if isinstance(t, str) else "" for t in stories["text"]]
    p.words = words([t or None for t in p.texts])
    p.people, p.people_names, p.people_kind = wide.to_numpy(float), [str(c) for c in wide.columns], "expert"
    for name in ttcw.llm_judge_models():
        j = ttcw.load_llm_judge(name).set_index("story_id").reindex(ids)
        full = j["tests"] == 14
        p.judges[name] = np.where(full, j["llm_passes"], np.nan).astype(float)[:, None]
        p.unread[name] = float(1 - full.mean())
    return [p]


PANELS = {"hanna": PanelSource(hanna.DATASET, hanna_panels), "ttcw": PanelSource(ttcw.DATASET, ttcw_panels)}
"""The sets whose released judges chapter 07c reads, by name."""


def panels_of(names: tuple[str, ...], prompts: int = 0, seed: int = 0) -> list[Panel]:
    """Every panel of the sets ``names``, each on ``prompts`` of its prompts picked with ``seed`` (0: all)."""
    unknown = [n for n in names if n not in PANELS]
    if unknown:
        raise CrevalError(f"judges_sets: no set {', '.join(unknown)} with released judges (known: "
                          f"{', '.join(PANELS)})", "name known sets, or leave the default")
    return [p.first_prompts(prompts, seed) for n in names for p in PANELS[n].build()]

