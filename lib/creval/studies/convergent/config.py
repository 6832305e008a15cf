"""Parameters of the convergent study (chapter 03): the judges, and the divergent runs they judge.

Every field changes the records (the verdicts), so every field is identity. The divergent parameters (which
solutions are judged) reach it by composition: ``cfg.divergent()`` is the divergent study's own Config, and
the run id holds its identity fields by name (:class:`~creval.studies.reader.DerivedConfig`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.domains import get_domain
from creval.studies.config import JudgeConfig, identity
from creval.studies.divergent.config import DivergentConfig
from creval.studies.reader import DerivedConfig


@dataclass(frozen=True)
class ConvergentConfig(DerivedConfig, JudgeConfig):
    study: ClassVar[str] = "convergent"
    judges: tuple[str, ...] = identity(("zero-shot", "few-shot", "cot", "chateval", "retrieval"))
    human_pairs: int = identity(4)   # MacGyver solutions with human labels (paper: 50)
    confidence_thresholds: tuple[float, ...] = identity((0.3, 0.5, 0.7, 0.9))
    judge_word_limit: int = identity(150)   # words per discussion turn, both discussion judges (paper: 150)
    judge_k: int = identity(5)   # fragments per discussion turn (paper k)
    judge_j: int = identity(4)   # fragments per confidence turn (paper j)
    judge_l: int = identity(8)   # fragments for the verdict (paper l)
    judge_threshold: float = identity(0.5)   # early-exit mean confidence T
    judge_max_rounds: int = identity(2)   # discussion rounds at most
    judge_retries: int = identity(1)   # format re-asks before a verdict counts as unparsed
    judge_verdict_via: str = identity("text+logprobs")   # text | logprobs | text+logprobs
    bench_judge: str = identity("retrieval")   # judge of Tables 3-5 and Fig. 7

    def divergent(self) -> DivergentConfig:
        """The divergent study's own Config: the run whose solutions are judged."""
        return self.upstream()["divergent"]

    def resolved(self) -> dict:
        """The divergent facts (entailment backend, each domain's data), and MacGyver's data even when it is
        not among the divergent domains: the human-labelled pairs always come from it (sample or real)."""
        out = self.divergent().resolved()
        kind = "sample" if get_domain("macgyver").source_kind() == "sample" else "real"
        return {**out, "data": {**out["data"], "macgyver": kind}}

    def judge_params(self) -> dict:
        """The judge settings under the names the judge registry declares."""
        return {"word_limit": self.judge_word_limit, "k": self.judge_k, "j": self.judge_j, "l": self.judge_l,
                "threshold": self.judge_threshold, "max_rounds": self.judge_max_rounds,
                "retries": self.judge_retries, "verdict_via": self.judge_verdict_via, "seed": self.seed}
