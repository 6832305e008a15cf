"""Parameters of the divergent study (chapter 02). Studies that read its records (convergent, validation) hold
these parameters by composition and rebuild this Config from them (``cfg.divergent()``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from creval.domains import DOMAINS, get_domain
from creval.measures.nli.backends import NLI, llm_model, load_nli, resolved_name
from creval.studies.config import BootstrapConfig, identity


@dataclass(frozen=True)
class DivergentConfig(BootstrapConfig):
    """Chapter 02: semantic entropy of every model under test on every domain, a temperature sweep, and the
    entailment backends on held-out pairs."""
    study: ClassVar[str] = "divergent"
    # old key names, still accepted (see Config.renamed)
    renamed: ClassVar[Mapping[str, str]] = {"domains": "divergent_domains", "limit": "divergent_limit",
        "n_samples": "divergent_n_samples", "temperature": "divergent_temperature", "top_p": "divergent_top_p",
        "max_steps": "divergent_max_steps", "max_step_tokens": "divergent_max_step_tokens", "nli": "divergent_nli",
        "strict_entailment": "divergent_strict_entailment", "temperatures": "divergent_temperatures",
        "sweep_limit": "divergent_sweep_limit", "sweep_domain": "divergent_sweep_domain",
        "nli_eval_pairs": "divergent_nli_eval_pairs"}
    divergent_domains: tuple[str, ...] = identity(("macgyver", "hypogen", "bookmia"))
    divergent_limit: int = identity(2)               # problems per domain (paper: 300; tiny so the book runs on a CPU)
    divergent_n_samples: int = identity(10)          # samples per step (paper: 10)
    divergent_temperature: float = identity(1.0)     # sampling temperature (paper: 1.0)
    divergent_top_p: float = identity(0.9)           # nucleus sampling (paper: 0.9)
    divergent_max_steps: int = identity(3)           # upper bound of the step budget (paper: the first answer's length)
    divergent_max_step_tokens: int = identity(32)    # token limit of one sampled step
    divergent_nli: str = identity("minilm-sick")     # entailment backend: minilm-sick | minilm-cosine | deberta | hf:<id> | llm:<model>
    divergent_strict_entailment: bool = identity(True)   # two samples are equivalent when each entails the other
    divergent_temperatures: tuple[float, ...] = identity((0.3, 1.0, 1.5))   # Fig. 5b sweep
    divergent_sweep_limit: int = identity(1)         # problems per temperature in the sweep
    divergent_sweep_domain: str = identity("macgyver")   # domain of the temperature sweep
    divergent_nli_eval_pairs: int = identity(20)     # held-out pairs per entailment backend and dataset

    def resolved(self) -> dict:
        """The entailment backend that really runs here, and whether each domain's data is our sample."""
        return {"nli": self.nli_runs(),
                "data": {d: "sample" if get_domain(d).source_kind() == "sample" else "real"
                         for d in sorted({*self.divergent_domains, self.divergent_sweep_domain})}}

    # The entailment backend, decided here once for every study that reads these parameters.
    def nli_runs(self) -> str:
        """The name of the entailment backend that really runs here (``divergent_nli``, or ``minilm-cosine`` where
        ``minilm-sick`` falls back), without loading it: what run identities and records name."""
        return resolved_name(self.divergent_nli)

    def nli_judge(self) -> str:
        """The registered model behind an LLM entailment backend (``divergent_nli: llm:<model>``), else ""."""
        return llm_model(self.divergent_nli)

    def nli_backend(self) -> NLI:
        """The entailment backend asked for, loaded (once per process; its ``name`` is the one that runs)."""
        return load_nli(self.divergent_nli)

    def reads_dataset(self, name: str) -> bool:
        """A domain's dataset only when it is measured or swept; the entailment datasets always."""
        return name not in DOMAINS or name in {*self.divergent_domains, self.divergent_sweep_domain}

