"""The base of every typed record: a dataclass that is exactly one JSONL row."""
from __future__ import annotations

import dataclasses
from typing import Any


def column(name: str, default: Any = None) -> Any:
    """A record field written under the column ``name`` (a header that is not a Python name, e.g. with a
    space)."""
    return dataclasses.field(default=default, metadata={"column": name})


class Record:
    """Mixin for a record dataclass: ``to_dict`` gives the JSONL row, ``from_dict`` reads one back. A field
    declared with :func:`column` is written under its column name."""

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {f.metadata.get("column", f.name): d[f.name] for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, row: dict):
        """The record of a JSONL row; keys the record does not declare (e.g. ``run``) are ignored."""
        names = {f.metadata.get("column", f.name): f.name for f in dataclasses.fields(cls)}
        return cls(**{names[k]: v for k, v in row.items() if k in names})
