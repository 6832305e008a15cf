"""Chapter 06, "Rethinking the metrics" (Lu et al. 2025): every table and figure as one library call.

Each function takes the chapter's :class:`RethinkingConfig` and returns a DataFrame (caption in
``df.attrs["caption"]``) or a plotly Figure. What several cells share (texts, indexes, per-text measures,
judge records) is memoised per config; per-text measures and judge records are also written under
``<run_root>/rethinking/<run id>/`` (:class:`creval.core.runs.RunStore`). Every model call (perplexity,
judge) goes through the model cache and POS tags through ``cached_batch``: a warm rebuild calls no model.

Text sets (``text_set``):

- ``ps``     MacGyver verified feasible solutions, unconventional vs conventional (paper's PS contrast;
             its creative side is exactly our 573, its conventional side is not released: ours are the 230
             feasible conventional ones);
- ``solver`` one Prolific crowd solution and one GPT-4 solution of the same benchmark problem, cut to the
             shorter one's word count (length-matched: the offline stand-in for the CW human-vs-LLM contrast);
- ``ttcw``   the 36 LLM-written TTCW stories with the experts' pass counts;
- ``aut``    Ocsai-1 AUT responses with human originality ratings;
- ``msrp``   MSRP sentence pairs, paraphrase or not (invariance).

Creativity-index references are in-pool and leave-group-out: every MacGyver solution we have (verified,
benchmark, additional crowd) indexed by problem, minus the scored text's own problem; the TTCW stories
minus the same plot; the AUT responses to the same object minus the response itself; MSRP sentences
minus the pair itself.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.datasets import aut, macgyver, msrp, ttcw
from creval.judges import rubric as R
from creval.measures import creativity_index as C
from creval.measures import stats as S
from creval.measures import templates as T
from creval.measures.ngram_index import cached_index, word_tokenize
from creval.measures.perplexity import perplexity_many
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.tables import captioned, memo, save_table, study_dir

MEASURES = {"ci": "creativity index", "ppl": "perplexity", "ppl_cond": "PPL(text | problem)", "bpb": "bits per byte",
            "tpt": "templates per token", "has_template": ">= 1 template", "judge": "rubric judge"}
# expected sign if the measure tracks what people call creative (+: higher = more creative)
DIRECTION = {"ci": +1, "ppl": +1, "ppl_cond": +1, "bpb": +1, "tpt": -1, "has_template": -1, "judge": +1}
PAPER_TABLE2 = [
    ("CW", "human (creative)", "0.72 ± 0.06", "7.03 ± 3.97", 5.474, "77.3% (0.007)", "2.69 ± 0.76"),
    ("CW", "LLM", "0.53 ± 0.06", "7.36 ± 4.03", 6.028, "96.7% (0.013)", "2.02 ± 0.55"),
    ("PS", "unconventional", "0.76 ± 0.08", "13.98 ± 4.65", 6.158, "38.7% (0.039)", "3.02 ± 0.87"),
    ("PS", "conventional", "0.75 ± 0.09", "14.11 ± 4.85", 6.152, "31.9% (0.033)", "2.60 ± 1.03"),
    ("RI", "accepted", "0.71 ± 0.05", "8.62 ± 1.62", 5.684, "54.6% (0.004)", "2.84 ± 0.54"),
    ("RI", "rejected", "0.71 ± 0.05", "8.50 ± 1.59", 5.657, "63.2% (0.004)", "2.85 ± 0.19"),
]


def _model(cfg, name):
    from creval.models.registry import load_model
    return memo(cfg, f"model {name}", lambda: load_model(name))


def Ls(cfg) -> tuple[int, ...]:
    return C.l_range(cfg.rethink_ci_l_min, cfg.rethink_ci_l_max)


def _cut_words(text: str, n: int) -> str:
    w = str(text).split()
    return " ".join(w[:n])


# -- data ------------------------------------------------------------------------------------------
def _try(fn):
    """``(value, None)`` or ``(None, reason)`` for a loader that may lack its data on this machine."""
    from creval.core.errors import CrevalError
    try:
        return fn(), None
    except CrevalError as e:
        return None, str(e).splitlines()[0]


def data_sources(cfg: RethinkingConfig) -> pd.DataFrame:
    """Where each text set comes from, and whether it carries the human labels its check needs."""
    from creval.datasets.base import provenance
    rows = []
    for what, ds, fn in [("MacGyver solutions (PS, crowd vs LLM)", macgyver.DATASET, macgyver.source),
                         ("TTCW stories and expert verdicts", ttcw.DATASET, ttcw.source),
                         ("AUT originality ratings (Ocsai-1)", aut.DATASET, aut.source),
                         ("MSRP paraphrase pairs", msrp.DATASET, msrp.source)]:
        src, err = _try(fn)
        rows.append({"data": what, "where": err if src is None else provenance(ds, src, what).split(": ", 1)[1],
                     "labels": "no" if src is None or src.is_sample else "yes"})
    return captioned(pd.DataFrame(rows), "Data read by this chapter (labels: 'no' means the checks that need "
                                          "them say so and are skipped)")


def texts(cfg: RethinkingConfig, text_set: str) -> pd.DataFrame:
    """The texts of one set: ``id, group, text, label`` (+ ``context``, ``problem``, set-specific fields)."""
    return memo(cfg, f"texts {text_set}", lambda: _texts(cfg, text_set))


def _texts(cfg, text_set):
    if text_set == "ps":
        df = macgyver.load_feasible_unconventional(cfg.rethink_ps_per_class, cfg.data_seed)
        out = pd.DataFrame({"id": [f"{p}::verified" for p in df["problem_id"]], "group": df["problem_id"],
                            "text": df["solution"], "context": df["problem"], "label": df["unconventional"],
                            "kind": np.where(df["unconventional"], "unconventional", "conventional")})
        out.attrs["labelled"] = not str(df.attrs.get("source", "")).startswith("sample")
        out.attrs["why"] = "" if out.attrs["labelled"] else "only the bundled MacGyver sample (not real labels)"
        return out
    if text_set == "solver":
        df = macgyver.load_solver_pairs(problems=cfg.rethink_human_llm_problems, seed=cfg.data_seed)
        rows = []
        for r in df.itertuples():
            n = min(len(r.human.split()), len(r.llm.split()))
            for who, t in (("human", r.human), ("llm", r.llm)):
                rows.append({"id": f"{r.problem_id}::{who}", "group": r.problem_id, "text": _cut_words(t, n),
                             "full_words": len(t.split()), "context": r.problem, "label": who == "human", "kind": who})
        out = pd.DataFrame(rows, columns=["id", "group", "text", "full_words", "context", "label", "kind"])
        out.attrs["labelled"] = len(out) > 0
        out.attrs["why"] = "" if len(out) else "no crowd (Prolific) and GPT-4 solutions of the same problems here"
        return out
    if text_set == "ttcw":
        st = ttcw.load_stories()
        st = st.iloc[:cfg.rethink_ttcw_stories] if cfg.rethink_ttcw_stories < len(st) else st
        out = pd.DataFrame({"id": st["story_id"], "group": st["group"], "text": st["text"],
                            "context": None, "label": st["source"], "kind": st["source"]})
        labelled = ttcw.has_verdicts()
        out.attrs["labelled"] = labelled
        out.attrs["why"] = "" if labelled else "no TTCW expert verdicts here (bundled sample stories only)"
        if labelled:
            v = ttcw.load_verdicts()
            out = out.merge(v, left_on="id", right_on="story_id", how="left").drop(columns="story_id")
            out.attrs.update(labelled=True, why="")
        return out
    if text_set == "aut":
        df = aut.load_ocsai(cfg.rethink_aut_ratings, objects=2, seed=cfg.data_seed)
        out = pd.DataFrame({"id": df["item_id"], "group": df["item_id"], "object": df["prompt"],
                            "text": df["response"], "context": [f"Uses for a {o}:" for o in df["prompt"]],
                            "label": df["score"], "kind": df["prompt"]})
        out.attrs["labelled"] = not (df["source"] == "sample").all()
        out.attrs["why"] = "" if out.attrs["labelled"] else "only the bundled AUT sample (not real ratings)"
        return out
    if text_set == "msrp":
        pairs, err = _try(lambda: msrp.read_msrp("test"))
        if pairs is None:
            out = pd.DataFrame(columns=["id", "group", "text", "context", "label", "kind", "side"])
            out.attrs.update(labelled=False, why=f"MSRP not available here ({err})")
            return out
        rng = np.random.default_rng(cfg.data_seed)
        rows = []
        for q in (1, 0):
            idx = [i for i, p in enumerate(pairs) if p[2] == q]
            for i in rng.permutation(idx)[:cfg.rethink_paraphrase_pairs]:
                for side in (0, 1):
                    rows.append({"id": f"msrp-{i}-{side}", "group": f"msrp-{i}", "text": pairs[i][side],
                                 "context": None, "label": bool(q), "kind": "paraphrase" if q else "different",
                                 "side": side})
        out = pd.DataFrame(rows)
        out.attrs.update(labelled=True, why="")
        return out
    raise ValueError(f"unknown text set {text_set!r}")


# -- references --------------------------------------------------------------------------------------
def _max_L(cfg) -> int:
    return max(cfg.rethink_ci_sweep_max, cfg.rethink_ci_l_max, 8)


def reference(cfg: RethinkingConfig, text_set: str):
    """The leave-group-out n-gram index a text set is scored against (built once, saved by corpus hash)."""
    return memo(cfg, f"index {text_set}", lambda: _reference(cfg, text_set))


def macgyver_pool() -> list[tuple[str, str]]:
    """Every MacGyver solution available, as (problem_id, text): verified, benchmark (all solvers), crowd."""
    docs = [(r["problem_id"], r["solution"]) for r in macgyver.load_problems()[0] if r["solution"]]
    src = macgyver.source()
    if macgyver.file_of(macgyver.DATASET, src, "annotations", required=False) is not None:
        docs += [(macgyver.problem_id(r["problem_id"]), macgyver.clean(r.get("solution")))
                 for r in macgyver._benchmark(src) if r.get("solution")]
    hs, _ = _try(macgyver.load_human_solutions)
    if hs is not None:
        docs += [(r.problem_id, r.solution) for r in hs.itertuples() if r.source == "additional"]
    return docs


def _reference(cfg, text_set):
    L = range(1, _max_L(cfg) + 1)
    if text_set in ("ps", "solver"):
        return cached_index(macgyver_pool(), L, "macgyver-pool")
    if text_set == "ttcw":
        st = ttcw.load_stories()
        return cached_index(list(zip(st["group"], st["text"])), L, "ttcw-stories")
    if text_set == "aut":
        full = aut.load_ocsai(None, objects=2, seed=cfg.data_seed)
        return cached_index(list(zip(full["item_id"], full["response"])), range(1, cfg.rethink_aut_l_max + 1), "aut-ocsai")
    if text_set == "msrp":
        t = texts(cfg, "msrp")
        return cached_index(list(zip(t["group"], t["text"])), L, "msrp-pairs")
    raise ValueError(text_set)


# -- per-text measures ----------------------------------------------------------------------------------
def _ci_range(cfg, text_set):
    """L range of the CI: the paper's for solutions and stories; 2..rethink_aut_l_max for short texts
    (AUT responses, MSRP sentences), where 5-grams are almost never shared."""
    return C.l_range(2, cfg.rethink_aut_l_max) if text_set in ("aut", "msrp") else Ls(cfg)


def measures(cfg: RethinkingConfig, text_set: str) -> pd.DataFrame:
    """One row per text: CI (+ uniq_L for every L of the index), PPL, PPL given the context, bits per
    byte, template presence and templates per token (templates pooled over the whole set)."""
    return memo(cfg, f"measures {text_set}", lambda: _measures(cfg, text_set))


def _measures(cfg, text_set):
    t = texts(cfg, text_set).copy()
    if t.empty:
        return t
    idx = reference(cfg, text_set)
    groups = list(t["group"])
    sweep = tuple(L for L in idx.lengths if L >= 2)
    recs = C.creativity_index_many(list(t["text"]), idx, sweep, "mean", groups)
    lo_hi = _ci_range(cfg, text_set)
    t["ci"] = [C.aggregate({L: r.l_uniq[L] for L in lo_hi}, cfg.rethink_ci_agg) for r in recs]
    for L in sweep:
        t[f"uniq_{L}"] = [r.l_uniq[L] for r in recs]
    t["n_words"] = [r.n_tokens for r in recs]
    model = _model(cfg, cfg.model)
    # perplexity (the only model call here): the first rethink_ppl_items texts of each group (msrp: pairs)
    unit = t["group"] if text_set == "msrp" else t["id"]
    first = {k: set(list(dict.fromkeys(unit[t["kind"] == k]))[:cfg.rethink_ppl_items]) for k in t["kind"].unique()}
    scored = np.array([u in first[k] for u, k in zip(unit, t["kind"])], dtype=bool)
    cut = [_cut_words(x, cfg.rethink_ppl_max_words) for x in t["text"][scored]]
    for c in ("ppl", "bpb", "ppl_cond"):
        t[c] = np.nan
    pp = perplexity_many(model, cut)
    t.loc[scored, "ppl"] = [p.ppl for p in pp]
    t.loc[scored, "bpb"] = [p.bits_per_byte for p in pp]
    if text_set in ("ps", "aut"):
        pc = perplexity_many(model, cut, list(t["context"][scored]))
        t.loc[scored, "ppl_cond"] = [p.ppl for p in pc]
    else:
        t = t.drop(columns="ppl_cond")
    tagged = T.pos_tag(list(t["text"]))
    st = T.template_stats(tagged, n=cfg.rethink_template_n, top_n=cfg.rethink_template_top)
    t["has_template"] = [float(h) for h in st["has"]]
    t["tpt"] = st["tpt"]
    t.attrs.update(texts(cfg, text_set).attrs)
    save_table(cfg, "rethinking", f"measures_{text_set}", t.drop(columns=["context"]))
    return t


# -- the rubric judge --------------------------------------------------------------------------------
def _balanced(t: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` texts per kind (seeded)."""
    parts = [g.sample(min(n, len(g)), random_state=seed) for _, g in t.groupby("kind", sort=True)]
    return pd.concat(parts).reset_index(drop=True) if parts else t.iloc[:0]


def _alternating(t: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` texts in all, taken in turn from each kind (seeded): 1 -> one text, 4 -> two of each of 2 kinds."""
    b = _balanced(t, n, seed)
    b["_r"] = b.groupby("kind").cumcount()
    return b.sort_values(["_r", "kind"]).head(n).drop(columns="_r").reset_index(drop=True)


def judge_scores(cfg: RethinkingConfig, text_set: str = "ps") -> pd.DataFrame:
    """Rubric-judge scores (expected values) of ``judge_items`` texts per class: ``id, kind, label, judge``."""
    return memo(cfg, f"judge {text_set}", lambda: _judge_scores(cfg, text_set))


def _judge_scores(cfg, text_set):
    t = texts(cfg, text_set)
    if t.empty:
        return pd.DataFrame(columns=["id", "kind", "label", "judge"])
    domain = "cw" if text_set == "ttcw" else "ps"
    n = cfg.rethink_ttcw_judge_stories if text_set == "ttcw" else cfg.rethink_judge_items
    if n <= 0:
        return pd.DataFrame(columns=["id", "kind", "label", "judge"])
    pick = _balanced(t, n, cfg.seed) if text_set != "ttcw" else t.iloc[:n]
    items = [{"id": r.id, "text": _cut_words(r.text, cfg.rethink_ppl_max_words), "problem": r.context}
             for r in pick.itertuples()]
    recs = R.rubric_judge(_model(cfg, cfg.judge_model), items, domain, analysis_tokens=cfg.rethink_judge_tokens)
    head = R.HEADLINE[domain]
    out = pick[["id", "kind", "label"]].copy()
    out["judge"] = [r.scores[head] for r in recs]
    for a in recs[0].scores if recs else []:
        out[f"judge_{a}"] = [r.scores[a] for r in recs]
    out["state"] = [r.state for r in recs]
    save_table(cfg, "rethinking", f"judge_{text_set}", pd.DataFrame([r.to_dict() for r in recs]))
    return out


def _with_judge(cfg, text_set):
    m = measures(cfg, text_set)
    if m.empty:
        return m
    j = judge_scores(cfg, text_set)
    return m.merge(j[["id", "judge"]], on="id", how="left") if len(j) else m.assign(judge=np.nan)


# -- tables ------------------------------------------------------------------------------------------------
def _ms(x) -> str:
    x = pd.Series(x, dtype=float).dropna()
    return "–" if x.empty else f"{x.mean():.2f} ± {x.std(ddof=1) if len(x) > 1 else 0:.2f}"


def table2(cfg: RethinkingConfig) -> pd.DataFrame:
    """Table 2 analogue: per text set and group, CI, PPL, CR-POS, template rate (TPT) and judge, with
    templates extracted from each group itself as the paper does."""
    rows = []
    for text_set, name in (("ps", "PS (MacGyver)"), ("solver", "crowd vs GPT-4 (MacGyver)"), ("ttcw", "TTCW stories")):
        m = _with_judge(cfg, text_set)
        if m.empty:
            rows.append({"set": name, "group": "–", "n": 0, "note": texts(cfg, text_set).attrs.get("why", "")})
            continue
        for kind, g in m.groupby("kind", sort=False):
            tagged = T.pos_tag(list(g["text"]))
            st = T.template_stats(tagged, n=cfg.rethink_template_n, top_n=cfg.rethink_template_top)
            rows.append({"set": name, "group": kind, "n": len(g), "CI": _ms(g["ci"]), "PPL": _ms(g["ppl"]),
                         "CR-POS": st["cr_pos"], "template rate (TPT)": f"{100 * st['rate']:.1f}% ({st['tpt_mean']:.3f})",
                         "judge": _ms(g["judge"]), "words": round(float(g["n_words"].mean()), 1), "note": ""})
    df = pd.DataFrame(rows)
    return captioned(df, f"Table 2 analogue on our data: CI = mean uniq_L over L = {cfg.rethink_ci_l_min}..{cfg.rethink_ci_l_max} "
                          f"({cfg.rethink_ci_agg}), in-pool leave-group-out reference; PPL under {cfg.model}; CR-POS and "
                          f"template rate with top-{cfg.rethink_template_top} POS {cfg.rethink_template_n}-grams of each group; judge = "
                          f"rubric headline aspect ({cfg.judge_model}, expected value, {cfg.rethink_judge_items} per group)")


def paper_table2() -> pd.DataFrame:
    df = pd.DataFrame(PAPER_TABLE2, columns=["domain", "group", "CI", "PPL", "CR-POS", "template rate (TPT)", "judge"])
    return captioned(df, "The paper's Table 2 (Lu et al. 2025; row labels corrected: the text extract shifts the "
                          "domain column). Its PS conventional side is not released; its PPL model is not stated.")


def _check_rows(cfg, check: str, m: pd.DataFrame, label_col: str, kind: str, cols=None) -> list[dict]:
    rows = []
    for c in cols or [c for c in MEASURES if c in m.columns]:
        x = m[c].astype(float).to_numpy()
        if kind == "auc":
            y = m[label_col].astype(float).to_numpy()
            r = S.auc_ci(y, x, n_boot=cfg.n_boot, seed=cfg.seed)
            val, n = r["auc"], r["n"]
            agrees = "" if np.isnan(val) else ("yes" if (val - 0.5) * DIRECTION[c] > 0 else "no")
        else:
            r = S.spearman_ci(x, m[label_col].astype(float).to_numpy(), n_boot=cfg.n_boot, seed=cfg.seed)
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


def table_checks(cfg: RethinkingConfig) -> pd.DataFrame:
    """Each measure against people: AUROC (two labelled groups) or Spearman rho (ratings), bootstrap 95% CI, n,
    and whether it goes the way 'more creative' would."""
    rows = []
    for text_set, check, label, kind in (("ps", "MacGyver unconventional vs conventional", "label", "auc"),
                                          ("solver", "MacGyver crowd vs GPT-4 (length-matched)", "label", "auc")):
        t = texts(cfg, text_set)
        rows += _check_rows(cfg, check, _with_judge(cfg, text_set), label, kind) if t.attrs.get("labelled") \
            else _skip(check, t.attrs.get("why", ""))
    t = texts(cfg, "ttcw")
    if t.attrs.get("labelled"):
        m = measures(cfg, "ttcw")
        j = judge_scores(cfg, "ttcw")
        m = m.merge(j[["id", "judge"]], on="id", how="left") if len(j) else m
        rows += _check_rows(cfg, "TTCW expert passes (0-42)", m, "passes", "rho")
        rows += _check_rows(cfg, "TTCW expert originality passes (0-9)", m, "originality_passes", "rho",
                            cols=["ci", "ppl", "tpt"])
    else:
        rows += _skip("TTCW expert passes", t.attrs.get("why", ""))
    t = texts(cfg, "aut")
    rows += _check_rows(cfg, f"AUT human originality (CI with L = 2..{cfg.rethink_aut_l_max})", measures(cfg, "aut"), "label",
                        "rho", cols=["ci", "ppl", "ppl_cond", "bpb"]) if t.attrs.get("labelled") \
        else _skip("AUT human originality", t.attrs.get("why", ""))
    return captioned(pd.DataFrame(rows), "Checks against people. 'right direction': the measure moves the way its "
                                          "reading as creativity predicts (CI, PPL, judge up; templates down for the "
                                          "more creative side). TTCW: n = 36 stories, |rho| >= 0.33 is needed for "
                                          "p < .05.")


def table_ttcw_judges(cfg: RethinkingConfig) -> pd.DataFrame:
    """The paper's staged LLM judges (Chakrabarty et al.) against the experts: Spearman of the per-story Yes
    counts, a baseline for the measures above."""
    t = texts(cfg, "ttcw")
    if not t.attrs.get("labelled"):
        return captioned(pd.DataFrame(_skip("TTCW staged LLM judges", t.attrs.get("why", ""))), "TTCW LLM-judge baseline")
    rows = []
    for name in ttcw.llm_judge_models():
        j = ttcw.load_llm_judge(name)
        m = t.merge(j, left_on="id", right_on="story_id", how="inner")
        r = S.spearman_ci(m["llm_passes"], m["passes"], n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"LLM judge (staged)": name, "rho vs expert passes": r["rho"], "ci_low": r["lo"],
                     "ci_high": r["hi"], "n": r["n"], "mean Yes count (of 14)": float(m["llm_passes"].mean()),
                     "expert mean (of 42)": float(m["passes"].mean())})
    return captioned(pd.DataFrame(rows), "Staged TTCW LLM-judge replies (Yes counts over the 14 tests) vs the "
                                          "experts' pass counts, on the LLM-written stories")


def table_invariance(cfg: RethinkingConfig) -> pd.DataFrame:
    """Paraphrase invariance (Table 3 analogue): |difference| of each measure between the two sentences of
    a pair, for MSRP paraphrases and non-paraphrases. A measure of ideas should barely move for a
    paraphrase: AUROC of |diff| separating the non-paraphrases, and the mean |diff| of each kind."""
    t = texts(cfg, "msrp")
    if not t.attrs.get("labelled"):
        return captioned(pd.DataFrame(_skip("paraphrase invariance", t.attrs.get("why", ""))), "Paraphrase invariance")
    m = measures(cfg, "msrp")
    rows = []
    for c in ["ci", "ppl", "bpb", "tpt"]:
        piv = m.pivot(index="group", columns="side", values=c)
        lab = m.groupby("group")["label"].first().loc[piv.index]
        d = (piv[0] - piv[1]).abs()
        r = S.auc_ci((~lab.astype(bool)).astype(float), d, n_boot=cfg.n_boot, seed=cfg.seed)
        rows.append({"measure": MEASURES[c], "mean |diff| paraphrase": float(d[lab].mean()),
                     "mean |diff| different": float(d[~lab].mean()),
                     "paraphrase |diff| / SD of the measure": float(d[lab].mean() / m[c].std()) if m[c].std() > 0 else np.nan,
                     "AUROC(|diff|: different > paraphrase)": r["auc"], "ci_low": r["lo"], "ci_high": r["hi"],
                     "pairs": r["n"]})
    return captioned(pd.DataFrame(rows), "Paraphrase invariance on MSRP sentence pairs: a measure of the idea "
                                          "should not move for a paraphrase (|diff| ~ 0). CI here: L = 2.."
                                          f"{cfg.rethink_aut_l_max} against the other pairs' sentences")


# -- the judge's own tests -----------------------------------------------------------------------------
def table_twist(cfg: RethinkingConfig) -> pd.DataFrame:
    """Prompt-twist test: the same solutions asked "is it conventional?" and "is it unconventional?"."""
    t = texts(cfg, "ps")
    pick = _alternating(t, cfg.rethink_twist_items, cfg.seed)
    res = pd.DataFrame(R.twist_test(_model(cfg, cfg.judge_model),
                                    [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()]))
    res["kind"] = list(pick["kind"])
    save_table(cfg, "rethinking", "twist", res)
    out = res.groupby("kind").agg(n=("id", "size"), p_yes_conventional=("p_yes_conventional", "mean"),
                                  p_yes_unconventional=("p_yes_unconventional", "mean"),
                                  says_unconventional=("says_unconventional", "mean"),
                                  contradictions=("contradiction", "mean")).reset_index()
    tot = {"kind": "all", "n": len(res), "p_yes_conventional": res["p_yes_conventional"].mean(),
           "p_yes_unconventional": res["p_yes_unconventional"].mean(),
           "says_unconventional": res["says_unconventional"].mean(), "contradictions": res["contradiction"].mean()}
    out = pd.concat([out, pd.DataFrame([tot])], ignore_index=True)
    return captioned(out, f"Prompt twist ({cfg.judge_model}): P(yes) to both questions; a contradiction is yes to "
                           "both or no to both (paper: ~20% of solutions)")


def table_rerun(cfg: RethinkingConfig) -> pd.DataFrame:
    """Rerun consistency: ``reruns`` analyses sampled at temperature 1 for ``rerun_items`` solutions."""
    t = texts(cfg, "ps")
    pick = _alternating(t, cfg.rethink_rerun_items, cfg.seed)
    items = [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()]
    recs = R.rubric_judge(_model(cfg, cfg.judge_model), items, "ps", analysis_tokens=cfg.rethink_judge_tokens,
                          samples=cfg.rethink_reruns, seed=cfg.seed)
    save_table(cfg, "rethinking", "rerun", pd.DataFrame([r.to_dict() for r in recs]))
    rows = [R.rerun_consistency(recs, a) for a, _, _ in R.ASPECTS["ps"]]
    return captioned(pd.DataFrame(rows), "Rerun consistency of the rubric judge: mean within-solution SD of the "
                                          "expected score, and the share of solutions whose most likely score changes")


# -- figures ----------------------------------------------------------------------------------------------
def fig_l_sensitivity(cfg: RethinkingConfig) -> go.Figure:
    """Fig. 2/3 analogue: mean L-uniqueness per group against L, for each labelled contrast."""
    fig = go.Figure()
    for text_set in ("ps", "solver", "ttcw"):
        m = measures(cfg, text_set)
        if m.empty:
            continue
        cols = sorted((c for c in m.columns if c.startswith("uniq_")), key=lambda c: int(c[5:]))
        for kind, g in m.groupby("kind"):
            fig.add_trace(go.Scatter(x=[int(c[5:]) for c in cols], y=[g[c].mean() for c in cols], mode="lines+markers",
                                     name=f"{text_set}: {kind} (n={len(g)})"))
    fig.update_layout(title="L-uniqueness vs n-gram length L (in-pool, leave-group-out reference)",
                      xaxis_title="L (words)", yaxis_title="mean uniq_L", height=420)
    return fig


def table_l_ranges(cfg: RethinkingConfig) -> pd.DataFrame:
    """Fig. 3 analogue: the gap and AUROC of CI between the two sides as the L range widens
    (lo..hi for hi = ci_l_max .. ci_sweep_max), mean and sum aggregations."""
    rows = []
    for text_set in ("ps", "solver"):
        m = measures(cfg, text_set)
        if m.empty or not texts(cfg, text_set).attrs.get("labelled"):
            continue
        for hi in range(cfg.rethink_ci_l_max, cfg.rethink_ci_sweep_max + 1):
            for agg in C.AGGREGATIONS:
                ci = m[[f"uniq_{L}" for L in range(cfg.rethink_ci_l_min, hi + 1)]]
                ci = ci.mean(axis=1) if agg == "mean" else ci.sum(axis=1)
                a = S.auc(m["label"].astype(float), ci)
                rows.append({"contrast": text_set, "L range": f"{cfg.rethink_ci_l_min}..{hi}", "agg": agg,
                             "gap (positive - other)": float(ci[m["label"]].mean() - ci[~m["label"]].mean()),
                             "AUROC": a["auc"], "n": a["n"]})
    return captioned(pd.DataFrame(rows), "CI gap vs L range (paper Fig. 3: widening 5-7 to 5-11 makes the "
                                          "human-LLM gap negligible); positive = unconventional / crowd side")


def fig_template_n(cfg: RethinkingConfig) -> go.Figure:
    """Fig. 4 analogue: template rate (top-100 POS n-grams of each group) vs template length n."""
    fig = go.Figure()
    for text_set in ("ps", "solver", "ttcw"):
        m = measures(cfg, text_set)
        if m.empty:
            continue
        for kind, g in m.groupby("kind"):
            tagged = T.pos_tag(list(g["text"]))
            ys = [T.template_stats(tagged, n=n, top_n=cfg.rethink_template_top)["rate"] for n in cfg.rethink_template_n_sweep]
            fig.add_trace(go.Scatter(x=list(cfg.rethink_template_n_sweep), y=ys, mode="lines+markers",
                                     name=f"{text_set}: {kind} (n={len(g)})"))
    fig.update_layout(title=f"Share of texts with >= 1 template vs template length (top {cfg.rethink_template_top})",
                      xaxis_title="template length n (POS tags)", yaxis_title="template rate", height=420)
    return fig


def table_template_modes(cfg: RethinkingConfig) -> pd.DataFrame:
    """Our tag-sequence matching beside the diversity library's surface-string matching (compat), per group."""
    rows = []
    for text_set in ("ps", "solver", "ttcw"):
        m = measures(cfg, text_set)
        for kind, g in (m.groupby("kind") if not m.empty else []):
            tagged = T.pos_tag(list(g["text"]))
            for mode in ("sequence", "compat"):
                st = T.template_stats(tagged, list(g["text"]), n=cfg.rethink_template_n, top_n=cfg.rethink_template_top, mode=mode)
                rows.append({"set": text_set, "group": kind, "mode": mode, "n": len(g), "template rate": st["rate"],
                             "TPT": st["tpt_mean"], "CR-POS": st["cr_pos"]})
    return captioned(pd.DataFrame(rows), "Template statistics: tag-sequence matching within sentences (ours) vs "
                                          "the diversity library's surface-substring matching over a stream whose "
                                          "n-grams cross sentences, and its double-gzip CR-POS (compat)")


def fig_correlations(cfg: RethinkingConfig, text_set: str = "ps") -> go.Figure:
    """Spearman correlations between all measures on the same texts (pairwise complete)."""
    m = _with_judge(cfg, text_set)
    cols = [c for c in ["ci", "ppl", "ppl_cond", "bpb", "tpt", "judge", "n_words", "passes"] if c in m.columns
            and m[c].notna().sum() >= 3]
    names = {**MEASURES, "n_words": "length (words)", "passes": "expert passes"}
    cm = m[cols].astype(float).corr(method="spearman", min_periods=5)
    fig = go.Figure(go.Heatmap(z=cm.values, x=[names[c] for c in cols], y=[names[c] for c in cols], zmin=-1, zmax=1,
                               colorscale="RdBu", text=np.round(cm.values, 2), texttemplate="%{text}"))
    fig.update_layout(title=f"Spearman correlations between measures ({text_set}, n = {len(m)}; judge on "
                            f"{int(m['judge'].notna().sum()) if 'judge' in m else 0})", height=460)
    return fig


def table_example(cfg: RethinkingConfig) -> pd.DataFrame:
    """Every measure on one unconventional MacGyver solution, its reused spans highlighted."""
    t = texts(cfg, "ps")
    m = _with_judge(cfg, "ps")
    pref = m.assign(_j=m["judge"].notna(), _u=m["kind"] == "unconventional").sort_values(["_j", "_u"], ascending=False,
                                                                                        kind="stable")
    row = pref.iloc[0]
    idx = reference(cfg, "ps")
    marked = C.highlight(row["text"], idx, cfg.rethink_ci_l_min, row["group"], ("\x01", "\x02"))
    marked = html.escape(marked).replace("\x01", "<mark>").replace("\x02", "</mark>")
    tagged = T.pos_tag([row["text"]])[0]
    tpl = T.extract_templates(T.pos_tag(list(t["text"])), cfg.rethink_template_n, cfg.rethink_template_top)
    hits = T.template_matches(tagged, tpl, cfg.rethink_template_n)
    shown = "; ".join(f"{' '.join(tagged.tokens[i:i + cfg.rethink_template_n])} [{' '.join(g)}]" for i, g in hits[:4])
    rows = [("text (reused spans of >= %d words marked)" % cfg.rethink_ci_l_min, marked),
            ("creativity index (%s of uniq_L, L = %d..%d)" % (cfg.rethink_ci_agg, cfg.rethink_ci_l_min, cfg.rethink_ci_l_max), f"{row['ci']:.3f}"),
            ("uniq_L for L = 2..8", ", ".join(f"{L}: {row[f'uniq_{L}']:.2f}" for L in range(2, 9) if f"uniq_{L}" in row)),
            ("reference", ", ".join(f"{k}: {v}" for k, v in idx.describe().items())),
            ("perplexity / PPL given the problem / bits per byte",
             f"{row['ppl']:.2f} / {row.get('ppl_cond', float('nan')):.2f} / {row['bpb']:.3f}"),
            ("template occurrences / tokens (first shown)", f"{len(hits)} / {len(tagged.tags)}: {shown}"),
            ("rubric judge Unconventionality (expected value, 1-5)",
             "not judged" if pd.isna(row.get("judge")) else f"{row['judge']:.2f}")]
    return captioned(pd.DataFrame(rows, columns=["measure", "value"]),
                      f"One MacGyver solution ({row['id']}, {row['kind']}) under every measure")
