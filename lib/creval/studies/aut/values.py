"""What the AUT study hands the comparison: the fixed judge's originality scores and the generated uses."""
from __future__ import annotations

from creval.datasets import aut
from creval.studies.values import idea_row, value_row


def values(recs, models, judge: str = "") -> list[dict]:
    """The fixed judge's originality score (1-5) of a model's uses, mean per object x level."""
    j = recs["judgments"]
    if not len(j):
        return []
    j = j[(j["judge"] == judge) & (j["method"] == "score") & j["generator"].isin(models) & j["value"].notna()]
    return [value_row(m, "aut", "AUT originality (judge score 1-5)", f"{o}/{lv}", g["value"].astype(float).mean(),
                      judge)
            for (m, o, lv), g in j.groupby(["generator", "object", "level"], sort=False)]


def ideas(recs, models) -> list[dict]:
    """Each model's uses of each object (refusals left out)."""
    u = recs["uses"]
    if not len(u):
        return []
    u = u[u["generator"].isin(models) & ~u["refused"].astype(bool)]
    return [idea_row("AUT uses", r["object"], r["generator"], r["text"]) for r in u.to_dict("records")]


def people(task: str):
    """People's answers to the prompts of ``task`` (``problem_id, text``): the Ocsai-1 human responses for the
    AUT uses; None for any other task."""
    if task != "AUT uses":
        return None
    return aut.load_ocsai(n=None, objects=None).rename(columns={"prompt": "problem_id", "response": "text"})
