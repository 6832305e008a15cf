"""Parameters of the convergent study (chapter 03): the judges, and the divergent runs they judge.

Every field changes the records (the verdicts), so every field is identity. The divergent parameters (which
solutions are judged) reach it by composition: ``cfg.divergent()`` is the divergent study's own Config, and
the run id holds its identity fields by name (:class:`~creval.studies.reader.DerivedConfig`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.domains import get_domain
from creval.studies.config import BootstrapConfig, JudgeConfig, identity
from creval.studies.divergent.config import DivergentConfig
from creval.studies.reader import DerivedConfig


@dataclass(frozen=True)
class ConvergentConfig(DerivedConfig, JudgeConfig, BootstrapConfig):
    study: ClassVar[str] = "convergent"
    # old key names, still accepted (see Config.renamed)
    renamed: ClassVar[Mapping[str, str]] = {"judges": "convergent_judges", "human_pairs": "convergent_human_pairs",
        "confidence_thresholds": "convergent_confidence_thresholds",
        "judge_word_limit": "convergent_judge_word_limit", "judge_k": "convergent_judge_k",
        "judge_j": "convergent_judge_j", "judge_l": "convergent_judge_l",
        "judge_threshold": "convergent_judge_threshold", "judge_max_rounds": "convergent_judge_max_rounds",
        "judge_retries": "convergent_judge_retries", "judge_verdict_via": "convergent_judge_verdict_via",
        "bench_judge": "convergent_bench_judge"}
    convergent_judges: tuple[str, ...] = identity(("zero-shot", "few-shot", "cot", "chateval", "retrieval"))
    convergent_human_pairs: int = identity(4)   # MacGyver solutions with human labels (paper: 50)
    convergent_confidence_thresholds: tuple[float, ...] = identity((0.3, 0.5, 0.7, 0.9))
    convergent_judge_word_limit: int = identity(150)   # words per discussion turn, both discussion judges (paper: 150)
    convergent_judge_k: int = identity(5)   # fragments per discussion turn (paper k)
    convergent_judge_j: int = identity(4)   # fragments per confidence turn (paper j)
    convergent_judge_l: int = identity(8)   # fragments for the verdict (paper l)
    convergent_judge_threshold: float = identity(0.5)   # early-exit mean confidence T
    convergent_judge_max_rounds: int = identity(2)   # discussion rounds at most
    convergent_judge_retries: int = identity(1)   # format re-asks before a verdict counts as unparsed
    convergent_judge_verdict_via: str = identity("text+logprobs")   # text | logprobs | text+logprobs
    convergent_bench_judge: str = identity("retrieval")   # judge of Tables 3-5 and Fig. 7

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
        return {"word_limit": self.convergent_judge_word_limit, "k": self.convergent_judge_k, "j": self.convergent_judge_j, "l": self.convergent_judge_l,
                "threshold": self.convergent_judge_threshold, "max_rounds": self.convergent_judge_max_rounds,
                "retries": self.convergent_judge_retries, "verdict_via": self.convergent_judge_verdict_via, "seed": self.seed}
