"""Parameters of the divergent study (chapter 02); later studies read its records with the same values."""
from __future__ import annotations

from dataclasses import dataclass

from creval.studies.config import Config


@dataclass(frozen=True)
class GenerationConfig(Config):
    """What defines the divergent records: every study that reads them declares these keys."""
    domains: tuple[str, ...] = ("macgyver", "hypogen", "bookmia")
    limit: int = 2                         # problems per domain (paper: 300; tiny so the book runs on a CPU)
    n_samples: int = 10                    # samples per step (paper: 10)
    temperature: float = 1.0               # sampling temperature (paper: 1.0)
    top_p: float = 0.9                     # nucleus sampling (paper: 0.9)
    max_steps: int = 3                     # upper bound of the step budget (paper: the first answer's length)
    max_step_tokens: int = 32              # token limit of one sampled step
    nli: str = "minilm-sick"               # entailment backend: minilm-sick | minilm-cosine | deberta | hf:<id> | llm:<model>
    strict_entailment: bool = True         # two samples are equivalent when each entails the other

    def identity(self, model: str, domain: str, n: int | None = None, temperature: float | None = None) -> dict:
        """What makes two divergent runs the same experiment (``limit`` is not part of it: a run grows)."""
        return {"model": model, "domain": domain, "n": self.n_samples if n is None else n,
                "temperature": float(self.temperature if temperature is None else temperature),
                "top_p": self.top_p, "max_steps": self.max_steps, "max_step_tokens": self.max_step_tokens,
                "nli": self.nli, "strict": self.strict_entailment, "seed": self.seed, "data_seed": self.data_seed}


@dataclass(frozen=True)
class DivergentConfig(GenerationConfig):
    """Chapter 02: the records plus its temperature sweep and entailment comparison."""
    temperatures: tuple[float, ...] = (0.3, 1.0, 1.5)   # Fig. 5b sweep
    sweep_limit: int = 1                   # problems per temperature in the sweep
    sweep_domain: str = "macgyver"         # domain of the temperature sweep
    nli_eval_pairs: int = 20               # held-out pairs per entailment backend and dataset
