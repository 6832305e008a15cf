"""The report card's run: read the records of the studies it grades and write one ``card`` table (no model,
judge, sandbox or embedding call: every number was measured upstream) and ``sources`` (which run folder,
which data)."""
from __future__ import annotations

from pathlib import Path

from creval.studies import contract
from creval.studies.card import card_rows
from creval.studies.registry import upstream_records
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.reportcard.records import CardRecord, SourceRecord


def under_run_root(cfg: ReportCardConfig, folder: Path) -> str:
    """``folder`` relative to the run root the card shares with its upstream studies (``<study>/<run id>``): the
    same records wherever the run root is; the absolute path when the folder lies elsewhere."""
    try:
        return str(Path(folder).resolve().relative_to(cfg.run_dir.parent.parent.resolve()))
    except ValueError:
        return str(folder)


def run(cfg: ReportCardConfig) -> Path:
    """The card of ``cfg``: its upstream studies' records (run first when missing) graded into ``card``, and the
    folders it read into ``sources``."""
    store = contract.start(cfg)
    up = upstream_records(cfg)
    for name, r in up.items():          # the card makes no call: its models are those its sources measured
        for model, spec in r.manifest.get("models", {}).items():
            store.models.setdefault(model, {**spec, "measured_in": []})["measured_in"].append(name)
    store.write("sources", [SourceRecord(n, under_run_root(cfg, r.root), r.manifest.get("params", {}).get("run_id"),
                                         r.cfg.resolved().get("data")).to_dict() for n, r in up.items()])
    store.write("card", [CardRecord.from_dict(r).to_dict() for r in card_rows(up, n_boot=cfg.n_boot, seed=cfg.seed)])
    return contract.finish(store)
