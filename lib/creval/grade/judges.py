"""Judges judged against people (issue 64, ``creval judges``): a long file of ratings, one row per text and rater,
people and LLM judges mixed (a kind column says which), read as a researcher asks it. For every rater: its
agreement with the people (the mean of the other people, Spearman, within prompts when prompts are given) with a
resampled interval, the people's own ceiling beside it; and its severity and discrimination from one graded
response model with the people inside it (:mod:`creval.measures.stats.irt`), so a judge's severity is read against
the people's, not against other judges. The calibrated score of every text is the model's latent quality.

Pure: a folded long table in, rows and a figure out; :mod:`creval.commands.judges` reads and writes the files.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from creval.grade import raters as R
from creval.grade.raters import Ratings
from creval.measures.stats import alttest, irt
from creval.measures.stats.resample import cluster_draws, percentile

PEOPLE = ("person", "human", "people", "expert", "lay", "crowd", "annotator", "rater")
"""Kinds read as people; any other kind (judge, llm, model, ...) is a judge."""


def is_person(kind: str | None) -> bool:
    return str(kind or "person").strip().lower() in PEOPLE


def people_of(r: Ratings) -> list[int]:
    """The columns of ``r.matrix`` whose rater is a person (:func:`is_person` of its kind)."""
    return [j for j, name in enumerate(r.raters) if is_person((r.kinds or {}).get(name))]


def agreement_rows(m: np.ndarray, people: list[int], group=None, n_boot: int = 1000, seed: int = 0) -> dict:
    """:func:`creval.grade.raters.matched` for every rater and the people's ceiling, each with a percentile
    interval resampling prompts (texts when no prompt is given), and every judge's lead over the ceiling with the
    interval of that paired difference: ``{values, lo, hi, ceiling,
    ceiling_lo, ceiling_hi, lead, lead_lo, lead_hi}``."""
    units = None if group is None else np.asarray(group, dtype=object)
    values = R.matched(m, people, units)
    ceil = R.ceiling_of(values, m, people)
    reps, ceils = [], []
    for idx in cluster_draws(units, len(m), n_boot, seed):
        v = R.matched(m, people, units, idx)
        reps.append(v)
        ceils.append(R.ceiling_of(v, m[idx], people))
    reps, ceils = np.array(reps).reshape(-1, m.shape[1]), np.array(ceils)
    out = {"values": values, "ceiling": ceil, "lead": values - ceil,
           "lo": np.full(m.shape[1], np.nan), "hi": np.full(m.shape[1], np.nan),
           "lead_lo": np.full(m.shape[1], np.nan), "lead_hi": np.full(m.shape[1], np.nan)}
    c = percentile(ceils, 0.05, n_boot)
    out["ceiling_lo"], out["ceiling_hi"] = c["lo"], c["hi"]
    for j in range(m.shape[1]):
        a, d = percentile(reps[:, j], 0.05, n_boot), percentile(reps[:, j] - ceils, 0.05, n_boot)
        out["lo"][j], out["hi"][j], out["lead_lo"][j], out["lead_hi"][j] = a["lo"], a["hi"], d["lo"], d["hi"]
    return out


def margin(kinds: list[str], epsilon: float | None = None) -> float:
    """The alternative-annotator test's epsilon: the one given, else the paper's by the people's kind (0.1 when
    every person is an expert, 0.2 otherwise)."""
    if epsilon is not None:
        return float(epsilon)
    return alttest.EPSILON["expert"] if kinds and all(str(k).lower() == "expert" for k in kinds) \
        else alttest.EPSILON["crowd"]


def judge_table(r: Ratings, group=None, n_boot: int = 1000, irt_boot: int = 100, seed: int = 0,
                epsilon: float | None = None) -> dict:
    """Every rater of ``r`` (its ``kinds`` say who is a person): agreement with the people and its interval,
    severity and discrimination with intervals from one graded response model, and for a judge the alternative
    annotator test (winning rate, whether it passes, advantage probability, at ``epsilon``); ``ceiling`` (the
    people's mean agreement, each held out), ``scores`` (each text's calibrated score), ``people_mean`` (each
    text's people's mean) and ``rows``."""
    kinds = r.kinds or {}
    people = people_of(r)
    agree = agreement_rows(r.matrix, people, group, n_boot, seed)
    rows = []
    for j, name in enumerate(r.raters):
        person = j in people
        rows.append({"rater": name, "kind": kinds.get(name, "person"), "person": person,
                     "n": int(np.isfinite(r.matrix[:, j]).sum()), "agreement": float(agree["values"][j]),
                     "agreement_lo": float(agree["lo"][j]), "agreement_hi": float(agree["hi"][j]),
                     **({k: math.nan for k in ("lead", "lead_lo", "lead_hi")} if person else
                        {k: float(agree[k][j]) for k in ("lead", "lead_lo", "lead_hi")})})
    fitted = [j for j in range(len(r.raters)) if np.isfinite(r.matrix[:, j]).sum() >= irt.MIN_TEXTS]
    model = irt.fit_with_intervals(r.matrix[:, fitted].T, units=group, n_boot=irt_boot, seed=seed)
    at = {j: i for i, j in enumerate(fitted)}
    for j, row in enumerate(rows):              # a rater with too few texts for the model: NaN, said by its n
        row.update({k: float(model[k][at[j]]) if j in at else math.nan
                    for k in ("severity", "severity_lo", "severity_hi", "discrimination", "discrimination_lo",
                              "discrimination_hi")})
    eps = margin([kinds.get(r.raters[j], "person") for j in people], epsilon)
    for j, row in enumerate(rows):          # can the judge take a person's place (Calderon et al. 2025)?
        alt = alttest.alt_test(r.matrix[:, j], r.matrix[:, people], eps) if not row["person"] else None
        row.update({"alt_winning_rate": alt["winning_rate"] if alt else math.nan,
                    "alt_passes": alt["passes"] if alt else None,
                    "advantage": alt["advantage"] if alt else math.nan, "epsilon": eps})
    with np.errstate(all="ignore"):
        people_mean = np.nanmean(r.matrix[:, people], axis=1)
    return {"rows": rows, "ceiling": agree["ceiling"], "ceiling_lo": agree["ceiling_lo"],
            "ceiling_hi": agree["ceiling_hi"], "scores": model["ability"], "people_mean": people_mean}


def figure(result: dict) -> go.Figure:
    """Raters on a severity x agreement plane, people and judges apart, each with its two intervals; the people's
    ceiling (one person against the others) drawn as a line."""
    fig = go.Figure()
    for person, colour, name in ((True, "#1b7837", "people"), (False, "#b2182b", "judges")):
        rs = [r for r in result["rows"] if r["person"] == person]
        if not rs:
            continue
        fig.add_trace(go.Scatter(
            x=[r["severity"] for r in rs], y=[r["agreement"] for r in rs], mode="markers+text", name=name,
            text=[r["rater"] for r in rs], textposition="top center", marker=dict(color=colour, size=10),
            error_x=dict(type="data", symmetric=False, array=[r["severity_hi"] - r["severity"] for r in rs],
                         arrayminus=[r["severity"] - r["severity_lo"] for r in rs], color=colour, thickness=1),
            error_y=dict(type="data", symmetric=False, array=[r["agreement_hi"] - r["agreement"] for r in rs],
                         arrayminus=[r["agreement"] - r["agreement_lo"] for r in rs], color=colour, thickness=1)))
    if math.isfinite(result.get("ceiling", math.nan)):
        fig.add_hline(y=result["ceiling"], line=dict(color="#555", dash="dash"),
                      annotation_text="people's ceiling (one against the others)")
    fig.update_layout(title="Raters: severity (higher = stricter) and agreement with the people",
                      xaxis_title="severity on the people's latent scale (graded response model)",
                      yaxis_title="Spearman with the mean of the other people", template="plotly_white", height=520)
    return fig
