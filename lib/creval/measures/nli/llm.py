"""Entailment asked of a chat model (the paper's GPT-4o route, app. C.2): the label read from the log-probs of
the three label words, never from free text; a pair whose label words have no log-prob is unparsed and stops the
run with one sentence. Named ``llm:<registered model>`` (:func:`llm_model` is the one parse of that name)."""
from __future__ import annotations

import math

from creval.core.errors import CrevalError
from creval.measures.nli.base import CachedNLI, Label
from creval.models.gather import UNLOCKED
from creval.models.records import no_evidence

LLM_CHOICES = ("entailment", "neutral", "contradiction")
_LLM_SYSTEM = ("You are a careful annotator of natural-language inference. Given two statements, you decide "
               "how the first one (the premise) relates to the second one (the hypothesis). Reply with exactly "
               "one word.")
_LLM_USER = ("Premise: {premise}\n"
             "Hypothesis: {hypothesis}\n\n"
             "If the premise is true, must the hypothesis also be true?\n"
             "- entailment: yes, the premise guarantees the hypothesis\n"
             "- contradiction: no, the premise rules the hypothesis out\n"
             "- neutral: the premise neither guarantees nor rules it out\n"
             "Answer with one word: entailment, neutral or contradiction.")
LLM_PROMPT_VERSION = 1


def llm_messages(premise: str, hypothesis: str) -> list[dict]:
    """The chat messages :class:`LLMNLI` sends for one directed pair."""
    return [{"role": "system", "content": _LLM_SYSTEM},
            {"role": "user", "content": _LLM_USER.format(premise=premise, hypothesis=hypothesis)}]


class LLMNLI(CachedNLI):
    """Entailment read from a chat model's log-probs of the three label words; the argmax wins (the model's own
    calls take the lock they need)."""
    lock = UNLOCKED

    def __init__(self, model, *, use_cache: bool = True):
        self.model = model
        self.name = llm_nli(getattr(model, "name", type(model).__name__))
        self.use_cache = use_cache

    def _identity(self) -> dict:
        spec = getattr(self.model, "spec", None)
        ident = spec.identity() if spec is not None and hasattr(spec, "identity") else {"name": self.name}
        return {"backend": "llm", "model": ident, "prompt_version": LLM_PROMPT_VERSION}

    def _compute(self, pairs: list[tuple[str, str]]) -> list[Label]:
        scores = self.model.choice_logprobs_many([(llm_messages(p, h), list(LLM_CHOICES)) for p, h in pairs])
        bad = [s for s in scores if no_evidence(s.logprobs)]
        if bad:     # a label word without a log-prob: the pair is unparsed, never a label (issues 32 and 45)
            none = sum(1 for s in bad if not any(v is not None and math.isfinite(v) for v in s.logprobs.values()))
            raise CrevalError(f"NLI model {self.name} left a label of {'/'.join(LLM_CHOICES)} without a log-prob "
                              f"in {len(bad)} of {len(pairs)} pairs ({none} with no label scored: the server "
                              "returned no log-probs, or its replies start elsewhere; "
                              f"{len(bad) - none} with some labels missing from the log-probs it listed), so "
                              "the labels cannot be compared and entailment cannot be read from it",
                              "use a model whose server returns log-probs (`creval check MODEL`), or another NLI "
                              "backend (minilm-sick, deberta)")
        out = []
        for s in scores:
            best = max(LLM_CHOICES, key=lambda c: float(s.logprobs.get(c, float("-inf"))))
            out.append(Label(best))
        return out

LLM_PREFIX = "llm:"     # an NLI name ``llm:<registered model name>`` asks that model (:class:`LLMNLI`)


def llm_model(name: str) -> str:
    """The registered model an ``llm:<model>`` NLI name asks; "" for every other backend (the one parse of it)."""
    name = str(name).strip()
    return name[len(LLM_PREFIX):] if name.startswith(LLM_PREFIX) else ""


def llm_nli(model: str) -> str:
    """The NLI name that asks ``model`` for entailment (:func:`llm_model`'s inverse)."""
    return f"{LLM_PREFIX}{model}"
