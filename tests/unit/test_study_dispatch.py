"""Issue 44: no study is picked by its name outside the registry. The equivalence judge reads whichever study
declares a ``steps`` table of step samples, ``creval new-study`` finds its package through the registry's
discovery, and convergent reads the divergent parameters from the divergent Config, not the pass-through."""
import json
from dataclasses import dataclass

import pandas as pd
import pytest

from creval.commands.new_study import discovered
from creval.core.errors import CrevalError
from creval.core.records import Record
from creval.studies import registry
from creval.studies.compare.equivalence import step_units, writes_step_samples
from creval.studies.compare.sources import Source
from creval.studies.config import Config
from creval.studies.contract import Records, Study
from creval.studies.convergent import reading
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.convergent.estimate import estimate
from creval.studies.divergent.config import DivergentConfig


@dataclass
class ToyStep(Record):
    problem_id: str
    domain: str
    model: str
    step_index: int
    is_stop: bool
    samples: list
    cluster_ids: list


def test_only_a_study_declaring_step_samples_is_partitioned_again():
    assert [n for n in registry.STUDIES if writes_step_samples(n)] == ["divergent"]


def test_a_new_study_writing_step_samples_qualifies_without_naming_it(monkeypatch):
    toy = Study("toysteps", "chapters/none.ipynb", Config, run=lambda cfg: None, tables={"steps": ToyStep})
    monkeypatch.setitem(registry.STUDIES, "toysteps", toy)
    steps = pd.DataFrame([{"problem_id": "p", "domain": "d", "model": "m", "step_index": 0, "is_stop": False,
                           "samples": [{"text": "a"}, {"clean": "b"}], "cluster_ids": [0, 1]}])
    src = Source("root", "toysteps", ("m",), records={"steps": steps})
    units = step_units([src, Source("root", "aut", ("m",), records={})], 5)
    assert [u.key for u in units] == ["m::d::p"]
    assert units[0].item["samples"] == ["a", "b"] and units[0].item["task"] == ""


def test_new_study_gets_its_study_from_the_registrys_discovery():
    assert discovered("divergent") == registry.get_study("divergent")
    with pytest.raises(CrevalError, match="declares no study"):
        discovered("nowhere")


@pytest.fixture
def no_pass_through(monkeypatch):
    """The names a ConvergentConfig was asked for that it lacks, each an AttributeError (the pass-through is gone;
    this keeps the record of what was asked)."""
    asked = []

    def refuse(self, name):
        asked.append(name)
        raise AttributeError(name)
    monkeypatch.setattr(ConvergentConfig, "__getattr__", refuse, raising=False)
    return asked


def test_convergent_reads_the_divergent_parameters_from_their_config(no_pass_through, tmp_path):
    cfg = ConvergentConfig.from_params({"divergent_limit": 2, "divergent_domains": ["macgyver"]})
    bench = [p for p in estimate(cfg).phases if p.name.startswith("bench")]
    assert bench and all(p.name.endswith("/macgyver") and p.units == 2 for p in bench)
    row = {"judge": "retrieval", "pair_id": "a", "criterion": "feasibility", "verdict": True, "label": True,
           "unparsed": False, "confidence": 0.8, "input_tokens": 100, "output_tokens": 10, "rounds": 1,
           "early_exit": True, "retries": 0}
    (tmp_path / "human_verdicts.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "bench_verdicts.jsonl").write_text(json.dumps({**row, "model": "m", "domain": "macgyver",
                                                               "mean_semantic_entropy": 1.0}) + "\n")
    md = reading.what_this_shows(Records(tmp_path, cfg))
    assert "`divergent_limit` = 2 problem(s)" in md
    assert not set(no_pass_through) & set(DivergentConfig.keys())
