"""The base of every typed record: a dataclass that is exactly one JSONL row."""
from __future__ import annotations

import dataclasses


class Record:
    """Mixin for a record dataclass: ``to_dict`` gives the JSONL row, ``from_dict`` reads one back."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: dict):
        """The record of a JSONL row; keys the record does not declare (e.g. ``run``) are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in names})
