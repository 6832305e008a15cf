"""What the divergent study hands the comparison: its per-item values, the texts of its first steps and people's
answers to the same problems."""
from __future__ import annotations

from creval.datasets import macgyver
from creval.measures.entropy import distinct_at_k
from creval.studies.values import idea_row, value_row


def values(recs, models, judge: str = "") -> list[dict]:
    """Semantic entropy (mean over a solution's steps) per problem, and distinct@n (meaning classes among
    a step's n samples, STOP rows left out, mean over the problem's steps) per problem, per domain."""
    rows = []
    p = recs["problems"]
    for r in p[p["model"].isin(models)].to_dict("records") if len(p) else []:
        rows.append(value_row(r["model"], "divergent", f"semantic entropy ({r['domain']})", r["problem_id"],
                              r["mean_semantic_entropy"]))
    s = recs["steps"]
    if len(s):
        s = s[s["model"].isin(models) & ~s["is_stop"].astype(bool)]
        for (m, d, pid), g in s.groupby(["model", "domain", "problem_id"], sort=False):
            n = int(g["n"].iloc[0])
            rows.append(value_row(m, "divergent", f"distinct@{n} ({d})", pid,
                                  g["cluster_ids"].map(distinct_at_k).mean()))
    return rows


def ideas(recs, models) -> list[dict]:
    """The n samples of each problem's first step, per model (the prompts every model answered)."""
    s = recs["steps"]
    if not len(s):
        return []
    s = s[s["model"].isin(models) & (s["step_index"] == 0) & ~s["is_stop"].astype(bool)]
    return [idea_row(f"divergent first step ({r['domain']})", r["problem_id"], r["model"],
                     x.get("clean") or x.get("text") or "")
            for r in s.to_dict("records") for x in r["samples"]]


def people(task: str):
    """People's answers to the prompts of ``task`` (``problem_id, text``): the MacGyver crowd solutions for the
    MacGyver first steps; None for the other domains (no human answers)."""
    if task != "divergent first step (macgyver)":
        return None
    return macgyver.load_human_solutions().rename(columns={"solution": "text"})
