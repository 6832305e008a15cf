"""Chapter 07's tables and figures of the generated uses and the judges, pure: records in
(``STUDY.records(cfg)``), captioned DataFrame or Figure out; no model, judge or dataset is loaded
here. The comparison with people is :mod:`creval.studies.aut.human`, the chapter's sentences
:mod:`creval.studies.aut.reading`.

Settings are named ``"<setting> <method>"`` (``comprehensive score``, ``comprehensive rank``, ``segmented
score``, ``segmented rank``). A use's value in a setting is the mean over the orders it was shown in (the
forward and reversed rankings); cell means are over a (generator, level) cell's uses. The paper's SRC is
:func:`creval.measures.aut_agreement.paper_src` (label-sequence Spearman, ties = expected over random
tie-breaking).
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from creval.measures import aut_agreement as A
from creval.measures.stats import correlation as corr
from creval.measures.stats import verdicts as V
from creval.studies import scores as SC
from creval.studies.aut.generate import COMMON, CREATIVE, FOLLOWUPS, HIGHLY
from creval.studies.contract import Records
from creval.studies.tables import captioned, echoes, guard_module

ORACLE = "oracle"
SETTINGS = ("comprehensive score", "comprehensive rank", "segmented score", "segmented rank")

# Rabeyah et al. 2024, Table 2 (mean over 5 objects). O = oracle.
PAPER_TABLE2 = pd.DataFrame(
    [[.95, .95, .95, .97, .90, .92, .92, .95, .95, .92],
     [.90, .85, .77, .95, .77, .82, .85, .60, .85, .70],
     [.95, .87, .85, .92, .87, .90, .92, .82, .85, .85],
     [.87, .85, .85, .85, .85, .82, .77, .70, .75, .77]],
    index=list(SETTINGS),
    columns=["O–4o", "O–GPT-4", "O–Gemini", "O–Claude", "4o–GPT-4", "4o–Gemini", "4o–Claude",
             "GPT-4–Gemini",
             "GPT-4–Claude", "Gemini–Claude"])


# -- the run ---------------------------------------------------------------------------------------
def run_summary(recs: Records) -> pd.DataFrame:
    r, cfg = recs, recs.cfg
    u, j, h = r["uses"], r["judgments"], r["human"]
    rows = [("generators", ", ".join(cfg.generators)), ("judges", ", ".join(cfg.judges)),
            ("objects", ", ".join(cfg.aut_things)), ("uses asked per object and level", cfg.aut_per_level),
            ("uses generated", len(u)), ("judgments (use x list x order)", len(j)),
            ("human-rated responses", h["item_id"].nunique() if len(h) else 0),
            ("human data", ", ".join(sorted(h["dataset"].unique())) if len(h) else "none found")]
    return captioned(pd.DataFrame(rows, columns=["what", "value"]), "The run behind this chapter.")


def use_examples(recs: Records) -> pd.DataFrame:
    u = recs["uses"]
    if u.empty:
        return captioned(pd.DataFrame(columns=["object", "generator", "level", "uses"]), "No uses were generated.")
    df = (u.sort_values("idx").groupby(["object", "generator", "level_code", "level"], as_index=False)["text"]
          .agg(lambda s: " · ".join(s)).rename(columns={"text": "uses"}))
    df = df.sort_values(["object", "generator", "level_code"]).drop(columns="level_code")
    return captioned(df.reset_index(drop=True), "Generated alternative uses per object, generator and level "
                                           "(Table 1 analogue).")


ECHO_WORDS = 4       # a use that repeats this many consecutive words of its prompt echoes the prompt


def echoes_prompt(text: str, obj: str, level: str = "highly_creative") -> bool:
    """Whether a generated use repeats :data:`ECHO_WORDS` consecutive words of the prompts of its level (for
    the highly creative level: the five heuristics and the follow-ups), i.e. hands the prompt back instead
    of a use ("Shape: think of things with a similar shape ...")."""
    prompts = {"common": (COMMON,), "creative": (CREATIVE,)}.get(level, (HIGHLY, *FOLLOWUPS))
    return any(echoes(text, p.replace("{object}", obj).replace("{n}", " "), ECHO_WORDS) for p in prompts)


def generation_health(recs: Records) -> pd.DataFrame:
    r, cfg = recs, recs.cfg
    u, t = r["uses"], r.written("turns")
    rows = []
    for (g, lvl), tt in t.groupby(["generator", "level"]):
        uu = u[(u["generator"] == g) & (u["level"] == lvl)] if len(u) else u
        echo = sum(echoes_prompt(x, o, lvl) for x, o in zip(uu["text"], uu["object"])) if len(uu) else 0
        rows.append({"generator": g, "level": lvl, "replies": len(tt), "re-asks": int((tt["attempt"] > 0).sum()),
                     "refusals": int(tt["refusal"].sum()),
                     "uses kept": len(uu), "asked": cfg.aut_per_level * len(cfg.aut_things),
                     "echo the prompt": int(echo),
                     "turn kept (mean)": float(uu["turn"].mean()) if len(uu) else float("nan")})
    return captioned(pd.DataFrame(rows), "Generation health: replies (turns and re-asks for short lists), refusals "
                                    "and uses kept per level. The highly creative set is the last non-refused "
                                    f"turn of the forceful chain ({cfg.aut_forceful_turns} follow-ups). 'echo the "
                                    f"prompt': kept uses that repeat {ECHO_WORDS} or more consecutive words of their "
                                    "prompt (the heuristics handed back, not a use): a judge that rates them "
                                    "creative rates the prompt.")


def level_check(recs: Records) -> pd.DataFrame:
    """Do the generated levels differ? Semantic distance object-use and length per generator and level, and
    Spearman(level code, semantic distance) per generator."""
    u = recs["uses"]
    if u.empty:
        return captioned(pd.DataFrame(), "No uses.")
    rows = []
    for g, ug in u.groupby("generator"):
        row = {"generator": g}
        for lvl in A.LEVELS:
            x = ug[ug["level"] == lvl]
            row[f"semdis {lvl}"] = float(x["semdis"].mean()) if len(x) else float("nan")
            row[f"words {lvl}"] = float(x["words"].mean()) if len(x) else float("nan")
        rho = corr.spearman(ug["level_code"], ug["semdis"])
        row["rho(level, semdis)"] = rho["rho"]
        means = [row[f"semdis {lvl}"] for lvl in A.LEVELS]
        row["levels ordered"] = bool(np.all(np.diff(means) > 0))
        rows.append(row)
    return captioned(pd.DataFrame(rows), "Oracle check: the oracle assumes common < creative < highly creative. "
                                    "Mean semantic distance (1 - cos of MiniLM embeddings of object and use) and "
                                    "length per level; 'levels ordered' is True only when the distance rises "
                                    "strictly with the level.")


# -- values and cells ------------------------------------------------------------------------------
def use_values(recs: Records) -> pd.DataFrame:
    """One row per (judge, setting, object, use): the value averaged over the orders it was shown in."""
    j = recs["judgments"]
    if j.empty:
        return pd.DataFrame(columns=["judge", "setting", "object", "au_id", "generator", "level", "level_code",
                                     "value"])
    j = j.assign(setting=j["setting"] + " " + j["method"], value=pd.to_numeric(j["value"], errors="coerce"))
    return j.groupby(["judge", "setting", "object", "au_id", "generator", "level", "level_code"],
                     as_index=False)["value"].mean()


FALLBACK = "log-prob fallback (one use per prompt)"


def fallback_settings(recs: Records) -> list[str]:
    """The settings (``"<setting> <method>"``) whose every parsed value came from the log-probability
    fallback: the one-use prompt, the same measurement whatever the setting's name. The card reads this
    list to count such settings once."""
    j = recs["judgments"]
    if j.empty or "parse_path" not in j:
        return []
    j = j.assign(setting=j["setting"] + " " + j["method"])
    parsed = j[j["parse_path"] != "unparsed"]
    return [s for s in SETTINGS if s in set(parsed["setting"])
            and (parsed.loc[parsed["setting"] == s, "parse_path"] == "logprobs").all()]


def degenerate_settings(recs: Records) -> dict[str, str]:
    """Settings whose values cannot carry agreement, with why and on what share of the items: no parsed value
    at all (a judge that parsed nothing), at least :data:`~creval.measures.stats.verdicts.ORDER_COPY_SHARE` of its
    parsed rankings identical to the order shown (a judge that copies the presented order: a few imputed lists
    do not hide it), or one value for :data:`~creval.measures.stats.verdicts.DEGENERATE_SHARE` of the uses (a
    near-constant score). The verdicts, the oracle's mean included, leave these settings out."""
    j = recs["judgments"]
    if j.empty:
        return {}
    j = j.assign(setting=j["setting"] + " " + j["method"], value=pd.to_numeric(j["value"], errors="coerce"))
    out = {}
    for s, x in j.groupby("setting"):
        v = x["value"].dropna()
        lists = x[x["value"].notna()].groupby(["judge", "object", "group", "order"])
        same = lists["identity_order"].first().astype(bool) if lists.ngroups else pd.Series(dtype=bool)
        flat = V.constant(list(v), "score", share=V.DEGENERATE_SHARE)
        if v.empty:
            out[s] = "a judge that parsed nothing"
        elif s.endswith("rank") and len(same) and same.mean() >= V.ORDER_COPY_SHARE:
            out[s] = (f"a judge that copies the presented order ({int(same.sum())} of {len(same)} rankings, "
                      f"{same.mean():.0%})")
        elif flat:
            out[s] = flat
    return out


def _cells(v: pd.DataFrame) -> tuple[dict, dict]:
    m = v.groupby(["generator", "level"])["value"].mean()
    lab = v.groupby(["generator", "level"])["level_code"].first()
    return {k: float(x) for k, x in m.items()}, {k: int(x) for k, x in lab.items()}


def agreement(recs: Records) -> pd.DataFrame:
    """Long table: setting x object x pair (``a``, ``b``; ``oracle`` included) x metric value.

    Metrics: ``src`` (the paper's), ``cell_rho`` (Spearman of cell means; vs the oracle: of cell means and
    level codes), ``pair_acc`` (vs the oracle only: cross-level use pairs in the right order)."""
    v = use_values(recs)
    rows = []
    for (s, o), vs in v.groupby(["setting", "object"]):
        cells = {jd: _cells(x) for jd, x in vs.groupby("judge")}
        for jd, (vals, labs) in cells.items():
            x = vs[vs["judge"] == jd]
            rows.append({"setting": s, "object": o, "a": ORACLE, "b": jd, "src": A.oracle_src(vals, labs),
                         "cell_rho": A.cell_rho({k: float(labs[k]) for k in vals}, vals),
                         "pair_acc": A.pair_accuracy(x["value"], x["level_code"]),
                         "no_value": sum(not np.isfinite(v) for v in vals.values())})
        for ja, jb in itertools.combinations(sorted(cells), 2):
            (va, la), (vb, _) = cells[ja], cells[jb]
            rows.append({"setting": s, "object": o, "a": ja, "b": jb, "src": A.judge_src(va, vb, la),
                         "cell_rho": A.cell_rho(va, vb), "pair_acc": float("nan"),
                         "no_value": sum(not np.isfinite(v) for v in (*va.values(), *vb.values()))})
    return pd.DataFrame(rows, columns=["setting", "object", "a", "b", "src", "cell_rho", "pair_acc", "no_value"])


def table_agreement(recs: Records) -> pd.DataFrame:
    """Table 2 analogue: mean over objects per setting and pair, our metric columns side by side."""
    a = agreement(recs)
    if a.empty:
        return captioned(pd.DataFrame(), "No judgments.")
    df = a.assign(pair=a["a"].str.replace(ORACLE, "O") + " – " + a["b"])
    t = df.groupby(["setting", "pair"], as_index=False).agg(
        src=("src", "mean"), cell_rho=("cell_rho", "mean"), pair_acc=("pair_acc", "mean"),
        **{"cells without a value": ("no_value", "sum")})
    t["setting"] = pd.Categorical(t["setting"], [s for s in SETTINGS if s in set(t["setting"])])
    t = t.sort_values(["setting", "pair"]).reset_index(drop=True)
    fb, bad = fallback_settings(recs), degenerate_settings(recs)
    t["setting"] = t["setting"].astype(str)
    t.insert(1, "from fallback", t["setting"].isin(fb))
    t.insert(2, "degenerate", [bad.get(s, "") for s in t["setting"]])
    flagged = sorted(set(t.loc[t["degenerate"] != "", "setting"]))
    once = (f"Degenerate settings ({', '.join(flagged)}; why in 'degenerate'): their agreement is the judge's "
            "constant answer or the order it was shown, not a finding. " if flagged else "")
    if fb:      # every value of these settings is the one-use log-prob score: one measurement, shown once
        t.loc[t["from fallback"], "setting"] = FALLBACK
        t = t.drop_duplicates(["setting", "pair"]).reset_index(drop=True)
        once += (f"Every value of {', '.join(fb)} came from the log-probability fallback (one use per prompt, the "
                 f"same prompt whatever the setting): that one measurement is shown once, as '{FALLBACK}'. ")
    return captioned(t, once + "Agreement per setting, mean over objects. src = the paper's SRC (Spearman between the "
                   "sequences of level labels of the sorted cells; multiples of 1/8 with 12 cells, of "
                   f"{_step(len(recs.cfg.generators))} here); cell_rho = Spearman of the cell means (counts which "
                   "generator is where); "
                   "pair_acc = share of cross-level use pairs ordered as the oracle (0.5 = chance); cells without a "
                   "value "                   "(every use unparsed, summed over objects) are ranked last, tied.")


def _step(g: int) -> str:
    """The smallest SRC step with ``g`` generators (one swap of adjacent labels)."""
    if g < 1:
        return "?"
    labels = sorted([1, 2, 3] * g, reverse=True)
    swapped = list(labels)
    swapped[g - 1], swapped[g] = swapped[g], swapped[g - 1]
    return f"{1 - A.paper_src(swapped, labels):.3g}"


def paper_table2() -> pd.DataFrame:
    df = PAPER_TABLE2.copy()
    df.loc["mean of settings"] = df.mean().round(3)
    df = df.reset_index(names="setting")
    return captioned(df, "Rabeyah et al. 2024, Table 2 (mean over fork, wallet, soap, cotton swab, paperclip; "
                    "4 commercial judges; O = oracle) and the Fig. 7 means.")


def fig_heatmaps(recs: Records, metric: str = "src") -> go.Figure:
    """Judge x judge (oracle included) heat-maps per setting and averaged over settings (Fig. 7 analogue)."""
    a = agreement(recs)
    names = [ORACLE, *recs.cfg.judges]
    panels = [s for s in SETTINGS if s in set(a["setting"])] + ["mean of settings"]
    bad = degenerate_settings(recs)
    titles = [f"{s} (degenerate)" if s in bad else s for s in panels]
    cols = min(2, len(panels))                  # two panels a row: each wide enough for its judges' names
    rows = -(-len(panels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=0.22,
                        vertical_spacing=min(0.3, 0.5 / rows))
    for i, s in enumerate(panels):
        r, c = divmod(i, cols)
        sub = a if s == "mean of settings" else a[a["setting"] == s]
        mean = sub.groupby(["a", "b"])[metric].mean()
        z = np.full((len(names), len(names)), np.nan)
        for i, x in enumerate(names):
            z[i, i] = 1.0
            for k, y in enumerate(names):
                for key in ((x, y), (y, x)):
                    if key in mean.index:
                        z[i, k] = mean[key]
        fig.add_trace(go.Heatmap(z=z, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", showscale=i == 0,
                                 text=np.round(z, 2), texttemplate="%{text}"), row=r + 1, col=c + 1)
    note = " (degenerate: a constant score or a copied order, named in the agreement table)" if bad else ""
    fig.update_xaxes(title_text="judge")
    fig.update_yaxes(title_text="judge")
    fig.update_layout(title=f"Agreement ({metric}), mean over objects{note}",
                      height=rows * (260 + 24 * len(names)) + 80)
    return fig


def fig_cells(recs: Records) -> go.Figure:
    """Fig. 6 analogue: mean value per (generator, level) cell, per judge and setting (all objects)."""
    v = use_values(recs)
    panels = [s for s in SETTINGS if s in set(v["setting"])]
    fig = make_subplots(rows=1, cols=max(1, len(panels)), subplot_titles=panels)
    colors = {"common": "#9ecae1", "creative": "#4292c6", "highly_creative": "#08306b"}
    for c, s in enumerate(panels, start=1):
        sub = v[v["setting"] == s]
        m = sub.groupby(["judge", "generator", "level", "level_code"], as_index=False)["value"].mean()
        for lvl in A.LEVELS:
            x = m[m["level"] == lvl]
            fig.add_trace(go.Bar(x=[f"{j}<br>{g}" for j, g in zip(x["judge"], x["generator"])], y=x["value"],
                                 name=lvl, marker_color=colors[lvl], showlegend=c == 1, legendgroup=lvl),
                          row=1, col=c)
    fig.update_xaxes(title_text="judge / generator")
    fig.update_yaxes(title_text="mean value", col=1)
    fig.update_layout(barmode="group", title="Mean value per cell (judge / generator); higher = more creative "
                                             "(ranks as 1 - (rank-1)/(n-1))", height=380)
    return fig


def table_means(recs: Records) -> pd.DataFrame:
    """Tables 12-15 analogue: mean value per generator x level (rows) and judge (columns), per setting."""
    v = use_values(recs)
    if v.empty:
        return captioned(pd.DataFrame(), "No judgments.")
    t = v.pivot_table(index=["setting", "generator", "level"], columns="judge", values="value", aggfunc="mean")
    t["sd across judges"] = t.std(axis=1, ddof=1) if t.shape[1] > 1 else np.nan
    t = t.reset_index()
    return captioned(t, "Mean value per generator and level as each judge saw it (scores 1-5; ranks mapped to [0, 1], "
                   "1 = most creative). Paper Table 12 (comprehensive scoring): common 1.43-1.53, creative "
                   "2.60-3.20, highly creative 3.30-4.83.")


def table_judge_scores(recs: Records) -> pd.DataFrame:
    """Each judge's 1-5 scores per setting and level: n uses, mean with its 95% bootstrap interval over the
    uses, and the mean length in words of the uses it scored (ranks are left out: they are not on the scale)."""
    v = use_values(recs)
    v = v[v["setting"].str.endswith(" score")] if len(v) else v
    words = recs["uses"][["au_id", "words"]].drop_duplicates("au_id") if len(recs["uses"]) else None
    v = v.merge(words, on="au_id", how="left") if words is not None and len(v) else v
    t = SC.score_table(v, ["setting", "judge", "level"], n_boot=min(recs.cfg.n_boot, 1000), seed=recs.cfg.seed)
    return captioned(t, "Judge scores with their n (uses), 95% bootstrap interval over the uses and the mean "
                        "length of the uses scored (words). " + SC.scale_note(SC.AUT_SCALE))


def table_self_preference(recs: Records) -> pd.DataFrame:
    v, cfg = use_values(recs), recs.cfg
    rows = []
    for s, vs in v.groupby("setting"):
        for r in A.self_preference(vs, n_boot=min(cfg.n_boot, 1000), seed=cfg.seed):
            rows.append({"setting": s, **r})
    df = pd.DataFrame(rows, columns=["setting", "judge", "sp", "lo", "hi", "n_own", "n_other", "note", "mc_lo",
                                     "mc_hi"])
    return captioned(df, "Self-preference: sp = mean over own uses minus mean over other generators' uses of "
                    "(judge's value - other judges' mean value on the same use); removes use quality and "
                    "judge leniency. 95% bootstrap CI over objects; mc_lo, mc_hi: how far each bound could move "
                    "with another bootstrap seed. Needs >= 2 judges that are also generators.")


def forward_reverse_rho(x: pd.DataFrame) -> float:
    """Spearman between the values the same uses got in the forward and in the reversed list; NaN when either
    order has no parsed value (a ranking never answered, or every reversed ranking unparsed: ``pivot_table``
    then has no column for that order)."""
    w = x.dropna(subset=["value"]).pivot_table(index=["object", "au_id"], columns="order", values="value")
    if "forward" not in w or "reverse" not in w:
        return float("nan")
    return A.position_bias(w["forward"], w["reverse"])


def table_bias(recs: Records) -> pd.DataFrame:
    """Position bias and parse health per judge and setting."""
    j = recs["judgments"]
    if j.empty:
        return captioned(pd.DataFrame(), "No judgments.")
    j = j.assign(setting=j["setting"] + " " + j["method"], value=pd.to_numeric(j["value"], errors="coerce"))
    rows = []
    for (jd, s), x in j.groupby(["judge", "setting"]):
        lists = x.groupby(["object", "group", "order"])
        row = {"judge": jd, "setting": s, "lists": lists.ngroups,
               "rho(position, value)": A.position_bias(x["position"] / (x["n_items"] - 1).clip(lower=1), x["value"]),
               "identity order": float(lists["identity_order"].first().mean())}
        for p in ("text", "text-retry", "logprobs", "imputed", "unparsed"):
            row[p] = float((x["parse_path"] == p).mean())
        row["rho(forward, reverse)"] = forward_reverse_rho(x)
        rows.append(row)
    return captioned(pd.DataFrame(rows), "Position bias and parse health. rho(position, value): Spearman between the "
                                    "place a use was shown (0 = first) and its value (0 = no position effect; "
                                    "-1 = the judge copies the presented order). rho(forward, reverse): the same "
                                    "uses ranked in a list and in its reverse (1 = order-independent). Shares of "
                                    "uses by how their value was obtained.")


# -- against people: the values (the tables are in creval.studies.aut.human) --------------------------
def human_values(recs: Records) -> pd.DataFrame:
    h = recs["human"]
    if h.empty:
        return h
    h = h.assign(value=pd.to_numeric(h["value"], errors="coerce"))
    return h.groupby(["dataset", "object", "item_id", "human", "scorer", "mode"], as_index=False).agg(
        value=("value", "mean"), unparsed=("parse_path", lambda p: float((p == "unparsed").mean())),
        logprobs=("parse_path", lambda p: float((p == "logprobs").mean())))


guard_module(globals())
