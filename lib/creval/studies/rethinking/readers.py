"""Reading chapter 06's records (``STUDY.records(cfg)``): which text sets carry human
labels, one frame of measures per set (perplexity columns of one model), the rubric judge's scores, and the
rows of a check of a measure against people. Pure: records in, DataFrames and dicts out."""
from __future__ import annotations

import numpy as np
import pandas as pd

from creval.measures import pertext as P
from creval.measures.stats import correlation as corr
from creval.measures.stats import verdicts as V
from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.tracking import column_stats

MEASURES = {"ci": "creativity index", "ppl": "perplexity", "ppl_cond": "PPL(text | problem)", "bpb": "bits per byte",
            "tpt": "templates per token", "has_template": ">= 1 template", "judge": "rubric judge"}
DIRECTION = P.DIRECTION     # expected sign if the measure tracks what people call creative (+: higher = more creative)
WITH_CONTEXT = ("ps", "aut")           # sets scored by perplexity given their problem too


def set_info(recs, text_set: str) -> dict:
    """The ``sets`` row of ``text_set`` (a stand-in saying why when the records have none)."""
    s = recs["sets"]
    row = s[s["set"] == text_set] if len(s) else s
    return row.iloc[0].to_dict() if len(row) else {"labelled": False, "why": f"no {text_set} texts in these records"}


def labelled(recs, text_set: str) -> bool:
    """Whether the run found the human labels of ``text_set``."""
    return bool(set_info(recs, text_set).get("labelled"))


def unlabelled_reason(recs, text_set: str) -> str:
    """Why ``text_set`` has no real labels in this run (the bundled sample, or no data); empty when it has."""
    return str(set_info(recs, text_set).get("why") or "")


def measures(recs, text_set: str, model: str | None = None) -> pd.DataFrame:
    """One row per text: the run's measures of ``text_set`` with the perplexity columns of ``model``
    (``ppl``, ``bpb``, and ``ppl_cond`` for ``ps`` and ``aut``; NaN where the text was not scored) and, for the
    MacGyver sets, the formatting control's ``ci_unmarked`` and ``marked``."""
    m = recs[f"measures_{text_set}"].copy()
    if m.empty:
        return m
    model = model or recs.cfg.model
    cols = ["ppl", "bpb"] + (["ppl_cond"] if text_set in WITH_CONTEXT else [])
    p = recs["perplexity"]
    if len(p):
        p = p[(p["set"] == text_set) & (p["model"] == model)]
        m = m.merge(p[["id", *[c for c in cols if c in p.columns]]], on="id", how="left")
    for c in cols:
        if c not in m.columns:
            m[c] = np.nan
    f = recs["formatting"]
    if len(f) and (f["set"] == text_set).any():
        m = m.merge(f[f["set"] == text_set][["id", "marked", "ci_unmarked"]], on="id", how="left")
    return m


def judge_scores(recs, text_set: str = "ps") -> pd.DataFrame:
    """Rubric-judge scores (expected values) of the judged texts of a set: ``id, kind, label, judge``,
    ``judge_<aspect>`` and ``state``."""
    j = recs["judge"]
    j = j[j["set"] == text_set] if len(j) else j
    if j.empty:
        return pd.DataFrame(columns=["id", "kind", "label", "judge"])
    out = j[["id", "kind", "label", "judge"]].reset_index(drop=True)
    for a in j["scores"].iloc[0]:
        out[f"judge_{a}"] = [s[a] for s in j["scores"]]
    out["state"] = list(j["state"])
    return out


def with_judge(recs, text_set: str, model: str | None = None) -> pd.DataFrame:
    """:func:`measures` with the rubric judge's headline score ``judge`` (NaN where not judged)."""
    m = measures(recs, text_set, model)
    if m.empty:
        return m
    j = judge_scores(recs, text_set)
    return m.merge(j[["id", "judge"]], on="id", how="left") if len(j) else m.assign(judge=np.nan)


def group_templates(recs, text_set: str, n: int, mode: str = "sequence") -> pd.DataFrame:
    """The ``templates`` rows of one set, template length and matching mode (one per group)."""
    t = recs["templates"]
    if t.empty:
        return t
    return t[(t["set"] == text_set) & (t["n"] == n) & (t["mode"] == mode)]


def check_rows(check: str, m: pd.DataFrame, label_col: str, kind: str, cols=None, n_boot: int = 1000,
               seed: int = 0, names: dict | None = None, stratum: str | None = None) -> list[dict]:
    """One row per measure: AUROC (``kind="auc"``, two labelled groups) or Spearman rho (``"rho"``) of the
    measure against ``m[label_col]``, a 95% percentile bootstrap CI that resamples whole groups (``m["group"]``:
    a problem, a pair, a plot, an object: the independent unit) with the number of ``units``, n, p, whether it
    goes the creative way, and
    whether its interval excludes chance (strictly, as the report card reads it: the interval decides, never
    the point or a p-value alone), ``borderline`` where a bound's Monte-Carlo margin could change that.
    ``stratum``: the column holding the prompt (the AUT ``object``), a stratum: each text is a unit drawn within
    it (the dataset's declared unit and stratum, :data:`creval.datasets.aut.DATASET`). An interval whose
    resamples cannot vary is not given (issue 66)."""
    names = {**MEASURES, **(names or {})}
    rows = []
    for c in cols or [c for c in MEASURES if c in m.columns]:
        x, y = m[c].astype(float).to_numpy(), m[label_col].astype(float).to_numpy()
        keep = np.isfinite(x) & np.isfinite(y)
        unit = m["group"].astype(str).to_numpy()[keep] if "group" in m else None
        unit, strata = (None, m[stratum].astype(str).to_numpy()[keep]) if stratum else (unit, None)
        if kind == "auc":
            r, chance, stat = corr.auc(y, x), 0.5, "auc"
            val = r["auc"]
        else:
            r, chance, stat = corr.spearman(x, y), 0.0, "spearman"
            val = r["rho"]
        b = cluster_bootstrap(lambda xx, yy: column_stats(xx[:, None], yy, stat)[0], x[keep], y[keep],
                              cluster=unit, group=strata, n_boot=n_boot, seed=seed)
        ok = not r["note"] and b["n"] >= corr.MIN_N
        r = {**r, "lo": b["lo"] if ok else np.nan, "hi": b["hi"] if ok else np.nan, "units": b["n_units"],
             "note": "; ".join(t for t in (r["note"], b["note"] if ok else "") if t)}
        ok = ok and np.isfinite(r["lo"])             # no interval (it could not vary): nothing excludes chance
        agrees = "" if np.isnan(val) else ("yes" if (val - chance) * DIRECTION[c] > 0 else "no")
        sig = V.excludes_chance(r["lo"], r["hi"], None, chance)      # the interval, as on the report card
        near = ok and any(V.excludes_chance(r["lo"] + a, r["hi"] + c, None, chance) != sig
                          for a in (-b["mc_lo"], b["mc_lo"]) for c in (-b["mc_hi"], b["mc_hi"])
                          if np.isfinite(a) and np.isfinite(c))
        rows.append({"check": check, "measure": names[c], "statistic": "AUROC" if kind == "auc" else "Spearman rho",
                     "value": val, "ci_low": r["lo"], "ci_high": r["hi"], "n": r["n"], "units": r["units"],
                     "p": r["p"],
                     "right direction": agrees, "CI excludes chance": "yes" if sig else "no",
                     "borderline": bool(near), "note": r["note"]})
    return rows


def skipped(check: str, why: str) -> list[dict]:
    """The one row of a check that cannot run here, saying why."""
    return [{"check": check, "measure": "–", "statistic": "–", "value": np.nan, "ci_low": np.nan, "ci_high": np.nan,
             "n": 0, "right direction": "", "CI excludes chance": "", "note": f"skipped: {why}"}]
