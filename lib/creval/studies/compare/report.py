"""Chapter 09, comparing models, pure: the comparison's records in (tables of
``STUDY.records(cfg)``), DataFrames (caption in ``df.attrs["caption"]``), a Figure or the
values of a sentence out. No model, judge, embedding or network call.

Every estimate is a mean over items with a 95% percentile bootstrap interval over those items; a difference
between two models is over the items both measured, with a paired bootstrap interval (each replicate resamples
the shared items once); its verdict is "different" when the interval excludes 0, "not shown" otherwise. Every
number is rounded once, by :func:`creval.measures.stats.numbers.fmt_estimate`.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.core.paths import home_relative
from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import verdicts as V
from creval.studies import scores as SC
from creval.studies.compare import provenance as P
from creval.studies.compare.sources import THIS_ROOT
from creval.studies.compare.values import HIGHER, PEOPLE, family
from creval.studies.config import boot_settings
from creval.studies.links import items
from creval.studies.tables import captioned

DIFFERENT, NOT_SHOWN = "different", "not shown"


def models_of(values: pd.DataFrame) -> list[str]:
    """The models compared, in the order they appear (``model`` first in a run of several)."""
    return list(dict.fromkeys(values["model"])) if len(values) else []


def refused_measures(values: pd.DataFrame) -> dict[str, str]:
    """The judged measures whose values were judged differently (judge, its version, prompts, settings or
    seed differ between models): measure -> which fields differ (:func:`.provenance.comparable`)."""
    if not len(values) or "provenance" not in values:
        return {}
    out = {}
    for measure, g in values.groupby("measure", sort=False):
        provs = [p if isinstance(p, dict) else {} for p, j in zip(g["provenance"], g["judge"]) if j]
        ok, why = P.comparable(provs)
        if not ok:
            out[measure] = why
    return out


def comparable_values(values: pd.DataFrame) -> pd.DataFrame:
    """``values`` without the measures :func:`refused_measures` names: they are never put side by side."""
    refused = refused_measures(values)
    return values[~values["measure"].isin(list(refused))] if refused else values


def model_estimates(values: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per measure x model: ``n`` items, ``mean``, its bootstrap ``lo``/``hi``, ``judge`` (measures
    judged differently for different models are left out: :func:`refused_measures`) and ``constant``: the
    reason when at least :data:`~creval.measures.stats.verdicts.DEGENERATE_SHARE` of the items got one value (a judge
    that gives about 2 to everything ranks nothing), else ""."""
    rows, values = [], comparable_values(values)
    if not len(values):
        return pd.DataFrame(columns=["measure", "model", "n", "mean", "lo", "hi", "judge", "constant"])
    for (measure, model), g in values.groupby(["measure", "model"], sort=False):
        x = g["value"].astype(float).to_numpy()
        x = x[np.isfinite(x)]
        lo, hi = corr.bootstrap_ci(np.mean, x, n_boot=n_boot, seed=seed) if len(x) else (np.nan, np.nan)
        rows.append({"measure": measure, "model": model, "n": len(x), "mean": float(x.mean()) if len(x) else np.nan,
                     "lo": lo, "hi": hi, "judge": ", ".join(sorted({j for j in g["judge"] if j})),
                     "constant": flat_values(x, judged=any(g["judge"]))})
    return pd.DataFrame(rows, columns=["measure", "model", "n", "mean", "lo", "hi", "judge", "constant"])


def flat_values(x: np.ndarray, judged: bool = False) -> str:
    """Why a model's item values rank nothing, or "": one value on at least
    :data:`~creval.measures.stats.verdicts.DEGENERATE_SHARE` of the items; for a judge's 1-5 scores averaged per item
    (a judge giving about 2 to every use: items at 2.0, 1.9, 2.1), the same after rounding to the score scale."""
    why = V.constant(list(x), "value", share=V.DEGENERATE_SHARE)
    if why or not judged or not len(x) or x.min() < 1 or x.max() > 5:
        return why or ""
    why = V.constant(list(np.round(x)), "judge score", share=V.DEGENERATE_SHARE)
    return f"{why}, rounded to the 1-5 scale" if why else ""


def paired_differences(values: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per measure x pair of models (a before b): mean(a - b) over the items both measured, its
    paired bootstrap interval, and the verdict (measures judged differently are left out)."""
    rows, order, values = [], models_of(values), comparable_values(values)
    for measure, g in values.groupby("measure", sort=False) if len(values) else []:
        wide = g.pivot_table(index="item", columns="model", values="value", aggfunc="mean")
        for a, b in combinations([m for m in order if m in wide], 2):
            d = corr.paired_mean_diff_ci(wide[a].to_numpy(), wide[b].to_numpy(), n_boot=n_boot, seed=seed)
            verdict = DIFFERENT if d["verdict"] in ("better", "worse") else NOT_SHOWN
            rows.append({"measure": measure, "a": a, "b": b, "n": d["n"], "difference": d["diff"], "lo": d["lo"],
                         "hi": d["hi"], "verdict": verdict, "note": d["note"]})
    return pd.DataFrame(rows, columns=["measure", "a", "b", "n", "difference", "lo", "hi", "verdict", "note"])


# the judged measures' scales, stated with their anchors
SCALES = {"AUT originality": SC.scale_note(SC.AUT_SCALE),
          "convergent judge score": "Scale: the share of a solution's criteria the judge says yes to (0-1: 0 = it "
                                    "meets no criterion, 1 = it meets every one)."}
JUDGE_COLUMNS = ["measure", "model", "judge", "n", "score [95% CI]", "mean words of the texts scored", "scale"]


def _judged_words(recs, measure: str, model: str, items) -> float:
    """Mean length in words of the texts behind ``model``'s judged ``items`` of ``measure``, from the records'
    ideas: an AUT score's uses of the same objects (item ``object/level``); NaN where the comparison's records
    hold no such texts (a convergent judge scored whole solutions, which it does not keep)."""
    ideas = recs["ideas"]
    if family(measure) != "AUT originality" or not len(ideas):
        return np.nan
    objects = {str(i).split("/")[0] for i in items}
    t = ideas[(ideas["task"] == "AUT uses") & (ideas["source"] == model) & ideas["prompt"].astype(str).isin(objects)]
    return float(np.mean(SC.words_of(t["text"]))) if len(t) else np.nan


def table_judge_scores(recs) -> pd.DataFrame:
    """Every judge score of the comparison beside what it rests on: the judge, n items, the mean with its 95%
    bootstrap interval, the mean length in words of the texts it scored, and the scale with its anchors."""
    v = comparable_values(recs["values"])
    v = v[v["judge"].astype(bool)] if len(v) else v
    n_boot, seed = boot_settings(recs)
    rows = []
    for (measure, model), g in v.groupby(["measure", "model"], sort=False) if len(v) else []:
        s = SC.score_summary(g["value"], n_boot=n_boot, seed=seed)
        words = _judged_words(recs, measure, model, g.loc[g["value"].notna(), "item"])
        rows.append({"measure": measure, "model": model, "judge": ", ".join(sorted(set(g["judge"]))), "n": s["n"],
                     "score [95% CI]": num.fmt_estimate(s["mean"], s["lo"], s["hi"], 2),
                     "mean words of the texts scored": num.fmt_number(words, 0) if words == words else "not recorded",
                     "scale": SCALES.get(family(measure), "")})
    return captioned(pd.DataFrame(rows, columns=JUDGE_COLUMNS),
                     "Each judge score with its n, its 95% bootstrap interval over the items and the mean length of "
                     "the texts it scored (a judge that prefers longer texts shows here first; 'not recorded' where "
                     "the comparison's records do not keep the texts), and its scale with the anchors."
                     if rows else "No judged measure in these records.")


def table_models(recs) -> pd.DataFrame:
    """Every model on every measure: mean [95% CI] over the items (columns: models)."""
    est = model_estimates(recs["values"], *boot_settings(recs))
    if est.empty:
        return captioned(pd.DataFrame(), "No values: no study's records were read (see the sources).")
    v = recs["values"]
    words = [_judged_words(recs, m, o, v.loc[(v["measure"] == m) & (v["model"] == o), "item"]) if j else np.nan
             for m, o, j in zip(est["measure"], est["model"], est["judge"])]      # a judge score: its texts' length
    est["cell"] = [f"{num.fmt_estimate(m, lo, hi, 2)} (n={n}" + (f"; {num.fmt_number(w, 0)} words)" if w == w else ")")
                   + (f" CONSTANT: {c}" if c else "") for m, lo, hi, n, c, w
                   in zip(est["mean"], est["lo"], est["hi"], est["n"], est["constant"], words)]
    t = est.pivot(index="measure", columns="model", values="cell").reindex(columns=models_of(recs["values"]))
    t = t.reindex(list(dict.fromkeys(est["measure"]))).reset_index()
    t.insert(1, "higher means", t["measure"].map(lambda m: HIGHER.get(family(m), "")))
    t.columns.name = None
    refused = refused_measures(recs["values"])
    left_out = "".join(f" Left out, judged differently for different models: {m} ({why})." for m, why in
                       refused.items())
    flat = est[est["constant"] != ""]
    constant = (f" {len(flat)} cell(s) marked CONSTANT: one value for nearly every item, so their narrow interval "
                "shows a judge or measure that ranks nothing, not a precise finding." if len(flat) else "")
    return captioned(t, "Each model on each measure: the mean over the items with its 95% bootstrap interval "
                        "(n items; for a judge score, the mean length in words of the texts it scored, where the "
                        "records keep them: the judge-score table below has each scale's anchors). Intervals are "
                        "missing where fewer than 5 items were measured." + constant
                        + left_out)


def table_differences(recs) -> pd.DataFrame:
    """The paired differences, formatted (each number rounded once)."""
    d = paired_differences(recs["values"], *boot_settings(recs))
    if d.empty:
        return captioned(d, "No pair of models measured the same items.")
    out = pd.DataFrame({"measure": d["measure"], "a - b": d["a"] + " - " + d["b"], "shared items": d["n"],
                        "difference [95% CI]": [num.fmt_estimate(x, lo, hi, 3) for x, lo, hi in
                                                zip(d["difference"], d["lo"], d["hi"])],
                        "verdict": d["verdict"], "note": d["note"]})
    return captioned(out, "Differences between two models on the same items: mean of (a - b) over the items both "
                          "measured, with a 95% paired bootstrap interval; 'different' when it excludes 0, "
                          "'not shown' otherwise (also when too few items are shared to give an interval).")


def normalised(est: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """``est`` with ``z``, ``z_lo``, ``z_hi``: each measure centred on the mean of its models' means and divided
    by the standard deviation of all its item values (pooled over models; 1 when it is 0 or undefined)."""
    out = est.copy()
    for measure, g in out.groupby("measure"):
        x = values.loc[values["measure"] == measure, "value"].astype(float)
        sd = float(x.std(ddof=1)) if x.notna().sum() > 1 else np.nan
        sd = sd if np.isfinite(sd) and sd > 0 else 1.0
        centre = float(g["mean"].mean())
        for col, src in (("z", "mean"), ("z_lo", "lo"), ("z_hi", "hi")):
            out.loc[g.index, col] = (g[src] - centre) / sd
    return out


def fig_models(recs) -> go.Figure:
    """Models x measures, each measure normalised (:func:`normalised`), with its 95% interval."""
    v = recs["values"]
    est = model_estimates(v, *boot_settings(recs))
    fig = go.Figure()
    if est.empty:
        return fig.update_layout(title="No values to compare")
    z = normalised(est, v)
    for model in models_of(v):
        g = z[z["model"] == model]
        hover = [f"{model}<br>{m}: {num.fmt_estimate(x, lo, hi, 3)}, n={n}" + (f"<br>CONSTANT: {c}" if c else "")
                 for m, x, lo, hi, n, c in zip(g["measure"], g["mean"], g["lo"], g["hi"], g["n"], g["constant"])]
        err = dict(type="data", symmetric=False, array=(g["z_hi"] - g["z"]).fillna(0),
                   arrayminus=(g["z"] - g["z_lo"]).fillna(0))
        fig.add_trace(go.Scatter(x=g["z"], y=g["measure"], mode="markers", name=model, error_x=err,
                                 hovertext=hover, hoverinfo="text",
                                 marker=dict(size=9, symbol=["x-open" if c else "circle" for c in g["constant"]])))
    flat = " (x: a constant value, which ranks nothing)" if (est["constant"] != "").any() else ""
    fig.update_layout(title="Every model on every measure (normalised: 0 = the models' average, 1 = one SD of "
                            "the item values)" + flat, xaxis_title="normalised mean (95% interval)",
                      yaxis=dict(autorange="reversed", title="measure"), height=180 + 26 * est["measure"].nunique(),
                      margin=dict(l=20))
    return fig


# -- homogeneity ------------------------------------------------------------------------------------------
def homogeneity_estimates(h: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per task x ordered pair (a, b): ``prompts``, and per measure (cosine, overlap) the mean over
    prompts with a bootstrap interval over prompts. ``kind``: within a model, between models, model vs
    people, or people among themselves."""
    rows = []
    if not len(h):
        return pd.DataFrame(rows)
    for (task, a, b), g in h.groupby(["task", "a", "b"], sort=False):
        kind = ("people - people" if a == b == PEOPLE else "within one model" if a == b
                else "model vs people" if PEOPLE in (a, b) else "between models")
        row = {"task": task, "a": a, "b": b, "kind": kind, "prompts": len(g)}
        for col in ("cosine", "overlap"):
            x = g[col].astype(float).to_numpy()
            x = x[np.isfinite(x)]
            lo, hi = corr.bootstrap_ci(np.mean, x, n_boot=n_boot, seed=seed) if len(x) else (np.nan, np.nan)
            row.update({col: float(x.mean()) if len(x) else np.nan, f"{col} lo": lo, f"{col} hi": hi})
        rows.append(row)
    return pd.DataFrame(rows)


def table_homogeneity(recs) -> pd.DataFrame:
    """Homogeneity per task and pair of sources, people beside the models."""
    e = homogeneity_estimates(recs["homogeneity"], *boot_settings(recs))
    if e.empty:
        return captioned(pd.DataFrame(), "No prompt was answered by a model beside another model or people: "
                                         "no homogeneity to measure.")
    out = pd.DataFrame({"task": e["task"], "a": e["a"], "b": e["b"], "kind": e["kind"], "prompts": e["prompts"],
                        "mean cosine [95% CI]": [num.fmt_estimate(x, lo, hi, 3) for x, lo, hi in
                                                 zip(e["cosine"], e["cosine lo"], e["cosine hi"])],
                        "share of a's ideas also b's [95% CI]": [num.fmt_estimate(x, lo, hi, 2) for x, lo, hi in
                                                                 zip(e["overlap"], e["overlap lo"], e["overlap hi"])]})
    return captioned(out, "Homogeneity of ideas on the prompts a model answered beside another source: mean "
                          "embedding cosine between a's and b's answers (a = b: between two answers of one "
                          "source), and the share of a's ideas that are also one of b's (same idea = each entails "
                          "the other). Intervals: bootstrap over prompts (none with fewer than 5). 'people': human "
                          "answers to the same prompts, the human-human spread to read the models against.")


# -- cost -------------------------------------------------------------------------------------------------
COST_COLS = ["calls", "input tokens", "output tokens", "cost usd", "sandbox runs"]


def cost_by_model(costs: pd.DataFrame) -> pd.DataFrame:
    """Per model x study: the calls made and served, tokens and cost. In a run of several models the calls
    that asked no model under test (judge, embeddings, entailment) are ``shared``."""
    if not len(costs):
        return pd.DataFrame(columns=["model", "study", *COST_COLS])
    costs = costs if "sandbox runs" in costs else costs.assign(**{"sandbox runs": 0})   # read before the column
    return costs.groupby(["model", "study"], sort=False)[COST_COLS].sum().reset_index()


def table_costs(recs) -> pd.DataFrame:
    c = cost_by_model(recs["costs"])
    return captioned(c, "What each study's run cost, per model: every call the measurement needed (made in that run "
                        "or served from the call cache, paid when first made), their tokens and cost in USD (0 for "
                        "local models). 'shared': calls of a run of several models that asked none of them (the "
                        "judge, embeddings, entailment; a model under test that also judges counts there whole). "
                        "'sandbox runs': programs run on their test cases (local work, no tokens), made or served "
                        "from the cache. One run root per model (creval batch) gives each model its own calls "
                        "exactly.")


def cost_per_point(values: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """Per measure x model: what one point (one item's value) cost: the study's calls (made or served from
    the cache), tokens and cost for
    that model (plus an equal share of the run's ``shared`` calls) divided by the items measured. A study's
    cost is counted whole against each of its measures."""
    c = cost_by_model(costs)
    rows = []
    if not len(values):
        return pd.DataFrame(columns=["measure", "model", "points", "calls / point", "tokens / point", "USD / point",
                                     "sandbox runs / point"])
    for (measure, model, study), g in values.groupby(["measure", "model", "study"], sort=False):
        mine = c[(c["study"] == study) & (c["model"] == model)][COST_COLS].sum()
        shared = c[(c["study"] == study) & (c["model"] == "shared")][COST_COLS].sum()
        k = max(1, values.loc[values["study"] == study, "model"].nunique())
        tot = mine + shared / k
        n = int(g["value"].notna().sum())
        rows.append({"measure": measure, "model": model, "points": n,
                     "calls / point": tot["calls"] / n if n else np.nan,
                     "tokens / point": (tot["input tokens"] + tot["output tokens"]) / n if n else np.nan,
                     "USD / point": tot["cost usd"] / n if n else np.nan,
                     "sandbox runs / point": tot["sandbox runs"] / n if n else np.nan})
    return pd.DataFrame(rows)


def table_cost_per_point(recs) -> pd.DataFrame:
    t = cost_per_point(recs["values"], recs["costs"])
    return captioned(t, "What one point of each measure cost: the study's calls, tokens and USD for that model "
                        "over the items it measured (a study measuring several things is counted whole in each).")


# -- what was read, the judge, the reading ----------------------------------------------------------------
def table_sources(recs) -> pd.DataFrame:
    s = recs["sources"].copy()
    cfg = getattr(recs, "cfg", None)              # tables read without their study's config have none
    if len(s) and cfg is not None:        # this run root named as the reader's data home sees it
        s["root"] = s["root"].replace(THIS_ROOT, home_relative(str(cfg.run_path)))
    return captioned(s, "The run folders compared (run_dir within its root, relative to the data home): 'missing' "
                        "means the root holds no finished run of that study for these parameters; it is skipped, "
                        "never run here.")


def judges(recs) -> list[str]:
    """The judge models behind the judged measures (one when the judge was held fixed)."""
    v = recs["values"]
    return sorted({j for j in v["judge"] if j}) if len(v) and "judge" in v else []


def reading_values(recs) -> dict:
    """Every number and name the chapter's sentences cite, from the records."""
    v = recs["values"]
    models = models_of(v)
    d = paired_differences(v, *boot_settings(recs)) if len(models) > 1 else pd.DataFrame()
    s = recs["sources"]
    missing = s[s["status"] == "missing"] if len(s) else s
    cfg = getattr(recs, "cfg", None)              # tables read without their study's config have none
    return {"models": models, "measures": int(v["measure"].nunique()) if len(v) else 0,
            "pairs": int(len(d)), "different": int((d["verdict"] == DIFFERENT).sum()) if len(d) else 0,
            "judges": judges(recs), "missing": [f"{r['study']} in {r['root']}" for r in missing.to_dict("records")],
            "model": cfg.model if cfg is not None else models[0] if models else "",
            "notes": [n for n in recs["notes"].get("note", pd.Series(dtype=str))] if len(recs["notes"]) else []}


def released_models(recs) -> int:
    """How many released models (and people) the ``released`` table compares, over both datasets."""
    try:
        rel = recs["released"]
    except (KeyError, FileNotFoundError):
        return 0
    return int(rel.groupby("dataset")["model"].nunique().sum()) if len(rel) else 0


def reading_markdown(recs) -> str:
    """The page's computed sentences: which models, how many differences, the judge, what was skipped, and,
    with one model, the command that compares several."""
    r = reading_values(recs)
    out = []
    if len(r["models"]) < 2:
        m = r["model"] or "smollm2-135m"
        rel = released_models(recs)
        out.append(f"**One model only ({', '.join(r['models']) or m}).** "
                   + (f"The released outputs below compare {rel} real models and people out of the box. To compare "
                      "your own models, measure " if rel else "There is nothing to compare yet. Measure ") +
                   "another model beside it in this run root with `creval book -p models=[<other model>]`, or build "
                   f"one book per model with `creval batch {m} <other model or spec.yaml>`, which builds this "
                   "chapter over all their run roots at the end (`-p compare_roots=[runs/a,runs/b]` by hand).")
    else:
        out.append(f"**{len(r['models'])} models compared** ({', '.join(r['models'])}) on "
                   f"{items(str(r['measures']) + ' measures', 'compare', 'values')}: "
                   f"{r['different']} of {r['pairs']} paired differences are shown (their interval excludes 0).")
    j = r["judges"]
    out.append(f"**The judge** of the judged measures is `{j[0]}`, the same for every model." if len(j) == 1 else
               f"**Several judges** ({', '.join(j)}): judged measures are not comparable across them." if j else
               "**No judged measure** was read.")
    if r["missing"]:
        out.append(f"**Skipped** (no finished run for these parameters): {'; '.join(r['missing'])}.")
    out += [f"*{n}*" for n in r["notes"]]
    return "\n\n".join(out)
