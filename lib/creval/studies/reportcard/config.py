"""Parameters of chapter 08, the report card. It reads the records of the studies that check a measure
against people (convergent, validation, rethinking, aut), so its Config is theirs: the same parameters name
the same upstream run folders, and its run id moves whenever one of theirs does."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.aut.config import AutConfig
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.registry import upstream_configs
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.validation.config import ValidationConfig


@dataclass(frozen=True)
class ReportCardConfig(ConvergentConfig, ValidationConfig, RethinkingConfig, AutConfig):
    """Chapter 08: no parameter of its own."""
    study: ClassVar[str] = "reportcard"
    records_version: ClassVar[int] = 4     # 4: the one verdict rule (vs baseline, verdict, reason); 3: oriented baselines

    def upstream(self) -> dict:
        """The Config of every study the card reads (its ``reads``), rebuilt from these parameters."""
        return upstream_configs(self)

    def resolved(self) -> dict:
        """The run id of every study the card reads (each holds its machine facts and its records' shape): the
        card's run id moves whenever an upstream run's does."""
        return {"upstream": {name: c.run_id for name, c in self.upstream().items()}}
