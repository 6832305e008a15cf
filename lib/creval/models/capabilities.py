"""What a model can do, from its spec (``can:``) and, for a server, from ``creval check``'s probe.

```yaml
can:
  logprobs: raw          # raw | processed | server | none: the server's token log-probs (see below)
  completions: true      # it answers /v1/completions (OpenAI's chat models do not: 404)
  echo: true             # /v1/completions echoes the prompt's log-probs (needed for log-likelihoods)
  reasoning: false       # it reasons before answering, hidden or not (OpenAI o-series, gpt-5.x)
  thinking_off: true     # a thinking model's thinking can be switched off per request (vLLM, SGLang)
  adds_document_start: false   # the server puts its own begin-of-text token before a prompt
  echo_ids: true         # it takes a list of prompts and returns token ids (vLLM): echoes align by ids
  top_logprobs: 5        # the most alternatives it lists per token (OpenAI's legacy completions: 5)
  truncates: true        # it drops what does not fit `context` silently (Ollama): longer prompts are refused here
```

Anything the spec does not say is unknown (``None``): the verb is tried, and fails with the server's reason if it
must. A local backend can do everything (log-probs ``raw``). Log-prob kinds (servers.md): ``raw`` is log-softmax of
the unscaled logits (vLLM V1 >= 0.8 by default, llama.cpp's servers, Ollama >= 0.12.11); ``processed`` is after
temperature or penalties (SGLang by default, vLLM < 0.8 or ``--logprobs-mode processed_logprobs``); ``server``:
returned, but what they are is not documented (OpenAI's chat models: servers.md 2.1); ``none``: no log-probs at all
(OpenAI's reasoning models, Ollama < 0.12.11, which ignores the field silently).

:func:`able` answers "can this model do this verb?" with a reason, :func:`refusal` turns a known "no" into one
sentence, and :func:`phase_table` says which phases of the studies can run on a model. Each study declares its own
phases (:class:`ModelPhase`, ``Study(phases=...)``); ``creval check`` and the runners pass them in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from creval.core.errors import CrevalError
from creval.models.spec import ModelSpec

KINDS = ("raw", "processed", "server", "none")
FIELDS = ("logprobs", "completions", "echo", "reasoning", "thinking_off", "adds_document_start", "echo_ids",
          "top_logprobs", "truncates")


@dataclass(frozen=True)
class Capabilities:
    logprobs: str | None = None
    completions: bool | None = None
    echo: bool | None = None
    reasoning: bool | None = None
    thinking_off: bool | None = None
    adds_document_start: bool | None = None
    echo_ids: bool | None = None
    top_logprobs: int | None = None
    truncates: bool | None = None


LOCAL = Capabilities("raw", True, True, False, True, False, True, None, False)


def of(spec: ModelSpec, probed: dict | None = None) -> Capabilities:
    """The model's capabilities: everything for a local backend; for a server what its spec's ``can`` says, the
    gaps filled from ``probed`` (a probe's findings) where given."""
    if not spec.is_server:
        return LOCAL
    can = {**(probed or {}), **{k: v for k, v in (spec.can or {}).items() if v is not None}}
    unknown = set(spec.can or {}) - set(FIELDS)
    if unknown:
        raise CrevalError(f"model {spec.name}: unknown can fields {sorted(unknown)}", f"use {', '.join(FIELDS)}")
    if can.get("logprobs") not in (None, *KINDS):
        raise CrevalError(f"model {spec.name}: can.logprobs must be one of {KINDS}, not {can['logprobs']!r}",
                          "raw: the model's own distribution; processed: after temperature; server: returned, "
                          "not documented; none: no log-probs")
    return Capabilities(**{k: can.get(k) for k in FIELDS})


def logprob_kind(spec: ModelSpec) -> str:
    """What a server's records call its log-probs: ``raw``/``processed``/``none`` where the spec says, else
    ``server`` (nobody said; the kind the records had before specs could say it)."""
    return (spec.can or {}).get("logprobs") or "server"


def able(spec: ModelSpec, verb: str, caps: Capabilities | None = None) -> tuple[bool | None, str]:
    """Whether the model can do ``verb`` (``sample``, ``chat``, ``choice``, ``loglikelihood``): True, False
    (with the reason), or None (not known until tried; the reason says what is unknown)."""
    c = caps or of(spec)
    dropped = set((spec.request or {}).get("drop") or ())
    if verb == "chat":
        if c.reasoning and not spec.reasoning_room and spec.reasoning_effort != "none":
            return None, ("it reasons before answering and the spec gives it no `reasoning_room`: a study's small "
                          "budget may come back empty")
        return True, "every model chats"
    if verb in ("sample", "choice"):
        if "logprobs" in dropped or c.logprobs == "none":
            return False, "it returns no token log-probs"
        if spec.thinking and c.thinking_off is False:
            return False, "it thinks before answering and its thinking cannot be switched off"
        if c.logprobs is None:
            return None, "whether it returns token log-probs is not known (run `creval check`)"
        return True, f"log-probs {c.logprobs}"
    if verb == "loglikelihood":
        if c.completions is False:
            return False, "it has no /completions endpoint (a chat-only model)"
        if c.echo is False:
            return False, "it does not echo the prompt's log-probs on /completions"
        if c.logprobs == "none" or "logprobs" in dropped:
            return False, "it returns no token log-probs"
        if c.echo is None or c.completions is None:
            return None, "whether it echoes prompt log-probs is not known (run `creval check`)"
        return True, "echoed prompt log-probs"
    raise ValueError(f"unknown verb {verb!r}")


VERB_WORDS = {"sample": "sampling with token log-probs", "choice": "choice scoring by log-probs",
              "loglikelihood": "log-likelihoods (perplexity)", "chat": "chat"}


def refusal(spec: ModelSpec, verb: str, caps: Capabilities | None = None) -> str | None:
    """One sentence saying why ``spec`` cannot do ``verb``, or None when it can (or might; or ``spec`` is not a
    model spec: a test's fake model says nothing)."""
    if not isinstance(spec, ModelSpec):
        return None
    ok, why = able(spec, verb, caps)
    return None if ok is not False else f"model {spec.name} cannot do {VERB_WORDS[verb]}: {why}"


def require(spec: ModelSpec, verb: str) -> None:
    """Raise one clear error before any call when the spec says the model cannot do ``verb``."""
    why = refusal(spec, verb)
    if why:
        raise CrevalError(why, "use another model for this phase, or correct the spec's `can:` (see "
                               "`creval check MODEL`)")


ROLES = {"model": "the model under test", "judge": "the study's judge"}


@dataclass(frozen=True)
class ModelPhase:
    """One phase of a study that calls a model, declared on the study (``Study(phases=...)``): its name, whose model
    it asks (a key of :data:`ROLES`) and the verbs it needs; any one of them will do (a judge asked for choice scores
    can be switched to text verdicts: ``verdict_via: text``)."""
    name: str
    role: str
    verbs: tuple[str, ...]

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"phase {self.name!r}: role {self.role!r} is not one of {sorted(ROLES)}")
        unknown = [v for v in self.verbs if v not in VERB_WORDS]
        if not self.verbs or unknown:
            raise ValueError(f"phase {self.name!r}: verbs {list(self.verbs)} must be some of {sorted(VERB_WORDS)}")


Phases = Mapping[str, Sequence[ModelPhase]]
"""Each study's model phases by study name (the study registry builds it: ``studies.registry.model_phases``)."""


def phase_table(spec: ModelSpec, caps: Capabilities, phases: Phases) -> list[tuple[str, str, str, str]]:
    """``(study, phase, runs: yes/no/?, why)`` for every phase of ``phases`` this model could take part in."""
    rows = []
    for study, declared in phases.items():
        for p in declared:
            phase, role, verbs = p.name, p.role, p.verbs
            answers = [(v, *able(spec, v, caps)) for v in verbs]
            bad = [(v, why) for v, ok, why in answers if ok is False]
            unsure = [(v, why) for v, ok, why in answers if ok is None]
            word = "no" if bad and len(bad) == len(verbs) else "?" if bad or unsure else "yes"
            why = "; ".join(f"{VERB_WORDS[v]}: {w}" for v, w in (bad or unsure)) or ", ".join(
                VERB_WORDS[v] for v in verbs)
            rows.append((study, f"{phase} (as {role})", word, why))
    return rows
