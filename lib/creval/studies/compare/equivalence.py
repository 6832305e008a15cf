"""The equivalence-judge partition beside the entailment clustering, on the same samples (chapter 09): the n
samples of the first step of ``equivalence_steps`` divergent problems per model (the divergent study's records,
which hold their entailment classes) are partitioned again by ``judge_model`` with NoveltyBench's protocol
(:class:`creval.judges.equivalence.EquivalenceJudge`, input order shuffled with ``seed``). One unit per step,
through the one unit runner. Rows: ``model, domain, problem_id, n, distinct_entailment, distinct_judge,
rand_index, calls, unparsed, provenance``."""
from __future__ import annotations

from creval.core.units import Unit, run_units
from creval.judges.equivalence import EquivalenceJudge, pair_agreement, prompt_hash
from creval.judges.pairwise import judge_version
from creval.models import registry
from creval.studies.units import width

WORDS = 80


def step_units(srcs, n_steps: int) -> list[Unit]:
    """The first ``n_steps`` first-step rows (by domain, problem, model) of the divergent records read."""
    rows = []
    for s in srcs:
        if s.study != "divergent" or s.records is None:
            continue
        st, pr = s.records["steps"], s.records["problems"]
        if not len(st):
            continue
        text = dict(zip(zip(pr["problem_id"], pr["model"]), pr["problem_text"])) if len(pr) else {}
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
    """Every step's two partitions (none when ``equivalence_steps`` is 0 or no divergent records were read)."""
    us = step_units(srcs, cfg.equivalence_steps) if cfg.equivalence_steps else []
    if not us:
        return []
    return run_units(root, "equivalence", us, judge_step(cfg.judge_model, cfg.seed), width=width(cfg.judge_model),
                     desc="equivalence judge").get("equivalence", [])
