"""The study contract, over every registered study on the smoke profile (docs/CONTRIBUTING.md):

- ``run`` twice: the second run makes 0 model calls and 0 sandbox runs (the folder is finished);
- a run from scratch in a new folder with a warm call cache makes 0 model calls either (everything cached), and
  writes the same records: every table's JSONL lines, sorted, byte for byte (only the fields listed in
  ``VOLATILE`` are set aside, each with its reason, and each must be there);
- a study that calls a model names every model it called in its manifest;
- the chapter's own cells (records in, tables and figures out) execute with every model call, cache miss
  and sandbox launch made to raise (``tests/forbid.py``): reports are pure;
- no report function of the chapter falls back to "not computed" on the smoke records (the guard of
  :mod:`creval.studies.tables` is for thin records, not for a bug);
- every table it writes is declared in its ``STUDY.tables``, and every row of a typed table round-trips
  through its record type's ``from_dict``/``to_dict`` unchanged (the type is the table's schema).
"""
import json
import logging
from pathlib import Path

import pytest

from creval.book.params import effective_params, load_params
from creval.book.studies import run_study
from creval.core.paths import REPO
from creval.studies.registry import STUDIES, in_order
from forbid import forbid_expensive_calls

pytestmark = pytest.mark.integration

MODEL_KINDS = ("sample", "chat", "choice", "loglikelihood")
# (study, table) -> fields that differ between two runs of the same records by nature, with the reason; the
# comparison fails if a listed field is missing, so nothing is set aside silently
VOLATILE = {
    ("neocoder", "rounds"): {"seconds": "wall-clock time of the model call (a cache hit takes none)"},
}
# not records: calls.jsonl lists the calls themselves (made the first time, served from the cache the second), and
# units/ is the resumable log of the unit runner (each unit's calls made or cached, its seconds); the records are
# the run folder's top-level tables
NOT_RECORDS = {"calls"}


def _params(root, **extra):
    return effective_params(load_params(REPO / "params/smoke.yaml", [f"run_root={root}"] +
                                        [f"{k}={v}" for k, v in extra.items()]))


def chapter_cells(chapter: str) -> list[str]:
    nb = json.loads((REPO / chapter).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
            and "parameters" not in c.get("metadata", {}).get("tags", [])]


def sorted_lines(study: str, path: Path) -> list[str]:
    """A table's JSONL lines, sorted; the ``VOLATILE`` fields of its rows taken out (each must be there)."""
    volatile = VOLATILE.get((study, path.stem), {})
    lines = path.read_text().splitlines()
    if volatile:
        rows = [json.loads(line) for line in lines]
        for row in rows:
            missing = set(volatile) - set(row)
            assert not missing, f"{path.name}: VOLATILE names {sorted(missing)}, which its rows no longer have"
            for k in volatile:
                del row[k]
        lines = [json.dumps(row, sort_keys=True) for row in rows]
    return sorted(lines)


def same_records(study: str, first: Path, again: Path) -> None:
    """Every record table of ``first`` equals ``again``'s: the same files, the same sorted lines."""
    tables = sorted(p.name for p in first.glob("*.jsonl") if p.stem not in NOT_RECORDS)
    assert tables, f"{first} holds no table"
    assert tables == sorted(p.name for p in again.glob("*.jsonl") if p.stem not in NOT_RECORDS)
    for rel in tables:
        a, b = sorted_lines(study, first / rel), sorted_lines(study, again / rel)
        assert a == b, f"{study}: {rel} differs between the first run and the warm-cache rerun"


def rows_round_trip(study, run_dir: Path) -> None:
    """Every row of every typed table of ``run_dir`` is its record type's ``to_dict`` of its ``from_dict``."""
    for table, kind in study.tables.items():
        f = run_dir / f"{table}.jsonl"
        if kind is dict or not f.exists():
            continue
        for line in f.read_text().splitlines():
            row = json.loads(line)
            assert kind.from_dict(row).to_dict() == row, f"{study.name}.{table}: a row is not a {kind.__name__}"


def models_called(usage_by_kind_model: dict) -> set[str]:
    """The models a run asked (made or served from the cache), from its usage per ``kind:model``."""
    return {key.split(":", 1)[1] for key, u in usage_by_kind_model.items()
            if key.split(":", 1)[0] in MODEL_KINDS and u.get("calls_made", 0) + u.get("cache_hits", 0) > 0}


def guard_fallbacks(records: list[logging.LogRecord]) -> list[str]:
    """What the report guard (:func:`creval.studies.tables.guarded`) turned into a "not computed" result."""
    return [r.getMessage() for r in records if r.name == "creval.studies.tables"]


@pytest.mark.parametrize("name", list(STUDIES))
def test_study_contract(name, tmp_path, monkeypatch, caplog):
    study = STUDIES[name]
    params = _params(tmp_path / "runs")
    for up in in_order([name])[:-1]:                  # the studies it reads, first
        assert run_study(up, params)["error"] is None
    first = run_study(study, params)
    assert first["error"] is None, first
    cfg = study.make_config(params)
    manifest = json.loads((cfg.run_dir / "manifest.json").read_text())
    assert manifest["complete"] and manifest["params"]["run_id"] == cfg.run_id
    rows_round_trip(study, cfg.run_dir)
    called = models_called(first["by_kind_model"])
    if not study.phases:                              # a study that declares no model phase calls nothing
        assert first["usage"]["calls_made"] == 0 and not called, (name, called)
    if called:                                        # a study that calls a model names the models in its manifest
        assert manifest["models"], (called, manifest["models"])
        assert cfg.model in manifest["models"] or cfg.model not in called, (called, manifest["models"])
    second = run_study(study, params)
    assert second["usage"]["calls_made"] == 0 and second["sandbox_runs"] == 0, second

    # the same records from scratch in another folder: the call cache serves every call
    again = _params(tmp_path / "runs2")
    for up in in_order([name]):
        row = run_study(up, again)
        assert row["error"] is None and row["usage"]["calls_made"] == 0, row
    same_records(name, cfg.run_dir, study.make_config(again).run_dir)

    # the chapter's cells read the records with every expensive call forbidden
    forbid_expensive_calls(monkeypatch)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns = {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}
    caplog.set_level(logging.INFO, logger="creval.studies.tables")
    for src in chapter_cells(study.chapter):
        exec(compile(src, f"{study.chapter}", "exec"), ns)     # our own chapter code, not generated code
    fallbacks = guard_fallbacks(caplog.records)
    assert not fallbacks, f"{study.chapter}: the smoke records made the report guard fall back: {fallbacks}"
