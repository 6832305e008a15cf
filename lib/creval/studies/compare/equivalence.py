"""The equivalence-judge partition beside the entailment clustering, on the same samples (chapter 09): the n
samples of the first step of ``equivalence_steps`` problems per model, from every study read whose declared
``steps`` table holds each step's samples and their entailment classes (:func:`writes_step_samples`; today
the divergent study's records) are partitioned again by ``judge_model`` with NoveltyBench's protocol
(:class:`creval.judges.equivalence.EquivalenceJudge`, input order shuffled with ``seed``). One unit per step,
through the one unit runner. Rows: ``model, domain, problem_id, n, distinct_entailment, distinct_judge,
rand_index, calls, unparsed, provenance``."""
from __future__ import annotations

import dataclasses

from creval.core.units import Unit, run_units
from creval.judges.equivalence import EquivalenceJudge, pair_agreement, prompt_hash
from creval.judges.pairwise import judge_version
from creval.models import registry
from creval.models.width import width
from creval.studies.registry import get_study

WORDS = 80
STEP_COLUMNS = ("problem_id", "domain", "model", "step_index", "is_stop", "samples", "cluster_ids")


def writes_step_samples(study: str) -> bool:
    """True when ``study`` declares a ``steps`` table whose record type has :data:`STEP_COLUMNS` (each step's
    samples and their entailment classes): its steps can be partitioned again. The test names no study."""
    kind = get_study(study).tables.get("steps")
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        return False
    return set(STEP_COLUMNS) <= {f.metadata.get("column", f.name) for f in dataclasses.fields(kind)}


def step_units(srcs, n_steps: int) -> list[Unit]:
    """The first ``n_steps`` first-step rows (by domain, problem, model) of the records read whose study
    :func:`writes_step_samples` (a task's text from its ``problems`` table, where it declares one)."""
    rows = []
    for s in srcs:
        if s.records is None or not writes_step_samples(s.study):
            continue
        st = s.records["steps"]
        pr = s.records["problems"] if "problems" in get_study(s.study).tables else ()
        if not len(st):
            continue
        text = dict(zip(zip(pr["problem_id"], pr["model"]), pr["problem_text"])) \
            if len(pr) and "problem_text" in pr else {}
        st = st[st["model"].isin(s.models) & (st["step_index"] == 0) & ~st["is_stop"].astype(bool)]
        for r in st.sort_values(["domain", "problem_id", "model"]).to_dict("records"):
            samples = [str(x.get("clean") or x.get("text") or "").strip() for x in r["samples"]]
            rows.append(Unit(f"{r['model']}::{r['domain']}::{r['problem_id']}",
                             {"model": r["model"], "domain": r["domain"], "problem_id": r["problem_id"],
                              "task": text.get((r["problem_id"], r["model"]), ""), "samples": samples,
                              "entailment": list(r["cluster_ids"]), "nli": r.get("nli", "")}))
    return rows[:n_steps]


def judge_step(judge_model: str, seed: int):
    def work(u: Unit) -> dict:
        x = u.item
        model = registry.load_model(judge_model)
        part = EquivalenceJudge(model, WORDS, seed).partition(x["task"], x["samples"], salt=u.key)
        prov = {"judge_model": judge_model, "judge_version": judge_version(model),
                "prompt_sha": prompt_hash(), "sampling": f"choice log-probs of Yes/No; answers clipped to {WORDS} "
                                                          "words", "order_seed": seed}
        return {"equivalence": [{"model": x["model"], "domain": x["domain"], "problem_id": x["problem_id"],
                                 "n": len(x["samples"]), "distinct_entailment": len(set(x["entailment"])),
                                 "distinct_judge": part.distinct, "labels_judge": part.labels,
                                 "labels_entailment": x["entailment"], "nli": x["nli"],
                                 "rand_index": pair_agreement(part.labels, x["entailment"]),
                                 "calls": part.calls, "unparsed": part.unparsed, "provenance": prov}]}
    return work


def equivalence_rows(cfg, srcs, root) -> list[dict]:
    """Every step's two partitions (none when ``equivalence_steps`` is 0 or no step samples were read)."""
    us = step_units(srcs, cfg.compare_equivalence_steps) if cfg.compare_equivalence_steps else []
    if not us:
        return []
    return run_units(root, "equivalence", us, judge_step(cfg.judge_model, cfg.seed), width=width(cfg.judge_model),
                     desc="equivalence judge").get("equivalence", [])
