"""The base of every typed record: a dataclass that is exactly one JSONL row.

Three kinds of field besides a plain one: :func:`column` (written under a header that is not a Python name),
:func:`optional` (a column only some rows carry: left out of the row when None) and :func:`spread` (a family of
columns ``<prefix><key>``, as many as the data has, held as one dict: ``uniq_2, uniq_3, ...`` or ``rater1,
rater2, ...``). :meth:`Record.row_problem` says what is wrong with a row read back, so a run that writes a column
its type does not declare fails at once (:meth:`creval.studies.contract.Study.check_tables`)."""
from __future__ import annotations

import dataclasses
from typing import Any


def column(name: str, default: Any = None) -> Any:
    """A record field written under the column ``name`` (a header that is not a Python name, e.g. with a
    space)."""
    return dataclasses.field(default=default, metadata={"column": name})


def optional(name: str | None = None) -> Any:
    """A column that only some rows carry (None: not written)."""
    meta = {"optional": True, **({"column": name} if name else {})}
    return dataclasses.field(default=None, metadata=meta)


def spread(prefix: str) -> Any:
    """A dict written as one column per key, ``f"{prefix}{key}"`` (keys are strings)."""
    return dataclasses.field(default_factory=dict, metadata={"spread": prefix})


class Record:
    """Mixin for a record dataclass: ``to_dict`` gives the JSONL row, ``from_dict`` reads one back."""

    def to_dict(self) -> dict:
        d, row = dataclasses.asdict(self), {}
        for f in dataclasses.fields(self):
            v = d[f.name]
            if "spread" in f.metadata:
                row.update({f"{f.metadata['spread']}{k}": v[k] for k in v})
            elif not (v is None and f.metadata.get("optional")):
                row[f.metadata.get("column", f.name)] = v
        return row

    @classmethod
    def from_dict(cls, row: dict):
        """The record of a JSONL row; keys the record does not declare (e.g. ``run``) are ignored."""
        names = {f.metadata.get("column", f.name): f.name for f in dataclasses.fields(cls)
                 if "spread" not in f.metadata}
        kw = {names[k]: v for k, v in row.items() if k in names}
        for f in dataclasses.fields(cls):
            if "spread" in f.metadata:
                p = f.metadata["spread"]
                kw[f.name] = {k[len(p):]: v for k, v in row.items() if k.startswith(p) and k not in names}
        return cls(**kw)

    @classmethod
    def row_problem(cls, row: dict) -> str:
        """What keeps ``row`` from being one of these records ("" when nothing): a column the type does not
        declare, or a required one missing."""
        fields = [f for f in dataclasses.fields(cls) if "spread" not in f.metadata]
        names = {f.metadata.get("column", f.name) for f in fields}
        prefixes = tuple(f.metadata["spread"] for f in dataclasses.fields(cls) if "spread" in f.metadata)
        extra = [k for k in row if k not in names and not (prefixes and k.startswith(prefixes))]
        if extra:
            return f"column {extra[0]!r} is not a field of {cls.__name__}"
        required = [f.metadata.get("column", f.name) for f in fields
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        missing = [k for k in required if k not in row]
        return f"column {missing[0]!r} of {cls.__name__} is missing" if missing else ""
