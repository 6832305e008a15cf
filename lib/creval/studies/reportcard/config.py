"""Parameters of chapter 08, the report card. It reads the records of the studies that check a measure
against people (convergent, validation, rethinking, aut), so its Config is theirs: the same parameters name
the same upstream run folders, and its run id moves whenever one of theirs does."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.aut.config import AutConfig
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.validation.config import ValidationConfig

CARD_ROWS = 2   # the card's row shape (2: baselines in their better orientation, the formatting-control row)


@dataclass(frozen=True)
class ReportCardConfig(ConvergentConfig, ValidationConfig, RethinkingConfig, AutConfig):
    """Chapter 08: no parameter of its own."""
    study: ClassVar[str] = "reportcard"

    def upstream(self) -> dict:
        """The Config of every study the card reads, rebuilt from these parameters."""
        p = self.to_params()
        return {c.study: c.from_params(p) for c in (ConvergentConfig, ValidationConfig, RethinkingConfig, AutConfig)}

    def resolved(self) -> dict:
        """The run id of every study the card reads (each holds its machine facts) and the card's row shape:
        the card's run id moves whenever an upstream run's does, or the rows change shape."""
        return {"upstream": {name: c.run_id for name, c in self.upstream().items()}, "card": CARD_ROWS}
