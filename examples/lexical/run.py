"""The lexical study's run: one unit per (model, problem); each unit samples its answers in one batched call."""
from __future__ import annotations

from pathlib import Path

from creval.core.units import Unit, run_units
from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.measures.diversity import distinct_n
from creval.models.registry import load_model
from creval.models.width import width
from creval.studies import contract
from lexical.records import AnswerRecord


def run(cfg) -> Path:
    store = contract.start(cfg)
    dom = get_domain("macgyver")
    problems = dom.load(limit=cfg.lexical_problems, seed=cfg.data_seed)
    models = {name: load_model(name) for name in cfg.tested}
    for m in models.values():
        store.note_model(m)

    def work(unit: Unit) -> dict:
        name, problem = unit.item
        samples = models[name].sample(step_messages(dom, problem, [], max_steps=5), cfg.lexical_samples,
                                      max_tokens=cfg.lexical_max_tokens, stop=("\n",), seed=cfg.seed)
        texts = [s.text for s in samples]
        return {"answers": [AnswerRecord(name, problem.problem_id, distinct_n(texts, 2), len(texts)).to_dict()]}

    units = [Unit(f"{name}/{p.problem_id}", (name, p)) for name in cfg.tested for p in problems]
    tables = run_units(cfg.run_dir, "answers", units, work, width=width(*cfg.tested), desc="lexical")
    store.write("answers", tables.get("answers", []))
    return contract.finish(store)
