"""The technique detectors that ask an LLM (NeoCoder's technique detection with a judge model).

- :class:`LLMDetector`: a registered model lists the techniques of a code (temperature 0, cached per code by
  the model cache, bounded re-asks then ``unparsed``); registered as the judge ``techniques``
  (:func:`creval.judges.registry.make_judge`).
- :class:`HybridDetector`: the static detector for the syntactic names in
  :data:`~creval.measures.techniques.STATIC_NAMES`, the LLM for the rest.

The vocabulary, the reply parser, :class:`~creval.measures.techniques.Detection` and the static (AST)
detector are pure and live in :mod:`creval.measures.techniques`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from creval.measures.techniques import STATIC_NAMES, VOCABULARY, Detection, StaticDetector, parse_reply

PROMPT = Path(__file__).with_name("prompts") / "neocoder_techniques.txt"
REASK = Path(__file__).with_name("prompts") / "neocoder_techniques_reask.txt"


@dataclass
class LLMDetector:
    """A registered model lists the techniques (temperature 0; the model's cache makes it once per code).
    A reply with no vocabulary name, or with more than ``max_names`` (small models parrot the whole list back),
    is re-asked (``retries`` times, with the reply and a reminder in the thread); after that the detection is
    ``unparsed``."""
    model: object
    retries: int = 2
    max_tokens: int = 96
    max_names: int = 10       # a reply naming more is the vocabulary parroted back: re-asked, then unparsed
    name: str = "llm"

    def _messages(self, code: str) -> list[dict]:
        system = PROMPT.read_text().replace("{techniques}", "\n".join(f"- {t}" for t in VOCABULARY))
        return [{"role": "system", "content": system}, {"role": "user", "content": code}]

    def detect(self, codes: Sequence[str]) -> list[Detection]:
        convs = [self._messages(c) for c in codes]
        out: list[Detection | None] = [None] * len(codes)
        todo = list(range(len(codes)))
        for attempt in range(self.retries + 1):
            if not todo:
                break
            replies = self.model.chat_many([convs[i] for i in todo], temperature=0.0, max_tokens=self.max_tokens,
                                           seed=attempt)
            nxt = []
            for i, rep in zip(todo, replies):
                d = parse_reply(rep.text)
                if len(d.techniques) > self.max_names:
                    d = Detection((), "unparsed", d.unknown, rep.text)
                d = Detection(d.techniques, d.status, d.unknown, rep.text, f"{self.name}:{self.model.name}")
                out[i] = d
                if d.status == "unparsed" and attempt < self.retries:
                    convs[i] = convs[i] + [{"role": "assistant", "content": rep.text},
                                           {"role": "user", "content": REASK.read_text()}]
                    nxt.append(i)
            todo = nxt
        return out  # type: ignore[return-value]


@dataclass
class HybridDetector:
    """Static answers for :data:`STATIC_NAMES`; the LLM's answers for the other names."""
    static: StaticDetector
    llm: LLMDetector
    name: str = "hybrid"

    def detect(self, codes: Sequence[str]) -> list[Detection]:
        s, by_llm = self.static.detect(codes), self.llm.detect(codes)
        out = []
        for a, b in zip(s, by_llm):
            if a.status == "not_parsable":
                out.append(Detection((), "not_parsable", detector=self.name))
                continue
            names = list(a.techniques) + [t for t in b.techniques if t not in STATIC_NAMES and t not in a.techniques]
            out.append(Detection(tuple(names), "ok" if names else "none", b.unknown, b.raw, self.name))
        return out
