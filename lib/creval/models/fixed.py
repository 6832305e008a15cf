"""Released outputs as a model: a named set of texts keyed by item, that answers from its table and makes no
call (MacGyver's benchmarked solvers, TTCW's story writers, any frozen model output a paper released).

A :class:`FixedOutputs` stands where a model under test stands for every measure that reads a model's answers
without asking for new ones (creativity index, distinct-n, self-BLEU, embeddings, a judge over its answers).
It cannot sample, chat or score log-probabilities: asking it to is a :class:`CrevalError`, never a silent
empty answer. It is not a registry spec (a spec names weights or an endpoint to call); the comparison study
builds these from the dataset loaders (:mod:`creval.studies.compare.released`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from creval.core.errors import CrevalError

KIND = "fixed"      # the spec kind recorded for released outputs (``model_kind`` beside a real model's backend)


@dataclass(frozen=True)
class FixedOutputs:
    """``name``'s released texts: ``texts[item]`` is the list of its answers to that item (often one)."""
    name: str
    texts: Mapping[str, tuple[str, ...]]
    source: str = ""          # where the texts were read (a file, or the illustrative sample)
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_rows(cls, name: str, rows: Iterable[tuple[str, str]], source: str = "", **meta) -> "FixedOutputs":
        """From ``(item, text)`` pairs (several texts of one item keep their order; empty texts dropped)."""
        out: dict[str, list[str]] = {}
        for item, text in rows:
            if str(text or "").strip():
                out.setdefault(str(item), []).append(str(text).strip())
        if not out:
            raise CrevalError(f"released outputs {name!r}: no text", "give at least one (item, text) pair")
        return cls(name, {k: tuple(v) for k, v in out.items()}, source, dict(meta))

    @property
    def items(self) -> list[str]:
        return sorted(self.texts)

    def answers(self, item: str) -> tuple[str, ...]:
        """The texts of ``item`` (empty when this model has none there)."""
        return self.texts.get(str(item), ())

    def answer(self, item: str) -> str:
        """The first text of ``item``; a CrevalError when there is none."""
        got = self.answers(item)
        if not got:
            raise CrevalError(f"released outputs {self.name!r} have no answer to {item!r}",
                              "compare only on items every model answered (see .items)")
        return got[0]

    def describe(self) -> dict:
        """What a manifest records of it (in place of a model spec)."""
        return {"name": self.name, "kind": KIND, "source": self.source, "items": len(self.texts),
                "texts": sum(len(v) for v in self.texts.values()), **self.meta}

    def _no_calls(self, verb: str):
        raise CrevalError(f"{self.name!r} is a set of released outputs: it cannot {verb}",
                          "measure it with measures that need no new samples, or name a registered model")

    def sample(self, *a, **k):
        self._no_calls("sample")

    def chat(self, *a, **k):
        self._no_calls("chat")

    def choice_logprobs(self, *a, **k):
        self._no_calls("score choices")

    def loglikelihood(self, *a, **k):
        self._no_calls("score a text's likelihood")
