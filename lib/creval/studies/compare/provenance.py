"""Judge provenance: numbers are compared only when they were judged the same way. A judged record carries
``provenance`` = the judge's model spec and version, the hash of its prompt templates (and of its standard),
its sampling settings and its order seed (:func:`creval.judges.pairwise.provenance`). :func:`differences` names
the fields that differ; :func:`check` refuses (a CrevalError naming them) and is what chapter 09 and the report
card call before putting two judged numbers side by side."""
from __future__ import annotations

import json
from typing import Iterable, Sequence

from creval.core.errors import CrevalError

FIELDS = ("judge_model", "judge_version", "prompt_sha", "standard_sha", "sampling", "order_seed")


def differences(a: dict, b: dict) -> list[str]:
    """The provenance fields whose values differ between ``a`` and ``b`` (a field missing on one side differs)."""
    keys = list(FIELDS) + sorted((set(a) | set(b)) - set(FIELDS))
    return [k for k in keys if (k in a or k in b) and a.get(k) != b.get(k)]


def distinct(provenances: Iterable[dict]) -> list[dict]:
    """The different provenances among ``provenances`` (first seen first)."""
    seen: dict[str, dict] = {}
    for p in provenances:
        seen.setdefault(json.dumps(p or {}, sort_keys=True, default=str), dict(p or {}))
    return list(seen.values())


def comparable(provenances: Sequence[dict]) -> tuple[bool, str]:
    """``(True, "")`` when every provenance is the same; else ``(False, why)`` naming each differing field and
    its values."""
    ps = distinct(provenances)
    if len(ps) <= 1:
        return True, ""
    diff = sorted({k for p in ps[1:] for k in differences(ps[0], p)}, key=lambda k: (k not in FIELDS, k))
    vals = "; ".join(f"{k}: {', '.join(sorted({str(p.get(k)) for p in ps}))}" for k in diff)
    return False, f"the judged records differ in {', '.join(diff)} ({vals})"


def check(provenances: Sequence[dict], what: str = "these numbers") -> None:
    """Refuse to compare ``what`` when their provenance differs: a CrevalError naming the fields."""
    ok, why = comparable(provenances)
    if not ok:
        raise CrevalError(f"cannot compare {what}: {why}",
                          "judge every record with the same judge, prompt, settings and seed (rerun the older "
                          "records in a fresh run folder)")
