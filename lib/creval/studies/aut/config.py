"""Parameters of chapter 07, LLM agreement on the Alternative Uses Test (Rabeyah et al. 2024).

Generators are ``models``; judges are ``models`` plus ``judge_model`` (each judge judges every generator,
itself included, as in the paper). ``aut_items``/``aut_objects``/``aut_cambridge_items`` mean what they mean in
chapter 04 (human-rated responses drawn the same way).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.datasets import aut as aut_data
from creval.studies.config import BootstrapConfig, JudgeConfig, identity


@dataclass(frozen=True)
class AutConfig(JudgeConfig, BootstrapConfig):
    """Chapter 07."""
    study: ClassVar[str] = "aut"
    renamed: ClassVar[Mapping[str, str]] = {"cambridge_items": "aut_cambridge_items"}   # old names, still accepted
    aut_things: tuple[str, ...] = identity(("fork", "paperclip"))   # objects whose uses are generated (paper: fork, wallet, soap, cotton swab, paperclip)
    aut_per_level: int = identity(3)   # uses asked per object and creativity level (paper: 5)
    aut_settings: tuple[str, ...] = identity(("comprehensive", "segmented"))   # one list per object, or groups with one use per cell (paper: both)
    aut_methods: tuple[str, ...] = identity(("score", "rank"))   # scoring 1-5 and ranking (paper: both)
    aut_forceful_turns: int = identity(4)   # escalating follow-ups for the highly creative level (paper: 4)
    aut_gen_temperature: float = identity(0.7)   # sampling temperature of the generators (paper: not given)
    aut_gen_max_tokens: int = identity(96)   # token limit of one generation turn
    aut_retries: int = identity(2)   # re-asks for missing items or a short list before unparsed
    aut_verdict_via: str = identity("text+logprobs")   # scores still missing after re-asks come from the log-probs of 1..5 (text: unparsed)
    aut_items: int = identity(16)   # Ocsai-1 main2_test responses with human originality ratings
    aut_objects: int = identity(2)   # AUT objects they are spread over (the judge ranks within an object)
    aut_cambridge_items: int = identity(60)   # Cambridge AUT responses (read at run time only; CC BY-NC-ND)
    aut_baselines_full: bool = identity(True)   # semantic distance and length on every Ocsai-1 main2_test and Cambridge response (no LLM call)
    aut_human_list: int = identity(8)   # responses per segmented list when judges rank/score human responses (paper: 12)

    def resolved(self) -> dict:
        """Whether the human-rated AUT responses are the staged data, the bundled sample, or missing."""
        try:
            return {"data": "sample" if aut_data.source(allow_download=False).is_sample else "real"}
        except Exception:                   # noqa: BLE001 - no data at all: the human part is skipped
            return {"data": "none"}

    @property
    def generators(self) -> tuple[str, ...]:
        return self.tested

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.tested, self.judge_model)))
