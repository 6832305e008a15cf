"""What the NeoCoder study hands the comparison: per live round, each problem's NeoGauge term and pass@1."""
from __future__ import annotations

from creval.studies.values import value_row


def values(recs, models, judge: str = "") -> list[dict]:
    """Per live round: the NeoGauge term (follows x correct x novelty) and pass@1 (strict judge) per problem."""
    r = recs["rounds"]
    rows = []
    for x in r[r["model"].isin(models)].to_dict("records") if len(r) else []:
        rows.append(value_row(x["model"], "neocoder", f"NeoGauge term (round {x['round']})", x["problem_id"],
                              x["neogauge_term"]))
        rows.append(value_row(x["model"], "neocoder", f"pass@1 strict (round {x['round']})", x["problem_id"],
                              float(bool(x["verdict_strict"].get("correct")))))
    return rows
