"""What the convergent study hands the comparison: the bench judge's per-problem score."""
from __future__ import annotations

from creval.studies.values import value_row


def values(recs, models, judge: str = "") -> list[dict]:
    """The bench judge's share of yes over a solution's criteria (unparsed left out), per problem."""
    v = recs["bench_verdicts"]
    if not len(v):
        return []
    v = v[v["model"].isin(models) & ~v["unparsed"].astype(bool)]
    return [value_row(m, "convergent", f"convergent judge score ({d})", str(pid).split("::")[0],
                      g["verdict"].astype(float).mean(), judge)
            for (m, d, pid), g in v.groupby(["model", "domain", "pair_id"], sort=False)]
