"""The study contract, over every registered study on the smoke profile (docs/CONTRIBUTING.md):

- ``run`` twice: the second run makes 0 model calls and 0 sandbox runs (the folder is finished);
- a run from scratch in a new folder with a warm call cache makes 0 model calls either (everything cached);
- the chapter's own cells (records in, tables and figures out) execute with every model call, cache miss
  and sandbox launch made to raise: reports are pure;
- every record written round-trips through its typed record's ``to_dict``/``from_dict`` (unit tests per study).
"""
import json

import pytest

from creval.book.params import effective_params, load_params
from creval.book.studies import run_study
from creval.core.paths import REPO
from creval.studies.registry import STUDIES, in_order

pytestmark = pytest.mark.integration


def _params(root, **extra):
    return effective_params(load_params(REPO / "params/smoke.yaml", [f"run_root={root}"] +
                                        [f"{k}={v}" for k, v in extra.items()]))


class Forbidden(AssertionError):
    pass


def forbid_expensive_calls(monkeypatch):
    """Every way a report could reach a model, a cache miss or the sandbox now raises."""
    import creval.core.cache as cache
    import creval.models.cached as cached
    import creval.models.registry as registry
    import creval.sandbox as sandbox

    def boom(*a, **k):
        raise Forbidden("a report made an expensive call")
    monkeypatch.setattr(registry, "load_model", boom)
    monkeypatch.setattr(sandbox, "run_units", boom)
    monkeypatch.setattr(cache, "cached_batch", boom)
    for name in ("sample", "chat", "chat_many", "choice_logprobs", "loglikelihood"):
        if hasattr(cached.Model, name):
            monkeypatch.setattr(cached.Model, name, boom)


def chapter_cells(chapter: str) -> list[str]:
    nb = json.loads((REPO / chapter).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
            and "parameters" not in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("name", list(STUDIES))
def test_study_contract(name, tmp_path, monkeypatch):
    study = STUDIES[name]
    params = _params(tmp_path / "runs")
    for up in in_order([name])[:-1]:                  # the studies it reads, first
        assert run_study(up, params)["error"] is None
    first = run_study(study, params)
    assert first["error"] is None, first
    cfg = study.make_config(params)
    manifest = json.loads((cfg.run_dir / "manifest.json").read_text())
    assert manifest["complete"] and manifest["params"]["run_id"] == cfg.run_id
    assert cfg.model in manifest["models"] or not manifest["models"], manifest["models"]   # names the model measured
    second = run_study(study, params)
    assert second["usage"]["calls_made"] == 0 and second["sandbox_runs"] == 0, second

    # the same records from scratch in another folder: the call cache serves every call
    again = _params(tmp_path / "runs2")
    for up in in_order([name]):
        row = run_study(up, again)
        assert row["error"] is None and row["usage"]["calls_made"] == 0, row

    # the chapter's cells read the records with every expensive call forbidden
    forbid_expensive_calls(monkeypatch)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns = {k: v for k, v in params.items()}
    ns = {k: (list(v) if isinstance(v, tuple) else v) for k, v in ns.items()}
    for src in chapter_cells(study.chapter):
        exec(compile(src, f"{study.chapter}", "exec"), ns)     # our own chapter code, not generated code
