"""What produced a chapter, from its run's ``manifest.json``: a "What this cost" line for the top of the page and
a provenance block for its end (models, judges, seeds, data sources with their hashes, calls, tokens, cost and
wall time per phase, the commit), with links to the item browser and the downloads of the built book.

Every function here reads a manifest that may lack any field (an older run, an interrupted one, a study that
records less): what is absent is shown as "not recorded", never an error. A chapter calls
:func:`cost_text` and :func:`provenance_text` with its Config.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from creval.book.browse import address
from creval.core.io import read_jsonl
from creval.studies.registry import get_study
from creval.studies.tables import public_text, readable

NOT_RECORDED = "not recorded"
QUANT = re.compile(r"(?<![A-Za-z0-9])(I?Q\d(?:_[A-Z0-9]+)*|BF16|F16|F32)(?![A-Za-z0-9])", re.I)


def shown(v: Any) -> str:
    """A value as a page prints it: "not recorded" for None, an empty value or NaN; a mapping or a list as
    text (:func:`creval.studies.tables.readable`), never as JSON or a Python repr."""
    if v is None or v == "" or v == {} or v == [] or (isinstance(v, float) and v != v):
        return NOT_RECORDED
    return v if isinstance(v, str) else readable(v) if isinstance(v, (dict, list)) else str(v)


def read_manifest(run_dir: Path) -> dict:
    """The run's manifest ({} when there is none or it does not parse)."""
    try:
        return json.loads((Path(run_dir) / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def seconds_text(s: Any) -> str:
    if not isinstance(s, (int, float)) or s != s:
        return NOT_RECORDED
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h"


def cost_line(manifest: Mapping) -> str:
    """One sentence: calls made and served from cache, tokens in and out, dollars and wall time of the run."""
    total = (manifest.get("usage") or {}).get("total") or {}
    if not total and not manifest:
        return f"**What this cost:** {NOT_RECORDED} (this run has no manifest yet)."

    def n(key: str) -> str:
        v = total.get(key)
        return f"{v:,}" if isinstance(v, int) else NOT_RECORDED
    cost = total.get("cost_usd")
    dollars = f"${cost:.4f}" if isinstance(cost, (int, float)) else NOT_RECORDED
    return (f"**What this cost:** {n('calls_made')} calls made and {n('cache_hits')} served from the cache; "
            f"tokens in/out {n('input_tokens')}/{n('output_tokens')}; {dollars}; wall time "
            f"{seconds_text(manifest.get('seconds'))} (the study's run, `manifest.json`).")


def quantisation(model: Mapping) -> str:
    """The weights' quantisation, read from the weights' file name (``...Q8_0.gguf``)."""
    source = model.get("source") or {}
    names = [str(source.get("file", "")), str(model.get("model", ""))]
    found = next((m.group(1) for m in map(QUANT.search, names) if m), None)
    return found.upper() if found else NOT_RECORDED


def model_rows(manifest: Mapping) -> list[str]:
    """One Markdown table row per model: name, backend, server and version, quantisation, log-prob kind."""
    rows = []
    for name, m in (manifest.get("models") or {}).items():
        server = m.get("server") or {}
        served = " ".join(str(server[k]) for k in ("name", "version") if server.get(k)) if isinstance(
            server, Mapping) else str(server)
        rows.append(f"| {name} | {shown(m.get('backend'))} | {shown(served or None)} | {quantisation(m)} | "
                    f"{shown(m.get('logprob_kind'))} |")
    return rows


def judge_lines(params: Mapping) -> list[str]:
    """The judges' settings among the run's parameters (keys naming a judge, and ``judge_params``)."""
    keys = [k for k in params if "judge" in k or k.startswith("criteri")]
    return [f"- {k}: `{shown(params[k])}`" for k in sorted(keys)]


def dataset_lines(datasets: tuple) -> list[str]:
    """Each dataset the study reads, with the pinned sha256 of each of its public files."""
    out = []
    for ds in datasets:
        remotes = getattr(ds, "remotes", ()) or ()
        pins = ", ".join(f"{r.name} sha256 `{r.sha256[:16]}`" if r.sha256 else f"{r.name} (no pinned hash)"
                         for r in remotes)
        none = "no pinned file (an API, a staged copy or the bundled sample)"
        out.append(f"- {getattr(ds, 'name', ds)}: {pins or none}")
    return out


def source_lines(params: Mapping, source_rows: list[str]) -> list[str]:
    """Where this run's data came from: the run's own lines (a ``*source*`` table or parameter)."""
    given = [f"- {k}: {shown(v)}" for k, v in sorted(params.items()) if "source" in k]
    return [public_text(line) for line in given + [f"- {line}" for line in source_rows]]


def phase_rows(manifest: Mapping) -> list[str]:
    """One Markdown table row per call kind and model: calls made, from cache, tokens, cost, seconds."""
    rows = []
    for key, v in sorted(((manifest.get("usage") or {}).get("by_kind_model") or {}).items()):
        rows.append(f"| {key} | {v.get('calls_made', 0)} | {v.get('cache_hits', 0)} | "
                    f"{v.get('input_tokens', 0)}/{v.get('output_tokens', 0)} | ${v.get('cost_usd', 0.0):.4f} | "
                    f"{seconds_text(v.get('seconds'))} |")
    return rows


def links_line(study: str, tables: dict[str, int] | None = None) -> str:
    """Links to the study's item browser (one per table written, with its rows) and to its downloads."""
    each = " · ".join(f"[{t}]({address(study, t)}) ({n:,} row{'' if n == 1 else 's'})"
                      for t, n in (tables or {}).items())
    return (f"Every item behind this page: [browse them]({address(study)})" + (f" ({each})" if each else "")
            + f"; every table: [CSV and Parquet, with a data dictionary](../downloads/{study}/index.html) "
            "(in the built book; `creval book` writes them).")


def table_sizes(run_dir: Path) -> dict[str, int]:
    """The rows of each table the run wrote (its calls aside)."""
    return {f.stem: sum(1 for line in f.open() if line.strip()) for f in sorted(Path(run_dir).glob("*.jsonl"))
            if f.stem != "calls"}


def provenance(manifest: Mapping, study: str, datasets: tuple = (), source_rows: list[str] | None = None,
               tables: dict[str, int] | None = None) -> str:
    """The provenance block as Markdown (``tables``: rows per table, each linked to the browser)."""
    params = manifest.get("params") or {}
    models = model_rows(manifest)
    phases = phase_rows(manifest)
    done = "complete" if manifest.get("complete") else "not complete"
    parts = ["## Provenance", "", links_line(study, tables), "",
             f"Run `{shown(params.get('run_id'))}` of the {study} study, commit `{shown(manifest.get('git_commit'))}`,"
             f" creval {shown(manifest.get('creval_version'))}, {done}; accelerator "
             f"{shown(manifest.get('accelerator'))}; wall time {seconds_text(manifest.get('seconds'))}.",
             "", "**Models**", ""]
    parts += (["| model | backend | server and version | quantisation | log-prob kind |", "|---|---|---|---|---|"]
              + models if models else [f"{NOT_RECORDED}."])
    parts += ["", "**Judges**", ""] + (judge_lines(params) or [f"{NOT_RECORDED}."])
    seeds = manifest.get("seeds") or {}
    parts += ["", "**Seeds**: " + (", ".join(f"{k} {v}" for k, v in seeds.items()) or NOT_RECORDED) + "."]
    sources = source_lines(params, source_rows or []) + dataset_lines(datasets)
    parts += ["", "**Data sources**", ""] + (sources or [f"{NOT_RECORDED}."])
    parts += ["", "**Calls, tokens, cost and time per phase**", ""]
    parts += (["| phase (kind:model) | made | from cache | tokens in/out | cost | time in calls |",
               "|---|---|---|---|---|---|"] + phases if phases else [f"{NOT_RECORDED}."])
    return "\n".join(parts)


def source_rows_of(run_dir: Path) -> list[str]:
    """The text of the run's data-source tables (``*source*.jsonl``: one line each)."""
    out = []
    for f in sorted(Path(run_dir).glob("*source*.jsonl")):
        for row in read_jsonl(f)[:20]:
            out.append(f"{f.stem}: " + "; ".join(f"{k} {shown(v)}" for k, v in row.items()))
    return out


def cost_text(cfg) -> str:
    """The "What this cost" line of ``cfg``'s run (Markdown), for the top of its chapter."""
    return cost_line(read_manifest(cfg.run_dir))


def provenance_text(cfg) -> str:
    """The provenance block of ``cfg``'s run (Markdown), for the end of its chapter; the study is found in the
    registry by the Config's ``study``."""
    study = get_study(cfg.study)
    return provenance(read_manifest(cfg.run_dir), study.name, study.datasets, source_rows_of(cfg.run_dir),
                      table_sizes(cfg.run_dir))
