"""Every study's run id under each parameter profile, pinned: a change that moves one fails here (a moved
run id means a warm rebuild of the book calls every model again). Computed with no staged data, offline, in an
empty data home, so every dataset is the bundled sample and the entailment backend the cosine fallback."""
import os

import pytest

from creval.book.params import load_params
from creval.core.paths import params_dir
from creval.measures.nli import backends
from creval.studies.registry import STUDIES

PINNED = {
    "default/apparatus": "282e6eab55",
    "default/aut": "a1be3c9b9a",
    "default/compare": "1ff3632de1",
    "default/convergent": "d411b39b81",
    "default/divergent": "393e36f972",
    "default/neocoder": "10f8587e5a",
    "default/reportcard": "2ef92ace7d",
    "default/rethinking": "aeea6f57e0",
    "default/validation": "6880d53a3c",
    "paper/apparatus": "282e6eab55",
    "paper/aut": "cf681d0d2a",
    "paper/compare": "10549c02bf",
    "paper/convergent": "b3f4f56239",
    "paper/divergent": "c854e935ab",
    "paper/neocoder": "51675d8918",
    "paper/reportcard": "b404f2c23b",
    "paper/rethinking": "43a7fca225",
    "paper/validation": "91373a1797",
    "smoke/apparatus": "8e8e954556",
    "smoke/aut": "d9e1778b7e",
    "smoke/compare": "d4ebc74038",
    "smoke/convergent": "fbc449eb30",
    "smoke/divergent": "8870d99599",
    "smoke/neocoder": "338312d07b",
    "smoke/reportcard": "f94247fb34",
    "smoke/rethinking": "89a340abe8",
    "smoke/validation": "5e6660f83b",
}


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "CREVAL_HOME": str(tmp_path)}.items():
        monkeypatch.setenv(k, v)
    for k in [k for k in os.environ if k.startswith("CREVAL_") and k.endswith("_DIR")]:
        monkeypatch.delenv(k)
    monkeypatch.setattr(backends, "LOADED", type(backends.LOADED)())


@pytest.mark.parametrize("profile", ["default", "smoke", "paper"])
def test_run_ids_are_pinned(profile, bare_machine):
    params = load_params(params_dir() / f"{profile}.yaml")
    want = {k: v for k, v in PINNED.items() if k.startswith(f"{profile}/")}
    missing = sorted(k for k in want if k.split("/", 1)[1] not in STUDIES)
    assert not missing, f"pinned studies no longer registered: {missing}"
    got = {k: STUDIES[k.split("/", 1)[1]].make_config(params).run_id for k in want}
    assert got == want        # a study added later is not pinned here until its records exist somewhere
