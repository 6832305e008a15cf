"""A study's fetch step downloads exactly the datasets it declares and its Config reads (through each dataset's
fallback chain, pinned sha256); its run id and ``resolved()`` only look. No network: a local HTTP server."""
from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from creval.core import paths
from creval.datasets import base, bookmia, hypogen, macgyver
from creval.studies.divergent import STUDY as DIVERGENT
from creval.studies.divergent.config import DivergentConfig

SAMPLE = paths.samples_dir() / "macgyver" / "problem_solution_pair.jsonl"


@pytest.fixture
def online(monkeypatch, tmp_path, server):
    """No staged data, an empty data home, downloads allowed (they reach only the local server)."""
    for ds in (macgyver, hypogen, bookmia):
        monkeypatch.delenv(ds.DATASET.env, raising=False)
    for k, v in {"CREVAL_SHARED_DATA": "none", "CREVAL_HOME": str(tmp_path / "home"), "CREVAL_OFFLINE": "0"}.items():
        monkeypatch.setenv(k, v)
    base.FAILURES.reset()
    www, url = server
    (www / "mg").mkdir()
    rows = [json.loads(x) for x in SAMPLE.read_text().splitlines()]
    (www / "mg" / SAMPLE.name).write_text("".join(json.dumps({**r, "ID": f"dl{r['ID']}"}) + "\n" for r in rows))
    yield www, url
    base.FAILURES.reset()


def test_fetch_downloads_what_is_read_and_lookups_never_do(online):
    www, url = online
    served = dataclasses.replace(macgyver.DATASET, remotes=(base.Remote(
        f"{url}/mg/{SAMPLE.name}", hashlib.sha256((www / "mg" / SAMPLE.name).read_bytes()).hexdigest(), SAMPLE.name),))
    asked = []                                       # datasets declared but not read by this config

    def never(dest):
        asked.append(dest.name)
    unread = tuple(dataclasses.replace(d.DATASET, remotes=(), fetch=never) for d in (hypogen, bookmia))
    study = dataclasses.replace(DIVERGENT, datasets=(served, *unread))
    cfg = DivergentConfig(divergent_domains=("macgyver",), divergent_sweep_domain="macgyver")
    dest = paths.downloads_dir() / "macgyver"

    before = cfg.run_id
    assert cfg.resolved()["data"] == {"macgyver": "sample"} and cfg.run_id == before
    assert not dest.exists()                         # the run id and resolved() only looked
    study.fetch(cfg)
    assert (dest / SAMPLE.name).read_text() == (www / "mg" / SAMPLE.name).read_text()
    assert asked == []                               # hypogen and bookmia are declared but not read here
    assert cfg.resolved()["data"] == {"macgyver": "real"}
    assert cfg.run_id != before                      # the run id names the data the run reads
    assert macgyver.load_problems()[0][0]["problem_id"].startswith("macgyver-dl")   # the served copy is read

    wide = DivergentConfig(divergent_domains=("macgyver", "hypogen"), divergent_sweep_domain="bookmia")
    study.fetch(wide)
    assert sorted(asked) == ["bookmia", "hypogen"]


def test_divergent_reads_only_its_domains_and_the_entailment_data():
    cfg = DivergentConfig(divergent_domains=("hypogen",), divergent_sweep_domain="hypogen")
    assert [d.name for d in DIVERGENT.datasets if cfg.reads_dataset(d.name)] == ["hypogen", "sick", "msrp"]


def test_a_reader_fetches_first_what_the_studies_it_reads_fetch(monkeypatch):
    from creval.studies import contract
    from creval.studies.compare import STUDY as COMPARE
    from creval.studies.compare.config import CompareConfig
    from creval.studies.convergent import STUDY as CONVERGENT
    from creval.studies.convergent.config import ConvergentConfig
    got = []
    monkeypatch.setattr(contract, "fetch_dataset", lambda ds: got.append(ds.name))
    CONVERGENT.fetch(ConvergentConfig.from_params({"divergent_domains": ["hypogen"],
                                                   "divergent_sweep_domain": "hypogen"}))
    assert got == ["hypogen", "sick", "msrp", "macgyver"]          # divergent's (as configured), then its own
    got.clear()
    COMPARE.fetch(CompareConfig.from_params({"compare_roots": ["elsewhere"]}))
    assert got == []                                                # it reads finished runs of other roots only


def test_study_of_a_config_is_its_packages_study():
    from creval.studies.config import Config
    from creval.studies.contract import study_of
    from creval.studies.convergent import STUDY as CONVERGENT
    from creval.studies.convergent.config import ConvergentConfig
    assert study_of(ConvergentConfig()) is CONVERGENT and study_of(DivergentConfig()) is DIVERGENT

    class Loose(Config):                              # a Config whose package declares no study
        pass
    assert study_of(Loose()) is None
