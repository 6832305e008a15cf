"""Where the compared records come from: this run root (every model of ``model``/``models``), or the run roots
of ``creval batch`` (``compare_roots``, one model each). A root's study is read only when its run folder for
these parameters (with that root's model) is finished: a missing run is reported and skipped, never run here
with another model."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from creval.core.io import read_jsonl
from creval.models.registry import model_name
from creval.studies import contract
from creval.studies.config import Config
from creval.studies.reader import ReaderConfig
from creval.studies.registry import get_study


def compared() -> tuple[str, ...]:
    """The studies compared: the compare Study's ``reads`` (a root's run of one is found by rebuilding its
    Config from these parameters)."""
    return get_study("compare").reads


THIS_ROOT = "this run root"     # the root of the sources of a run without compare_roots (where it is: run_root)


@dataclass
class Source:
    """One study's records in one run root: ``status`` is ``read`` or ``missing`` (``note`` says why)."""
    root: str
    study: str
    models: tuple[str, ...]
    cfg: Config | None = None
    records: contract.Records | None = None
    status: str = "read"
    note: str = ""
    shared: bool = field(default=False)   # several models in one run folder (their calls are split by model)

    def row(self) -> dict:
        """The ``sources`` table row."""
        return {"root": self.root, "study": self.study, "models": list(self.models), "status": self.status,
                "run_dir": f"{self.study}/{self.cfg.run_id}" if self.records is not None else "",
                "run_id": self.cfg.run_id if self.cfg is not None else "",
                "judge_model": getattr(self.cfg, "judge_model", "") if self.cfg is not None else "",
                "note": self.note}


def root_path(root: str) -> Path:
    """``root`` resolved like a Config's ``run_root`` (relative to the data home unless absolute)."""
    return Config(run_root=root).run_path


def finished_runs(root: str, study: str) -> list[dict]:
    """The manifests' params of every finished run of ``study`` under ``root``."""
    out = []
    for f in sorted(root_path(root).glob(f"{study}/*/manifest.json")):
        try:
            m = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if m.get("complete"):
            out.append(m.get("params", {}))
    return out


def root_model(root: str) -> str | None:
    """The model a ``creval batch`` root measured: ``model`` of its finished upstream runs (None when none)."""
    for study in compared():
        for p in finished_runs(root, study):
            if p.get("model"):
                return str(p["model"])
    return None


def root_config(cfg: ReaderConfig, root: str, study: str, model: str) -> Config:
    """The upstream Config that ``creval batch`` used in ``root`` for ``model``: these parameters with that
    model alone and that run root."""
    return cfg.upstream(model=model, models=[], run_root=root)[study]


def root_runs(cfg: ReaderConfig, root: str) -> dict:
    """Per study, the run id of the finished run read in ``root`` (None when there is none)."""
    model = root_model(root)
    if model is None:
        return {s: None for s in compared()}
    out = {}
    for s in compared():
        c = root_config(cfg, root, s, model)
        out[s] = c.run_id if contract.is_finished(c) else None
    return out


def names(models) -> tuple[str, ...]:
    """The names the models go by in records (a spec file by its spec's name)."""
    return tuple(model_name(m) for m in models)


def own_sources(cfg: ReaderConfig) -> list[Source]:
    """This run root: each study's records for every model under test (a study runs first only when its folder
    for these very parameters is missing, as ``creval book`` would run it)."""
    out = []
    for name, c in cfg.upstream().items():
        recs = get_study(name).records(c)
        out.append(Source(THIS_ROOT, name, names(c.tested), c, recs, shared=len(c.tested) > 1))
    return out


def batch_sources(cfg: ReaderConfig) -> list[Source]:
    """Each root of ``compare_roots``, each study: read when finished, else ``missing`` with the reason."""
    out = []
    for root in cfg.compare_roots:
        model = root_model(root)
        if model is None:
            out += [Source(root, s, (), status="missing", note=f"no finished run of any study in {root_path(root)}")
                    for s in compared()]
            continue
        for s in compared():
            c = root_config(cfg, root, s, model)
            if contract.is_finished(c):
                out.append(Source(root, s, names((model,)), c, contract.Records(c.run_dir, c)))
                continue
            others = [p.get("run_id") for p in finished_runs(root, s)]
            note = f"no finished {s} run with these parameters (run id {c.run_id})" + (
                f"; finished runs with other parameters: {', '.join(map(str, others))}" if others else "")
            out.append(Source(root, s, names((model,)), c, status="missing", note=note))
    return out


def sources(cfg: ReaderConfig) -> list[Source]:
    """Every study of every root compared (see the module doc)."""
    return batch_sources(cfg) if cfg.compare_roots else own_sources(cfg)


# -- what each run cost -----------------------------------------------------------------------------------
def cost_rows(src: Source) -> list[dict]:
    """Calls, tokens and cost of one read run, per model under test: in a run of one model every call is that
    model's (its judge's too); in a run of several, a call goes to the model it asked, and the others (judge,
    embeddings, entailment) to ``shared`` (a model under test that is also ``judge_model``: all its calls,
    which cannot be told from its judging). Every call the measurement needed counts, whether made in that run
    or served from the call cache (paid when first made): the same records cost the same, however warm the
    cache was. Sandbox runs (a program on its test cases, local work: no tokens, no cost) are counted in their
    own column, made or served alike, so that a study that runs programs shows that work."""
    if src.records is None:
        return []
    rows: dict[str, dict] = {}
    judge = model_name(src.cfg.judge_model) if getattr(src.cfg, "judge_model", "") else ""
    own = set(src.models) - {judge}
    for c in read_jsonl(src.records.root / "calls.jsonl"):
        who = (c.get("model") if c.get("model") in own else "shared") if src.shared else src.models[0]
        r = rows.setdefault(who, {"root": src.root, "study": src.study, "model": who, "calls": 0,
                                  "input tokens": 0, "output tokens": 0, "cost usd": 0.0, "sandbox runs": 0})
        if c.get("kind") == "sandbox":
            r["sandbox runs"] += 1
            continue
        r["calls"] += 1
        r["input tokens"] += int(c.get("input_tokens") or 0)
        r["output tokens"] += int(c.get("output_tokens") or 0)
        r["cost usd"] += float(c.get("cost_usd") or 0.0)
    return list(rows.values())
