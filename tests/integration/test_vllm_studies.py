"""Every study's server path against the real vLLM server, at the smoke profile's sizes (judges zero-shot and
retrieval, cosine entailment): the study finishes, the model under test and the judge are the served model, its
calls were made against the server with several requests in flight, and a second run reads everything back from
the cache (0 calls)."""
import json
import os
from pathlib import Path

import pytest

from creval.book.params import effective_params, load_params
from creval.book.studies import run_studies
from creval.core.ledger import LEDGER
from creval.core.paths import REPO
from creval.models import vllm_local
from creval.models.endpoint import peak_in_flight
from creval.studies.registry import STUDIES
from small import FEW, SMALL

pytestmark = pytest.mark.integration
# vLLM's CPU build takes seconds a call here: the rubric judge's path is run by the rerun test (the same judge,
# sampled), AUT judges its human responses in lists of two, and chapter 07c's own judge rates one prompt's stories
LEAN = ["rethink_judge_items=0", "aut_human_list=2", "judges_own_prompts=1", "judges_irt_boot=2"]


@pytest.fixture(scope="module")
def params(vllm_spec, tmp_path_factory):
    root = tmp_path_factory.mktemp("vllm-runs")
    return effective_params(load_params(REPO / "params/smoke.yaml", [
        f"run_root={root}", f"model={vllm_spec}", f"judge_model={vllm_spec}", *SMALL, *FEW,
        "convergent_judges=[zero-shot, retrieval]", *LEAN]))



# The judge-heavy studies (convergent's retrieval judge, and the three that read its records) take many minutes on
# vLLM's CPU build with 2 cores: they run when CREVAL_VLLM_ALL=1, not in every `make test` (CI's time budget).
SLOW = {"convergent", "validation", "reportcard", "compare"}


# Chapter 07c's own judge reads HANNA stories of about 500 words, re-asked in full when a reply does not parse:
# on vLLM's CPU build that is minutes of prefill, so here it rates our bundled samples' short stories (the same
# path: no staged copy, no download, the last step of every loader's fallback chain)
SHORT_TEXTS = {"judges": {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1"}}


@pytest.mark.parametrize("study", list(STUDIES))
def test_study_runs_against_the_real_server(study, params, vllm_server, monkeypatch):
    if study in SLOW and os.environ.get("CREVAL_VLLM_ALL") != "1":
        pytest.skip(f"{study} against vLLM's CPU build takes many minutes on 2 cores: set CREVAL_VLLM_ALL=1")
    if not STUDIES[study].phases:
        pytest.skip(f"{study} declares no model phase: it calls no server (test_contract runs it)")
    for key, value in SHORT_TEXTS.get(study, {}).items():
        monkeypatch.setenv(key, value)
    with LEDGER.collect() as t:
        rows = run_studies(params, [study])
    row = rows[-1]
    assert row["study"] == study and row["error"] is None, row["error"]
    manifest = json.loads((Path(row["run_dir"]) / "manifest.json").read_text())
    assert manifest["params"]["model"] == params["model"]
    served = [r for r in t.records if r.model == vllm_local.SERVED]
    if study != "compare":                                  # compare reads the others' records, calls nothing
        assert served, f"{study} made no call to the vLLM server"
    with LEDGER.collect() as again:
        assert run_studies(params, [study])[-1]["error"] is None
    assert not [r for r in again.records if not r.cached]


def test_requests_overlapped_on_the_server(params, vllm_server):
    run_studies(params, ["aut"])
    peaks = peak_in_flight()
    assert any(vllm_server.url in k and v > 1 for k, v in peaks.items()), peaks
