"""Chapter 07c, pure formatting: the judges study's records in, the findings sentence, pictures (raters on a
severity x agreement plane with the people's ceiling, steadiness across prompt wordings, whom and what length each
judge favours) and captioned tables out."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from creval.grade import judges as J
from creval.measures.stats import numbers as num
from creval.studies.tables import captioned

SETS = {"hanna": "HANNA", "ttcw": "TTCW", "hanna-yours": "HANNA, your judge", "ttcw-yours": "TTCW, your judge"}
MIN_SHOWN = 20     # a person is drawn and listed with this many texts or more (fewer: an interval wider than the plot)


def _name(set_: str, label: str) -> str:
    return f"{SETS.get(set_, set_)} · {label}"


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _panel(x: dict) -> str:
    return f"{SETS.get(x['set'], x['set'])} {x['criterion']}"


def _est(x: dict, k: str, bounds: str = "") -> str:
    """``x[k]`` with its interval, read from ``<bounds or k>_lo`` and ``_hi``."""
    return num.fmt_estimate(x[k], x.get(f"{bounds or k}_lo"), x.get(f"{bounds or k}_hi"))


def _int(v) -> str:
    return str(int(v)) if _finite(v) else "–"


def _pct(v, digits: int = 0) -> str:
    return f"{v:.{digits}%}" if _finite(v) else "–"


def _panel_summary(panel: dict, raters: pd.DataFrame, bias: pd.DataFrame, variants: pd.DataFrame) -> str:
    """One paragraph per panel: the people's ceiling, the judges' agreement beside it, who could replace a rater,
    how steady they are across wordings and whom they favour."""
    name = _name(panel["set"], panel["label"])
    if panel.get("note"):
        return f"**{name}**: not read ({panel['note']})."
    if not {"set", "criterion", "person", "agreement", "lead_lo", "lead_hi", "alt_passes"} <= set(raters.columns):
        return f"**{name}**: no rater's scores were read."
    mine = raters[(raters["set"] == panel["set"]) & (raters["criterion"] == panel["criterion"])]
    judges = mine[~mine["person"].fillna(True).astype(bool)].sort_values("agreement", ascending=False)
    if judges.empty:
        return f"**{name}**: no judge's scores were read."
    best = judges.iloc[0]
    closest = num.fmt_estimate(best["agreement"], best["agreement_lo"], best["agreement_hi"])
    ceil = panel["ceiling"]
    above = judges[judges["lead_lo"] > 0]
    below = judges[judges["lead_hi"] < 0]
    passed = judges[judges["alt_passes"] == "yes"]
    sample = "the bundled sample, written for creval: its numbers mean nothing; " if panel.get("sample") else ""
    out = (f"**{name}** ({sample}{panel['n_texts']} texts on {panel['n_prompts']} prompts; {panel['people']}): "
           "one person "
           f"against the others reaches {num.fmt_number(ceil)} (Spearman within prompts). Of {len(judges)} judges, "
           f"{len(above)} agree with the people above that ceiling and {len(below)} below it (the 95% interval of the "
           f"paired difference, same references and prompts); the "
           f"closest is {best['rater']} at {closest}"
           f" and the farthest {judges.iloc[-1]['rater']} at {num.fmt_number(judges.iloc[-1]['agreement'])}. "
           f"By the alternative annotator test (epsilon {judges.iloc[0]['epsilon']:g}), {len(passed)} of "
           f"{len(judges)} could take a rater's place"
           + (f" ({', '.join(passed['rater'])})" if 0 < len(passed) < len(judges) else "") + ".")
    v = variants[(variants["set"] == panel["set"]) & (variants["criterion"] == panel["criterion"])] \
        if {"set", "criterion", "flip_rate"} <= set(variants.columns) else variants.iloc[0:0]
    v = v[v["flip_rate"].notna()] if len(v) else v
    if len(v):
        lo, hi = v.loc[v["flip_rate"].idxmin()], v.loc[v["flip_rate"].idxmax()]
        share = (f"{lo['flip_rate']:.0%} ({lo['judge']}) to {hi['flip_rate']:.0%} ({hi['judge']})"
                 if f"{lo['flip_rate']:.0%}" != f"{hi['flip_rate']:.0%}" else f"{lo['flip_rate']:.0%} (every judge)")
        out += (f" Asked with {int(v['variants'].max())} prompt wordings, a judge reverses the order of two stories "
                f"of one prompt in {share} of the pairs it orders under two wordings")
        if "people_flip" in v and v["people_flip"].notna().any():
            more, less = int((v["gap_lo"] > 0).sum()), int((v["gap_hi"] < 0).sum())
            out += (f"; two people who both ordered a pair reverse it in {v['people_flip'].iloc[0]:.0%}: {more} of "
                    f"{len(v)} judges flip more often than that and {less} less often (the gap's 95% interval over "
                    "prompts excludes 0)")
        out += "."
    b = bias[(bias["set"] == panel["set"]) & (bias["criterion"] == panel["criterion"])] \
        if {"set", "criterion", "author_gap"} <= set(bias.columns) else bias.iloc[0:0]
    b = b[b["author_gap"].notna()] if len(b) else b
    if len(b):
        pro_model, pro_person = (b["author_gap_hi"] < 0).sum(), (b["author_gap_lo"] > 0).sum()
        long_, short = (b["length_lean_lo"] > 0).sum(), (b["length_lean_hi"] < 0).sum()
        out += (f" Beyond the people, {pro_model} of {len(b)} judges favour the models' texts and {pro_person} the "
                f"people's (the gap's interval excludes 0; largest {b.loc[b['author_gap'].abs().idxmax(), 'judge']}, "
                f"{num.fmt_number(b['author_gap'].abs().max())} points of the scale); {long_} reward length and "
                f"{short} shortness more than the people do.")
    return out


def summary(recs) -> str:
    """What this build found, first: one paragraph per set and criterion."""
    panels = recs["panels"]
    if panels.empty or not {"set", "criterion", "label"} <= set(panels.columns):
        return "No set with released judges was read."
    text = "\n\n".join(_panel_summary(p, recs["raters"], recs["bias"], recs["variants"])
                       for p in panels.to_dict("records"))
    own = recs["own"]
    if len(own) and {"state", "judge", "id"} <= set(own.columns):
        bad = int((own["state"] != "ok").sum())
        text += (f"\n\nYour judge, {own['judge'].iloc[0]}, was asked for {len(own)} ratings of {own['id'].nunique()} "
                 f"stories: {bad} could not be read after two re-asks and are left out (state unparsed), never "
                 "counted as a score.")
    return text


def fig_plane(recs, set_: str, criterion: str) -> go.Figure:
    """The raters of one panel on a severity x agreement plane (people and judges, each with both intervals; people
    whose agreement is undefined or who scored fewer than ``MIN_SHOWN`` texts left out), the people's ceiling as a
    dashed line."""
    r, p = recs["raters"], recs["panels"]
    need = {"set", "criterion", "agreement", "person", "severity", "severity_lo", "severity_hi", "agreement_lo",
            "agreement_hi", "rater"}
    panel = p[(p["set"] == set_) & (p["criterion"] == criterion)] if {"set", "criterion"} <= set(p.columns) else p
    if r.empty or not need <= set(r.columns) or panel.empty:
        return go.Figure().update_layout(title=f"{_name(set_, criterion)}: no rater was read")
    rows = r[(r["set"] == set_) & (r["criterion"] == criterion) & r["agreement"].notna()
             & (~r["person"].astype(bool) | (r["n"] >= MIN_SHOWN))].to_dict("records")
    panel = panel.iloc[0]
    ceiling = panel.get("ceiling")
    fig = J.figure({"rows": [{**x, "person": bool(x["person"])} for x in rows],
                    "ceiling": float(ceiling) if _finite(ceiling) else math.nan})
    fig.update_layout(title=f"{_name(set_, panel.get('label', criterion))}: severity (higher = stricter) and "
                            "agreement with the people")
    return fig


def fig_variants(recs) -> go.Figure:
    """Each judge's flip rate across prompt wordings, per criterion, with its interval over prompts, and the
    people's flip rate between two raters on the same prompts (a mark on each bar)."""
    v = recs["variants"]
    fig = go.Figure()
    if v.empty or not {"criterion", "judge", "flip_rate", "flip_lo", "flip_hi", "set"} <= set(v.columns):
        return fig.update_layout(title="No judge was asked with more than one wording")
    for crit, g in v.groupby("criterion", sort=False):
        fig.add_trace(go.Bar(x=g["judge"], y=g["flip_rate"], name=f"{SETS.get(g['set'].iloc[0], '')} {crit}",
                             error_y=dict(type="data", symmetric=False, array=g["flip_hi"] - g["flip_rate"],
                                          arrayminus=g["flip_rate"] - g["flip_lo"])))
        if "people_flip" in g and g["people_flip"].notna().any():      # the same pairs, two people instead
            fig.add_trace(go.Scatter(x=g["judge"], y=g["people_flip"], mode="markers", marker_symbol="line-ew-open",
                                     marker=dict(size=28, line_width=3),
                                     name=f"{SETS.get(g['set'].iloc[0], '')} {crit}: two people"))
    fig.update_layout(barmode="group", template="plotly_white", height=420, yaxis_tickformat=".0%",
                      title="How often a judge reverses two stories of one prompt when its prompt is reworded",
                      xaxis_title="judge", yaxis_title="share of ordered pairs that flip (95% interval over prompts)")
    return fig


def fig_bias(recs) -> go.Figure:
    """Each judge's author gap (scale points, judge minus people; below 0: it favours the models' texts more than
    the people do) and its length lean, each with its interval, one row per judge and panel."""
    b = recs["bias"]
    if b.empty or not {"judge", "set", "criterion", "author_gap", "length_lean"} <= set(b.columns):
        return go.Figure().update_layout(title="No judge's bias was read")
    labels = [f"{j} · {SETS.get(s, s)} {c}" for j, s, c in zip(b["judge"], b["set"], b["criterion"])]
    fig = go.Figure()
    for col, name, axis in (("author_gap", "author gap (points)", "x"), ("length_lean", "length lean (rho)", "x2")):
        fig.add_trace(go.Scatter(x=b[col], y=labels, mode="markers", name=name, xaxis=axis,
                                 error_x=dict(type="data", symmetric=False, array=b[f"{col}_hi"] - b[col],
                                              arrayminus=b[col] - b[f"{col}_lo"])))
    for axis in ("x", "x2"):
        fig.add_shape(type="line", xref=axis, yref="paper", x0=0, x1=0, y0=0, y1=1,
                      line=dict(color="#999", dash="dot"))
    fig.update_layout(template="plotly_white", height=max(360, 22 * len(b) + 120),
                      xaxis=dict(domain=[0, 0.48], title="author gap: the judge's person-minus-model gap minus the "
                                                         "people's"),
                      xaxis2=dict(domain=[0.52, 1], title="length lean: rho of length and the judge's excess",
                                  zeroline=True),
                      yaxis_title="judge · set and criterion",
                      title="Whom and what length each judge favours beyond the people (95% intervals over prompts)")
    return fig


def _fit(x: dict, k: str) -> str:
    """A response-model estimate with its refits' interval, marked † where the interval does not hold it (the fits
    on resampled prompts move away from the full fit: read that estimate as unstable)."""
    v, lo, hi = x.get(k), x.get(f"{k}_lo"), x.get(f"{k}_hi")
    out = _est(x, k)
    return out + " †" if all(_finite(a) for a in (v, lo, hi)) and not lo <= v <= hi else out


RATER_COLS = ["panel", "rater", "kind", "n", "agreement [95%]", "lead over the ceiling [95%]", "severity [95%]",
              "discrimination [95%]", "replaces a rater (winning rate)"]


def table_raters(recs, min_texts: int = MIN_SHOWN) -> pd.DataFrame:
    """Every judge and every person with ``min_texts`` texts or more: agreement, severity and discrimination with
    intervals, and for a judge the alternative annotator test."""
    r = recs["raters"]
    if r.empty or not {"person", "n", "set", "criterion", "rater"} <= set(r.columns):
        return captioned(pd.DataFrame(columns=RATER_COLS), "No rater was read.")
    r = r[(~r["person"].astype(bool)) | (r["n"] >= min_texts)]
    out = [{"panel": _panel(x), "rater": x["rater"], "kind": x["kind"],
            "n": _int(x["n"]),
            "agreement [95%]": _est(x, "agreement"),
            "lead over the ceiling [95%]": "" if x["person"] in (True,) or not _finite(x.get("lead")) else
            _est(x, "lead"),
            "severity [95%]": _fit(x, "severity"), "discrimination [95%]": _fit(x, "discrimination"),
            "replaces a rater (winning rate)": "" if x["person"] else
            f"{x['alt_passes'] or '–'} ({num.fmt_number(x['alt_winning_rate'])})"} for x in r.to_dict("records")]
    return captioned(pd.DataFrame(out, columns=RATER_COLS),
                     "Every judge and every person with 20 texts or more. Agreement: Spearman, within prompts, with "
                     "the mean of the other people on each held-out person's texts (a judge against the very same "
                     "references), prompts resampled; a judge's lead over the people's ceiling is that paired "
                     "difference. Severity and discrimination: one graded "
                     "response model holding people and judges (girth, marginal maximum likelihood; intervals from "
                     "refits on resampled prompts; girth bounds discrimination to [0.2, 5]; † marks an estimate "
                     "its refits' interval does not hold: the model moves when the prompts are resampled, so read "
                     "it as unstable). Replaces a rater: the "
                     "alternative annotator test of Calderon et al. (2025), passed when the judge beats at least "
                     "half of the people held out.")


def table_variants(recs) -> pd.DataFrame:
    v = recs["variants"]
    cols = ["panel", "judge", "wordings", "unread replies", "flip rate [95%]", "variance from the wording"]
    out = [{"panel": _panel(x), "judge": x["judge"],
            "wordings": _int(x["variants"]), "unread replies": _pct(x["unread"], 1),
            "flip rate [95%]": _est(x, "flip_rate", "flip"),
            "variance from the wording": _pct(x["wording_share"])} for x in v.to_dict("records")]
    return captioned(pd.DataFrame(out, columns=cols),
                     "Steadiness across prompt wordings (HANNA asked each judge with four). Flip rate: of the pairs "
                     "of stories of one prompt that two wordings both order, the share they order oppositely. "
                     "Variance from the wording: the share of the judge's score variance not between stories "
                     "(between wordings plus story x wording), on stories read under every wording.")


def table_bias(recs) -> pd.DataFrame:
    b = recs["bias"]
    cols = ["panel", "judge", "author gap [95%]", "prompts", "length lean [95%]", "texts with a length"]
    out = [{"panel": _panel(x), "judge": x["judge"],
            "author gap [95%]": _est(x, "author_gap"),
            "prompts": _int(x["n_prompts"]),
            "length lean [95%]": _est(x, "length_lean"),
            "texts with a length": _int(x["n_texts"])} for x in b.to_dict("records")]
    return captioned(pd.DataFrame(out, columns=cols),
                     "Author gap: within each prompt holding a person's text and models', the judge's "
                     "person-minus-model gap minus the people's, in points of the scale, averaged over prompts "
                     "(below 0: the judge favours the models' texts more than the people do). Length lean: Spearman, "
                     "within prompts, of a text's length in words and the judge's excess over the people's mean "
                     "(TTCW's New Yorker stories are not released, so have no length).")


def table_own(recs) -> pd.DataFrame:
    """Your judge's ratings per criterion: how many were asked, read and unparsed, and their mean."""
    o = recs["own"]
    cols = ["judge", "criterion", "asked", "read", "unparsed", "mean rating", "read via"]
    if o.empty or not {"judge", "criterion", "state", "score", "via"} <= set(o.columns):
        return captioned(pd.DataFrame(columns=cols), "No judge of your own was asked (give -p judge_model=MODEL).")
    out = [{"judge": j, "criterion": c, "asked": len(g), "read": int((g["state"] == "ok").sum()),
            "unparsed": int((g["state"] != "ok").sum()), "mean rating": num.fmt_number(g["score"].astype(float).mean()),
            "read via": ", ".join(sorted(set(g["via"].astype(str))))}
           for (j, c), g in o.groupby(["judge", "criterion"], sort=False)]
    return captioned(pd.DataFrame(out, columns=cols),
                     "Your judge's ratings of the seeded HANNA stories: a reply that named no rating after two "
                     "re-asks is unparsed and left out; on a local model the rating is the expected value of its "
                     "log-probs over the five answers.")


def table_panels(recs) -> pd.DataFrame:
    p = recs["panels"]
    cols = ["set", "criterion", "label", "n_texts", "n_prompts", "people", "n_judges", "ceiling", "source", "note"]
    if p.empty or not set(cols) <= set(p.columns):
        return captioned(pd.DataFrame(columns=cols), "No panel was read.")
    return captioned(p[cols].reset_index(drop=True),
                     "Each set and criterion read: its size, whose judgment, how many released judges, the people's "
                     "ceiling (each person held out against the others' mean, within prompts), and where it came "
                     "from.")
