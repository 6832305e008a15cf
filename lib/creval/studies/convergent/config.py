"""Parameters of the convergent study (chapter 03): the judges, and the divergent runs they judge."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.divergent.config import GenerationConfig


@dataclass(frozen=True)
class ConvergentConfig(GenerationConfig):
    judge_model: str = "smollm2-135m"      # the LLM that judges
    judges: tuple[str, ...] = ("zero-shot", "few-shot", "cot", "chateval", "retrieval")
    human_pairs: int = 4                   # MacGyver solutions with human labels (paper: 50)
    confidence_thresholds: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)
    judge_word_limit: int = 150            # words per discussion turn, both discussion judges (paper: 150)
    judge_k: int = 5                       # fragments per discussion turn (paper k)
    judge_j: int = 4                       # fragments per confidence turn (paper j)
    judge_l: int = 8                       # fragments for the verdict (paper l)
    judge_threshold: float = 0.5           # early-exit mean confidence T
    judge_max_rounds: int = 2              # discussion rounds at most
    judge_retries: int = 1                 # format re-asks before a verdict counts as unparsed
    judge_verdict_via: str = "text+logprobs"   # text | logprobs | text+logprobs
    bench_judge: str = "retrieval"         # judge of Tables 3-5 and Fig. 7

    def judge_params(self) -> dict:
        """The judge settings under the names the judge registry declares."""
        return {"word_limit": self.judge_word_limit, "k": self.judge_k, "j": self.judge_j, "l": self.judge_l,
                "threshold": self.judge_threshold, "max_rounds": self.judge_max_rounds,
                "retries": self.judge_retries, "verdict_via": self.judge_verdict_via, "seed": self.seed}
