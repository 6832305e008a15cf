"""Chapter 01's run: ``apparatus_samples`` first steps of the first MacGyver problem (the one chapter 02
solves first), one batched call, every token's log-prob, into ``cfg.run_dir/samples.jsonl``."""
from __future__ import annotations

from pathlib import Path

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.models import registry
from creval.studies import contract
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.apparatus.records import SampleRecord

DOMAIN = "macgyver"


def run(cfg: ApparatusConfig) -> Path:
    dom = get_domain(DOMAIN)
    problem, where = dom.load_with_source(limit=1, seed=cfg.data_seed)
    problem = problem[0]
    store = contract.start(cfg)
    store.params["data_source"] = where
    m = registry.load_model(cfg.model)
    store.note_model(m)
    samples = m.sample(step_messages(dom, problem, [], max_steps=5), cfg.apparatus_samples,
                       temperature=cfg.apparatus_temperature, top_p=cfg.apparatus_top_p,
                       max_tokens=cfg.apparatus_max_tokens,
                       stop=("\n",), seed=cfg.seed)
    store.write("samples", [SampleRecord.of(problem, i, m.logprob_kind, s).to_dict() for i, s in enumerate(samples)])
    return contract.finish(store)
