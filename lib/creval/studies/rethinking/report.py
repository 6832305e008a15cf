"""Chapter 06, "Rethinking the metrics" (Lu et al. 2025): every table and figure as one pure function.

Each function takes the study's records (:func:`creval.studies.rethinking.run.records`: a
:class:`~creval.studies.contract.Records` whose ``cfg`` is the chapter's config) and returns a DataFrame
(caption in ``df.attrs["caption"]``) or a plotly Figure. Every measure was computed by the run (creativity
index, perplexity under each model under test, templates, rubric judge, twist, reruns, the example's reused
spans); here only statistics over those records: means, AUROC and Spearman rho with bootstrap intervals
(``n_boot``), correlations.

Text sets (``text_set``): ``ps`` (MacGyver verified feasible solutions, unconventional vs conventional),
``solver`` (a crowd and a GPT-4 solution of the same problem, length-matched), ``ttcw`` (the LLM-written
TTCW stories with the experts' pass counts), ``aut`` (Ocsai-1 responses with originality ratings), ``msrp``
(sentence pairs, paraphrase or not). Perplexity columns are those of ``model`` (default ``cfg.model``; the
run scores every model in ``cfg.tested``).
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.judges.rubric import ASPECTS, RubricRecord, rerun_consistency
from creval.measures import creativity_index as C
from creval.measures import stats as S
from creval.studies.tables import captioned

MEASURES = {"ci": "creativity index", "ppl": "perplexity", "ppl_cond": "PPL(text | problem)", "bpb": "bits per byte",
            "tpt": "templates per token", "has_template": ">= 1 template", "judge": "rubric judge"}
# expected sign if the measure tracks what people call creative (+: higher = more creative)
DIRECTION = {"ci": +1, "ppl": +1, "ppl_cond": +1, "bpb": +1, "tpt": -1, "has_template": -1, "judge": +1}
WITH_CONTEXT = ("ps", "aut")           # sets scored by perplexity given their problem too
PAPER_TABLE2 = [
    ("CW", "human (creative)", "0.72 ± 0.06", "7.03 ± 3.97", 5.474, "77.3% (0.007)", "2.69 ± 0.76"),
    ("CW", "LLM", "0.53 ± 0.06", "7.36 ± 4.03", 6.028, "96.7% (0.013)", "2.02 ± 0.55"),
    ("PS", "unconventional", "0.76 ± 0.08", "13.98 ± 4.65", 6.158, "38.7% (0.039)", "3.02 ± 0.87"),
    ("PS", "conventional", "0.75 ± 0.09", "14.11 ± 4.85", 6.152, "31.9% (0.033)", "2.60 ± 1.03"),
    ("RI", "accepted", "0.71 ± 0.05", "8.62 ± 1.62", 5.684, "54.6% (0.004)", "2.84 ± 0.54"),
    ("RI", "rejected", "0.71 ± 0.05", "8.50 ± 1.59", 5.657, "63.2% (0.004)", "2.85 ± 0.19"),
]


# -- reading the records -----------------------------------------------------------------------------------
def _set_info(recs, text_set: str) -> dict:
    s = recs["sets"]
    row = s[s["set"] == text_set] if len(s) else s
    return row.iloc[0].to_dict() if len(row) else {"labelled": False, "why": f"no {text_set} texts in these records"}


def labelled(recs, text_set: str) -> bool:
    """Whether the run found the human labels of ``text_set``."""
    return bool(_set_info(recs, text_set).get("labelled"))


def unlabelled_reason(recs, text_set: str) -> str:
    """Why ``text_set`` has no real labels in this run (the bundled sample, or no data); empty when it has."""
    return str(_set_info(recs, text_set).get("why") or "")


def measures(recs, text_set: str, model: str | None = None) -> pd.DataFrame:
    """One row per text: the run's measures of ``text_set`` with the perplexity columns of ``model``
    (``ppl``, ``bpb``, and ``ppl_cond`` for ``ps`` and ``aut``; NaN where the text was not scored)."""
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


def _with_judge(recs, text_set: str, model: str | None = None) -> pd.DataFrame:
    m = measures(recs, text_set, model)
    if m.empty:
        return m
    j = judge_scores(recs, text_set)
    return m.merge(j[["id", "judge"]], on="id", how="left") if len(j) else m.assign(judge=np.nan)


def _group_templates(recs, text_set: str, n: int, mode: str = "sequence") -> pd.DataFrame:
    t = recs["templates"]
    if t.empty:
        return t
    return t[(t["set"] == text_set) & (t["n"] == n) & (t["mode"] == mode)]


def data_sources(recs) -> pd.DataFrame:
    """Where each text set comes from, and whether it carries the human labels its check needs."""
    return captioned(recs["data_sources"].copy(), "Data read by this chapter (labels: 'no' means the checks that "
                                                  "need them say so and are skipped)")


# -- tables ------------------------------------------------------------------------------------------------
def _ms(x) -> str:
    x = pd.Series(x, dtype=float).dropna()
    return "–" if x.empty else f"{x.mean():.2f} ± {x.std(ddof=1) if len(x) > 1 else 0:.2f}"


def table2(recs) -> pd.DataFrame:
    """Table 2 analogue: per text set and group, CI, PPL, CR-POS, template rate (TPT) and judge, with
    templates extracted from each group itself as the paper does. A further model under test adds its own
    PPL column."""
    cfg = recs.cfg
    rows = []
    for text_set, name in (("ps", "PS (MacGyver)"), ("solver", "crowd vs GPT-4 (MacGyver)"), ("ttcw", "TTCW stories")):
        m = _with_judge(recs, text_set)
        if m.empty:
            rows.append({"set": name, "group": "–", "n": 0, "note": unlabelled_reason(recs, text_set)})
            continue
        tpl = _group_templates(recs, text_set, cfg.rethink_template_n).set_index("kind")
        others = {o: measures(recs, text_set, o).set_index("id")["ppl"] for o in cfg.tested[1:]}
        for kind, g in m.groupby("kind", sort=False):
            st = tpl.loc[kind]
            row = {"set": name, "group": kind, "n": len(g), "CI": _ms(g["ci"]), "PPL": _ms(g["ppl"])}
            row.update({f"PPL ({o})": _ms(p.loc[g["id"]]) for o, p in others.items()})
            row.update({"CR-POS": st["cr_pos"], "template rate (TPT)": f"{100 * st['rate']:.1f}% ({st['tpt_mean']:.3f})",
                        "judge": _ms(g["judge"]), "words": round(float(g["n_words"].mean()), 1), "note": ""})
            rows.append(row)
    df = pd.DataFrame(rows)
    return captioned(df, f"Table 2 analogue on our data: CI = mean uniq_L over L = {cfg.rethink_ci_l_min}..{cfg.rethink_ci_l_max} "
                          f"({cfg.rethink_ci_agg}), in-pool leave-group-out reference; PPL under {cfg.model}; CR-POS and "
                          f"template rate with top-{cfg.rethink_template_top} POS {cfg.rethink_template_n}-grams of each group; judge = "
                          f"rubric headline aspect ({cfg.judge_model}, expected value, {cfg.rethink_judge_items} per group)")


def paper_table2() -> pd.DataFrame:
    df = pd.DataFrame(PAPER_TABLE2, columns=["domain", "group", "CI", "PPL", "CR-POS", "template rate (TPT)", "judge"])
    return captioned(df, "The paper's Table 2 (Lu et al. 2025; row labels corrected: the text extract shifts the "
                          "domain column). Its PS conventional side is not released; its PPL model is not stated.")


def check_rows(check: str, m: pd.DataFrame, label_col: str, kind: str, cols=None, n_boot: int = 1000,
               seed: int = 0) -> list[dict]:
    """One row per measure: AUROC (``kind="auc"``, two labelled groups) or Spearman rho (``"rho"``) of the
    measure against ``m[label_col]``, percentile bootstrap 95% CI, n, and whether it goes the creative way."""
    rows = []
    for c in cols or [c for c in MEASURES if c in m.columns]:
        x = m[c].astype(float).to_numpy()
        if kind == "auc":
            y = m[label_col].astype(float).to_numpy()
            r = S.auc_ci(y, x, n_boot=n_boot, seed=seed)
            val, n = r["auc"], r["n"]
            agrees = "" if np.isnan(val) else ("yes" if (val - 0.5) * DIRECTION[c] > 0 else "no")
        else:
            r = S.spearman_ci(x, m[label_col].astype(float).to_numpy(), n_boot=n_boot, seed=seed)
            val, n = r["rho"], r["n"]
            agrees = "" if np.isnan(val) else ("yes" if val * DIRECTION[c] > 0 else "no")
        sig = (not np.isnan(r["lo"])) and (r["lo"] > (0.5 if kind == "auc" else 0) or
                                          r["hi"] < (0.5 if kind == "auc" else 0))
        rows.append({"check": check, "measure": MEASURES[c], "statistic": "AUROC" if kind == "auc" else "Spearman rho",
                     "value": val, "ci_low": r["lo"], "ci_high": r["hi"], "n": n,
                     "right direction": agrees, "CI excludes chance": "yes" if sig else "no", "note": r["note"]})
    return rows


def _skip(check: str, why: str) -> list[dict]:
    return [{"check": check, "measure": "–", "statistic": "–", "value": np.nan, "ci_low": np.nan, "ci_high": np.nan,
             "n": 0, "right direction": "", "CI excludes chance": "", "note": f"skipped: {why}"}]


def table_checks(recs, model: str | None = None) -> pd.DataFrame:
    """Each measure against people: AUROC (two labelled groups) or Spearman rho (ratings), bootstrap 95% CI, n,
    and whether it goes the way 'more creative' would (perplexity under ``model``, default ``cfg.model``)."""
    cfg = recs.cfg
    boot = dict(n_boot=cfg.n_boot, seed=cfg.seed)
    rows = []
    for text_set, check in (("ps", "MacGyver unconventional vs conventional"),
                            ("solver", "MacGyver crowd vs GPT-4 (length-matched)")):
        rows += check_rows(check, _with_judge(recs, text_set, model), "label", "auc", **boot) \
            if labelled(recs, text_set) else _skip(check, unlabelled_reason(recs, text_set))
    if labelled(recs, "ttcw"):
        m = measures(recs, "ttcw", model)
        j = judge_scores(recs, "ttcw")
        m = m.merge(j[["id", "judge"]], on="id", how="left") if len(j) else m
        rows += check_rows("TTCW expert passes (0-42)", m, "passes", "rho", **boot)
        rows += check_rows("TTCW expert originality passes (0-9)", m, "originality_passes", "rho",
                           cols=["ci", "ppl", "tpt"], **boot)
    else:
        rows += _skip("TTCW expert passes", unlabelled_reason(recs, "ttcw"))
    rows += check_rows(f"AUT human originality (CI with L = 2..{cfg.rethink_aut_l_max})", measures(recs, "aut", model),
                       "label", "rho", cols=["ci", "ppl", "ppl_cond", "bpb"], **boot) if labelled(recs, "aut") \
        else _skip("AUT human originality", unlabelled_reason(recs, "aut"))
    return captioned(pd.DataFrame(rows), "Checks against people. 'right direction': the measure moves the way its "
                                          "reading as creativity predicts (CI, PPL, judge up; templates down for the "
                                          "more creative side). TTCW: n = 36 stories, |rho| >= 0.33 is needed for "
                                          "p < .05.")


def table_ttcw_judges(recs) -> pd.DataFrame:
    """The paper's staged LLM judges (Chakrabarty et al.) against the experts: Spearman of the per-story Yes
    counts, a baseline for the measures above."""
    cfg = recs.cfg
    if not labelled(recs, "ttcw"):
        return captioned(pd.DataFrame(_skip("TTCW staged LLM judges", unlabelled_reason(recs, "ttcw"))),
                         "TTCW LLM-judge baseline")
    t = recs["measures_ttcw"]
    llm = recs["ttcw_llm_judges"]
    rows = []
    for name in (list(dict.fromkeys(llm["judge"])) if len(llm) else []):
        j = llm[llm["judge"] == name][["story_id", "llm_passes"]]
        m = t.merge(j, left_on="id", right_on="story_id", how="inner")
        r = S.spearman_ci(m["llm_passes"], m["passes"], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"LLM judge (staged)": name, "rho vs expert passes": r["rho"], "ci_low": r["lo"],
                     "ci_high": r["hi"], "n": r["n"], "mean Yes count (of 14)": float(m["llm_passes"].mean()),
                     "expert mean (of 42)": float(m["passes"].mean())})
    return captioned(pd.DataFrame(rows), "Staged TTCW LLM-judge replies (Yes counts over the 14 tests) vs the "
                                          "experts' pass counts, on the LLM-written stories")


def table_invariance(recs, model: str | None = None) -> pd.DataFrame:
    """Paraphrase invariance (Table 3 analogue): |difference| of each measure between the two sentences of
    a pair, for MSRP paraphrases and non-paraphrases. A measure of ideas should barely move for a
    paraphrase: AUROC of |diff| separating the non-paraphrases, and the mean |diff| of each kind."""
    cfg = recs.cfg
    if not labelled(recs, "msrp"):
        return captioned(pd.DataFrame(_skip("paraphrase invariance", unlabelled_reason(recs, "msrp"))),
                         "Paraphrase invariance")
    m = measures(recs, "msrp", model)
    rows = []
    for c in ["ci", "ppl", "bpb", "tpt"]:
        piv = m.pivot(index="group", columns="side", values=c)
        lab = m.groupby("group")["label"].first().loc[piv.index].astype(bool)
        d = (piv[0] - piv[1]).abs()
        r = S.auc_ci((~lab).astype(float), d, n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"measure": MEASURES[c], "mean |diff| paraphrase": float(d[lab].mean()),
                     "mean |diff| different": float(d[~lab].mean()),
                     "paraphrase |diff| / SD of the measure": float(d[lab].mean() / m[c].std()) if m[c].std() > 0 else np.nan,
                     "AUROC(|diff|: different > paraphrase)": r["auc"], "ci_low": r["lo"], "ci_high": r["hi"],
                     "pairs": r["n"]})
    return captioned(pd.DataFrame(rows), "Paraphrase invariance on MSRP sentence pairs: a measure of the idea "
                                          "should not move for a paraphrase (|diff| ~ 0). CI here: L = 2.."
                                          f"{cfg.rethink_aut_l_max} against the other pairs' sentences")


# -- the judge's own tests -----------------------------------------------------------------------------
def table_twist(recs) -> pd.DataFrame:
    """Prompt-twist test: the same solutions asked "is it conventional?" and "is it unconventional?"."""
    res = recs["twist"]
    if res.empty:
        return captioned(pd.DataFrame(_skip("prompt twist", "no MacGyver solutions asked")), "Prompt twist")
    out = res.groupby("kind").agg(n=("id", "size"), p_yes_conventional=("p_yes_conventional", "mean"),
                                  p_yes_unconventional=("p_yes_unconventional", "mean"),
                                  says_unconventional=("says_unconventional", "mean"),
                                  contradictions=("contradiction", "mean")).reset_index()
    tot = {"kind": "all", "n": len(res), "p_yes_conventional": res["p_yes_conventional"].mean(),
           "p_yes_unconventional": res["p_yes_unconventional"].mean(),
           "says_unconventional": res["says_unconventional"].mean(), "contradictions": res["contradiction"].mean()}
    out = pd.concat([out, pd.DataFrame([tot])], ignore_index=True)
    return captioned(out, f"Prompt twist ({recs.cfg.judge_model}): P(yes) to both questions; a contradiction is yes "
                          "to both or no to both (paper: ~20% of solutions)")


def table_rerun(recs) -> pd.DataFrame:
    """Rerun consistency: ``reruns`` analyses sampled at temperature 1 for ``rerun_items`` solutions."""
    rr = [RubricRecord.from_dict(r) for r in recs.rows("rerun")]
    rows = [rerun_consistency(rr, a) for a, _, _ in ASPECTS["ps"]]
    return captioned(pd.DataFrame(rows), "Rerun consistency of the rubric judge: mean within-solution SD of the "
                                          "expected score, and the share of solutions whose most likely score changes")


# -- figures ----------------------------------------------------------------------------------------------
def fig_l_sensitivity(recs) -> go.Figure:
    """Fig. 2/3 analogue: mean L-uniqueness per group against L, for each labelled contrast."""
    fig = go.Figure()
    for text_set in ("ps", "solver", "ttcw"):
        m = recs[f"measures_{text_set}"]
        if m.empty:
            continue
        cols = sorted((c for c in m.columns if c.startswith("uniq_")), key=lambda c: int(c[5:]))
        for kind, g in m.groupby("kind"):
            fig.add_trace(go.Scatter(x=[int(c[5:]) for c in cols], y=[g[c].mean() for c in cols], mode="lines+markers",
                                     name=f"{text_set}: {kind} (n={len(g)})"))
    fig.update_layout(title="L-uniqueness vs n-gram length L (in-pool, leave-group-out reference)",
                      xaxis_title="L (words)", yaxis_title="mean uniq_L", height=420)
    return fig


def table_l_ranges(recs) -> pd.DataFrame:
    """Fig. 3 analogue: the gap and AUROC of CI between the two sides as the L range widens
    (lo..hi for hi = ci_l_max .. ci_sweep_max), mean and sum aggregations."""
    cfg = recs.cfg
    rows = []
    for text_set in ("ps", "solver"):
        m = recs[f"measures_{text_set}"]
        if m.empty or not labelled(recs, text_set):
            continue
        lab = m["label"].astype(bool)
        for hi in range(cfg.rethink_ci_l_max, cfg.rethink_ci_sweep_max + 1):
            for agg in C.AGGREGATIONS:
                ci = m[[f"uniq_{L}" for L in range(cfg.rethink_ci_l_min, hi + 1)]]
                ci = ci.mean(axis=1) if agg == "mean" else ci.sum(axis=1)
                a = S.auc(lab.astype(float), ci)
                rows.append({"contrast": text_set, "L range": f"{cfg.rethink_ci_l_min}..{hi}", "agg": agg,
                             "gap (positive - other)": float(ci[lab].mean() - ci[~lab].mean()),
                             "AUROC": a["auc"], "n": a["n"]})
    return captioned(pd.DataFrame(rows), "CI gap vs L range (paper Fig. 3: widening 5-7 to 5-11 makes the "
                                          "human-LLM gap negligible); positive = unconventional / crowd side")


def fig_template_n(recs) -> go.Figure:
    """Fig. 4 analogue: template rate (top-100 POS n-grams of each group) vs template length n."""
    cfg = recs.cfg
    fig = go.Figure()
    t = recs["templates"]
    for text_set in ("ps", "solver", "ttcw"):
        ts = t[(t["set"] == text_set) & (t["mode"] == "sequence")] if len(t) else t
        for kind in sorted(set(ts["kind"])) if len(ts) else []:
            g = ts[ts["kind"] == kind].set_index("n")
            ys = [g.loc[n, "rate"] for n in cfg.rethink_template_n_sweep]
            fig.add_trace(go.Scatter(x=list(cfg.rethink_template_n_sweep), y=ys, mode="lines+markers",
                                     name=f"{text_set}: {kind} (n={int(g['texts'].iloc[0])})"))
    fig.update_layout(title=f"Share of texts with >= 1 template vs template length (top {cfg.rethink_template_top})",
                      xaxis_title="template length n (POS tags)", yaxis_title="template rate", height=420)
    return fig


def table_template_modes(recs) -> pd.DataFrame:
    """Our tag-sequence matching beside the diversity library's surface-string matching (compat), per group."""
    cfg = recs.cfg
    t = recs["templates"]
    rows = []
    for text_set in ("ps", "solver", "ttcw"):
        ts = t[(t["set"] == text_set) & (t["n"] == cfg.rethink_template_n)] if len(t) else t
        for kind in sorted(set(ts["kind"])) if len(ts) else []:
            for mode in ("sequence", "compat"):
                st = ts[(ts["kind"] == kind) & (ts["mode"] == mode)].iloc[0]
                rows.append({"set": text_set, "group": kind, "mode": mode, "n": int(st["texts"]),
                             "template rate": st["rate"], "TPT": st["tpt_mean"], "CR-POS": st["cr_pos"]})
    return captioned(pd.DataFrame(rows), "Template statistics: tag-sequence matching within sentences (ours) vs "
                                          "the diversity library's surface-substring matching over a stream whose "
                                          "n-grams cross sentences, and its double-gzip CR-POS (compat)")


def correlation_cells(recs, text_set: str = "ps", model: str | None = None) -> pd.DataFrame:
    """Every pair of measures on the texts both were computed for (pairwise complete): Spearman rho, its 95%
    bootstrap interval and n, one row per pair (the table behind :func:`fig_correlations`)."""
    m = _with_judge(recs, text_set, model)
    cols = [c for c in ["ci", "ppl", "ppl_cond", "bpb", "tpt", "judge", "n_words", "passes"] if c in m.columns
            and m[c].notna().sum() >= 3]
    names = {**MEASURES, "n_words": "length (words)", "passes": "expert passes"}
    cfg = recs.cfg
    rows = []
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            r = S.spearman_ci(m[a].astype(float), m[b].astype(float), n_boot=min(cfg.n_boot, 500), seed=cfg.seed)
            rows.append({"a": names[a], "b": names[b], "n": r["n"], "rho": r["rho"], "lo": r["lo"], "hi": r["hi"],
                         "note": r["note"]})
    return captioned(pd.DataFrame(rows, columns=["a", "b", "n", "rho", "lo", "hi", "note"]),
                     f"Spearman between measures ({text_set}), each on the texts both were computed for: "
                     "perplexity and the judge cover a subsample, so their cells rest on fewer texts.")


def fig_correlations(recs, text_set: str = "ps", model: str | None = None) -> go.Figure:
    """Spearman correlations between all measures on the same texts (pairwise complete); hover shows each
    cell's n and 95% interval."""
    t = correlation_cells(recs, text_set, model)
    names = list(dict.fromkeys([*t["a"], *t["b"]]))
    k = len(names)
    z, hover = np.full((k, k), np.nan), [["" for _ in range(k)] for _ in range(k)]
    for i in range(k):
        z[i, i] = 1.0
    for r in t.itertuples():
        i, j = names.index(r.a), names.index(r.b)
        z[i, j] = z[j, i] = r.rho
        hover[i][j] = hover[j][i] = (f"{r.a} vs {r.b}<br>rho {S.fmt_estimate(r.rho, r.lo, r.hi)}, n = {r.n}"
                                     + (f"<br>{r.note}" if r.note else ""))
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", text=np.round(z, 2),
                               texttemplate="%{text}", hovertext=hover, hoverinfo="text"))
    n = int(t["n"].min()) if len(t) else 0
    fig.update_layout(title=f"Spearman correlations between measures ({text_set}; cells rest on {n} to "
                            f"{int(t['n'].max()) if len(t) else 0} texts: hover for n and interval)", height=460)
    return fig


def mark_spans(tokens, spans, mark: tuple[str, str] = ("<mark>", "</mark>")) -> str:
    """The tokens joined by spaces with every ``[start, end)`` span wrapped in ``mark`` (no space inside the
    marks), each token HTML-escaped: the rendering of :func:`creval.measures.creativity_index.highlight`."""
    opens, closes = {s for s, _ in spans}, {e for _, e in spans}
    out = []
    for i, t in enumerate(tokens):
        if i in opens:
            out.append("\x01")
        out.append(t)
        if i + 1 in closes:
            out.append("\x02")
    joined = " ".join(out).replace("\x01 ", "\x01").replace(" \x02", "\x02")
    return html.escape(joined).replace("\x01", mark[0]).replace("\x02", mark[1])


def table_example(recs, model: str | None = None) -> pd.DataFrame:
    """Every measure on one unconventional MacGyver solution, its reused spans highlighted."""
    cfg = recs.cfg
    ex = recs.rows("example")
    if not ex:
        return captioned(pd.DataFrame(_skip("example", "no MacGyver solutions in these records")), "Example")
    ex = ex[0]
    m = _with_judge(recs, "ps", model)
    row = m[m["id"] == ex["id"]].iloc[0]
    hits = ex["template_hits"]
    shown = "; ".join(f"{' '.join(h['words'])} [{' '.join(h['tags'])}]" for h in hits[:4])
    rows = [("text (reused spans of >= %d words marked)" % ex["span_L"], mark_spans(ex["tokens"], ex["spans"])),
            ("creativity index (%s of uniq_L, L = %d..%d)" % (cfg.rethink_ci_agg, cfg.rethink_ci_l_min, cfg.rethink_ci_l_max),
             f"{row['ci']:.3f}"),
            ("uniq_L for L = 2..8", ", ".join(f"{L}: {row[f'uniq_{L}']:.2f}" for L in range(2, 9) if f"uniq_{L}" in row)),
            ("reference", ", ".join(f"{k}: {v}" for k, v in ex["reference"].items())),
            ("perplexity / PPL given the problem / bits per byte",
             f"{row['ppl']:.2f} / {row.get('ppl_cond', float('nan')):.2f} / {row['bpb']:.3f}"),
            ("template occurrences / tokens (first shown)", f"{len(hits)} / {ex['pos_tokens']}: {shown}"),
            ("rubric judge Unconventionality (expected value, 1-5)",
             "not judged" if pd.isna(row.get("judge")) else f"{row['judge']:.2f}")]
    return captioned(pd.DataFrame(rows, columns=["measure", "value"]),
                      f"One MacGyver solution ({row['id']}, {row['kind']}) under every measure")


# -- the values the chapter's reading sentences use --------------------------------------------------------
def value_range(lo, hi, digits: int = 2, scale: float = 1.0, unit: str = "") -> str:
    """"a-b" (each end rounded once), or one value where both ends print the same."""
    a, b = S.fmt_number(lo, digits, scale), S.fmt_number(hi, digits, scale)
    return f"{a}{unit}" if a == b else f"{a}-{b}{unit}"


def _check(t: pd.DataFrame, check_prefix: str, measure: str) -> dict | None:
    r = t[t["check"].str.startswith(check_prefix) & (t["measure"] == measure)] if len(t) else t
    if r.empty or pd.isna(r.iloc[0]["value"]):
        return None
    r = r.iloc[0]
    return {"text": S.fmt_estimate(r["value"], r["ci_low"], r["ci_high"]), "value": float(r["value"]),
            "n": int(r["n"]), "chance_in_ci": r["CI excludes chance"] != "yes", "right": r["right direction"] == "yes"}


def reading_values(recs) -> dict:
    """Every number the chapter's closing reading cites, from this build's records (each rounded once):
    ``{"ps": ..., "solver": ..., "ttcw": ..., "ppl": ..., "templates": ..., "judge": ..., "aut": ...}``; a
    part is None where the records have no labelled data for it."""
    cfg = recs.cfg
    checks = table_checks(recs)
    out: dict = {"model": cfg.model, "judge_model": cfg.judge_model}
    m = measures(recs, "ps")
    if labelled(recs, "ps") and len(m):
        lab = m["label"].astype(bool)
        out["ps"] = {"n_pos": int(lab.sum()), "n_neg": int((~lab).sum()), "ci_pos": S.fmt_number(m.loc[lab, "ci"].mean(), 3),
                     "ci_neg": S.fmt_number(m.loc[~lab, "ci"].mean(), 3),
                     "auc": _check(checks, "MacGyver unconventional", "creativity index")}
    else:
        out["ps"] = None
    out["solver"] = ({"auc": _check(checks, "MacGyver crowd", "creativity index"),
                      "pairs": int(measures(recs, "solver")["group"].nunique()) if "group" in measures(recs, "solver")
                      else len(measures(recs, "solver")) // 2}
                     if labelled(recs, "solver") else None)
    if labelled(recs, "ttcw"):
        t = measures(recs, "ttcw")
        out["ttcw"] = {"stories": len(t), "rho": _check(checks, "TTCW expert passes", "creativity index"),
                       "ci_mean": S.fmt_number(t["ci"].mean(), 2)}
        j = table_ttcw_judges(recs)
        out["ttcw"]["llm_judges"] = (f"{S.fmt_number(j['rho vs expert passes'].min())} to "
                                     f"{S.fmt_number(j['rho vs expert passes'].max())}"
                                     if "rho vs expert passes" in j and j["rho vs expert passes"].notna().any() else "")
    else:
        out["ttcw"] = None
    ppl = [c for c in (_check(checks, p, "perplexity") for p in ("MacGyver unconventional", "MacGyver crowd",
                                                                "TTCW expert passes", "AUT")) if c]
    p = recs["perplexity"]
    p = p[p["model"] == cfg.model] if len(p) else p
    inv = table_invariance(recs)
    inv_ppl = inv[inv["measure"] == "perplexity"] if "measure" in inv else inv
    out["ppl"] = {"range": value_range(p["ppl"].min(), p["ppl"].max(), 1) if len(p) else "",
                  "median": S.fmt_number(p["ppl"].median(), 1) if len(p) else "",
                  "texts": int(p["ppl"].notna().sum()) if len(p) else 0,
                  "checks": len(ppl), "right": sum(c["right"] for c in ppl), "chance": sum(c["chance_in_ci"] for c in ppl),
                  "paraphrase_auc": (S.fmt_estimate(inv_ppl.iloc[0]["AUROC(|diff|: different > paraphrase)"],
                                                    inv_ppl.iloc[0]["ci_low"], inv_ppl.iloc[0]["ci_high"])
                                     if len(inv_ppl) else "")}
    t = recs["templates"]
    t = t[(t["n"] == cfg.rethink_template_n) & (t["mode"] == "sequence")] if len(t) else t
    tpt = _check(checks, "MacGyver crowd", "templates per token")
    out["templates"] = {"top": cfg.rethink_template_top, "n": cfg.rethink_template_n,
                        "rates": value_range(t["rate"].min(), t["rate"].max(), 1, 100, "%") if len(t) else "",
                        "min_rate": float(t["rate"].min()) if len(t) else float("nan"),
                        "solver_tpt": tpt}
    judged = [{**c, "text": f"{c['text']} on {name} (n = {c['n']})"}
              for name, c in (("unconventional vs conventional", _check(checks, "MacGyver unconventional", "rubric judge")),
                              ("crowd vs GPT-4", _check(checks, "MacGyver crowd", "rubric judge"))) if c]
    tw = recs["twist"]
    js = recs["judge"]
    out["judge"] = {"checks": [c["text"] for c in judged],
                    "all_chance": all(c["chance_in_ci"] for c in judged) if judged else None,
                    "mean_score": S.fmt_number(js["judge"].mean()) if len(js) else "",
                    "contradictions": S.fmt_number(tw["contradiction"].mean(), 0, 100) + "%" if len(tw) else "",
                    "twist_pairs": len(tw)}
    a = checks[checks["check"].str.startswith("AUT") & checks["value"].notna()] if len(checks) else checks
    if len(a):
        best = a.loc[a["value"].abs().idxmax()]
        out["aut"] = {"n": int(a["n"].max()), "max_abs": S.fmt_number(a["value"].abs().max()),
                      "strongest": f"{best['measure']} {S.fmt_estimate(best['value'], best['ci_low'], best['ci_high'])}",
                      "all_weak": bool((a["value"].abs() < 0.1).all())}
    else:
        out["aut"] = None
    return out
