"""Chapter 06's figures and the tables behind them (Lu et al. 2025, Figs. 2-4): the creativity index against
the n-gram length L and the L range, the template rate against the template length, the two template
matching modes, and the correlations between the measures. Pure: records in, Figure or DataFrame out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures import creativity_index as C
from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import tracking as TR
from creval.studies.rethinking.readers import MEASURES, labelled, with_judge
from creval.studies.tables import captioned, computed


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
                a = corr.auc(lab.astype(float), ci)
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
    m = with_judge(recs, text_set, model)
    cols = [c for c in ["ci", "ppl", "ppl_cond", "bpb", "tpt", "judge", "n_words", "passes"] if c in m.columns
            and m[c].notna().sum() >= 3]
    names = {**MEASURES, "n_words": "length (words)", "passes": "expert passes"}
    cfg = recs.cfg
    rows = []
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            r = corr.spearman_ci(m[a].astype(float), m[b].astype(float), n_boot=min(cfg.n_boot, 500), seed=cfg.seed)
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
        hover[i][j] = hover[j][i] = (f"{r.a} vs {r.b}<br>rho {num.fmt_estimate(r.rho, r.lo, r.hi)}, n = {r.n}"
                                     + (f"<br>{r.note}" if r.note else ""))
    labels = [["" if np.isnan(v) else f"{v:.2f}" for v in row] for row in z]      # no value: a blank cell
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", text=labels,
                               texttemplate="%{text}", hovertext=hover, hoverinfo="text"))
    n = int(t["n"].min()) if len(t) else 0
    blank = " blank: no correlation (hover says why)" if np.isnan(z).any() else ""
    fig.update_layout(title=f"Spearman correlations between measures ({text_set}; cells rest on {n} to "
                            f"{int(t['n'].max()) if len(t) else 0} texts: hover for n and interval;{blank})",
                      xaxis_title="measure", yaxis_title="measure", height=460)
    return fig


CHANCE = {s: TR.CHANCE[s] for s in ("AUROC", "Spearman rho")}
CHECK_COLOURS = {"interval clear of chance, the creative way": "#1a9850",
                 "interval clear of chance, the other way": "#d73027",
                 "interval holds chance": "#878787"}


def check_colour(row) -> str:
    """Which of :data:`CHECK_COLOURS` a check row falls in: read off its interval and direction columns."""
    if row.get("CI excludes chance") != "yes":
        return "interval holds chance"
    return ("interval clear of chance, the creative way" if row.get("right direction") == "yes"
            else "interval clear of chance, the other way")


def short(text: str, width: int = 30) -> str:
    """A check's name on lines of at most ``width`` characters (an axis label that leaves the plot its room)."""
    import textwrap
    if text is None or (isinstance(text, float) and text != text):
        return "–"
    return "<br>".join(textwrap.wrap(str(text), width))


def fig_checks(checks: pd.DataFrame) -> go.Figure:
    """The checks against people (:func:`creval.studies.rethinking.report.table_checks`) as a dot plot: each
    measure's value with its 95% interval, one panel per statistic (AUROC, Spearman rho) with its chance
    line, coloured by where the interval lies; the table itself stays one click away."""
    from plotly.subplots import make_subplots

    df = computed(checks)
    df = df[pd.to_numeric(df.get("value"), errors="coerce").notna()] if "value" in df else df.iloc[0:0]
    stats = [s for s in CHANCE if s in set(df["statistic"])] if len(df) else []
    if not stats:
        fig = go.Figure()
        fig.update_layout(title="Checks against people: not computed, no check has a value in these records",
                          meta={"missing": "no check has a value"})
        return fig
    sizes = [int((df["statistic"] == s).sum()) for s in stats]
    fig = make_subplots(rows=len(stats), cols=1, row_heights=sizes, vertical_spacing=0.12,
                        subplot_titles=[f"{s} (chance {CHANCE[s]:g})" for s in stats])
    shown = set()
    for r, s in enumerate(stats, start=1):
        sub = df[df["statistic"] == s]
        labels = [f"{m}<br>{short(c)}" for m, c in zip(sub["measure"], sub["check"])]
        colours = [check_colour(row) for row in sub.to_dict("records")]
        for colour in CHECK_COLOURS:
            pick = [i for i, c in enumerate(colours) if c == colour]
            if not pick:
                continue
            part = sub.iloc[pick]
            fig.add_trace(go.Scatter(
                x=part["value"].astype(float), y=[labels[i] for i in pick], mode="markers", name=colour,
                legendgroup=colour, showlegend=colour not in shown, marker={"color": CHECK_COLOURS[colour], "size": 9},
                error_x={"type": "data", "symmetric": False,
                         "array": (part["ci_high"].astype(float) - part["value"].astype(float)).tolist(),
                         "arrayminus": (part["value"].astype(float) - part["ci_low"].astype(float)).tolist()},
                customdata=part[["n"]].to_numpy(), hovertemplate="%{y}: %{x:.3f} (n = %{customdata[0]})"),
                row=r, col=1)
            shown.add(colour)
        fig.add_vline(x=CHANCE[s], line_dash="dot", line_color="#444", row=r, col=1)
        fig.update_xaxes(title_text=s, row=r, col=1)
        fig.update_yaxes(title_text="measure · check", autorange="reversed", row=r, col=1)
    fig.update_layout(title="Each measure against people, with its 95% interval and the chance line",
                      height=160 + 52 * sum(sizes) + 60 * len(stats), margin={"l": 20},
                      legend={"orientation": "h", "y": -0.12})
    fig.update_yaxes(automargin=True)
    return fig
