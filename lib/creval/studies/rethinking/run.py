"""The rethinking study's run (chapter 06, Lu et al. 2025): every measure of every text, into ``cfg.run_dir``.

:func:`run` reads the text sets, builds their n-gram references, tags them, scores them with every model
under test and asks the rubric judge (``judge_model``); the report only reads the tables it writes:

- ``sets``: per text set (``ps``, ``solver``, ``ttcw``, ``aut``, ``msrp``) its size, whether it carries the
  human labels its checks need (``labelled``; ``why`` when not), its CI range and its reference;
- ``data_sources``: where each dataset was read from (the chapter prints it);
- ``measures_<set>``: one row per text, in the set's order: ``id, group, text, label, kind`` (+ the set's own
  fields: ``full_words``, ``object``, ``side``, the TTCW experts' ``passes``, ``originality_passes``, ...),
  the creativity index ``ci`` and ``uniq_<L>`` for every L of the reference (the Fig. 2/3 L sweep),
  ``n_words``, and templates pooled over the set (``has_template``, ``tpt``);
- ``perplexity``: ``set, id, model, ppl, bpb, n_tokens`` (+ ``ppl_cond`` = PPL given the problem for ``ps``
  and ``aut``) of the first ``rethink_ppl_items`` texts of each group, for every model in ``cfg.tested``;
- ``templates``: template statistics of each group of ``ps``, ``solver``, ``ttcw`` with templates extracted
  from the group itself: ``set, kind, texts, n, top, mode, rate, tpt_mean, cr_pos`` for every template length
  of ``rethink_template_n_sweep`` and ``rethink_template_n`` (sequence matching) and ``rethink_template_n`` in
  the diversity library's ``compat`` mode (the Fig. 4 sweep and the matching-mode comparison);
- ``judge``: rubric-judge records (:class:`~creval.judges.rubric.RubricRecord`) of ``rethink_judge_items``
  texts per class of ``ps`` and ``solver`` and the first ``rethink_ttcw_judge_stories`` TTCW stories, with
  ``set, id, kind, label`` and ``judge`` (the headline aspect);
- ``twist`` (prompt twist) and ``rerun`` (sampled analyses) of the judge on ``ps`` solutions;
- ``ttcw_llm_judges``: the staged TTCW LLM judges' Yes counts per story (``judge, story_id, llm_passes``);
- ``example``: one MacGyver solution as data: its tokens, the spans reused from other problems' solutions
  (``spans``, L = ``rethink_ci_l_min``), its POS tags and template occurrences, and the reference it met.

Creativity-index references are in-pool and leave-group-out: every MacGyver solution we have, by problem,
minus the scored text's problem; the TTCW stories minus the same plot; AUT responses minus the response
itself; MSRP sentences minus the pair itself (``datasets.macgyver.solution_pool`` and the n-gram index).

Units (:mod:`creval.studies.units`, in ``units/`` of the run folder; a rerun does only the unfinished ones):
``texts`` (each set's measures, each template set's group statistics; no model call) and ``calls`` (each
``PPL_CHUNK`` texts of a set under one model under test, the rubric judge of each set, the twist, the reruns),
the latter run together up to the in-flight budget of the models when they are servers. The call cache serves
every model call and POS tag made before.
"""
from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets import aut, macgyver, msrp, ttcw
from creval.measures import creativity_index as C
from creval.measures import templates as T
from creval.measures.ngram_index import word_tokenize
from creval.studies import contract, units
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.units import Unit

log = logging.getLogger("creval.studies.rethinking.run")

SETS = ("ps", "solver", "ttcw", "aut", "msrp")
JUDGED = ("ps", "solver", "ttcw")              # sets the rubric judge scores
TEMPLATE_SETS = ("ps", "solver", "ttcw")       # sets whose groups get their own templates (Table 2, Fig. 4)
WITH_CONTEXT = ("ps", "aut")                   # sets scored by perplexity given their problem too
PPL_CHUNK = 8                                  # texts of a set scored by perplexity in one unit


def cut_words(text: str, n: int) -> str:
    """The first ``n`` whitespace words of ``text``."""
    return " ".join(str(text).split()[:n])


def _try(fn):
    """``(value, None)`` or ``(None, reason)`` for a loader that may lack its data on this machine."""
    try:
        return fn(), None
    except CrevalError as e:
        return None, str(e).splitlines()[0]


# -- data ------------------------------------------------------------------------------------------------
SOURCES = (("MacGyver solutions (PS, crowd vs LLM)", macgyver), ("TTCW stories and expert verdicts", ttcw),
           ("AUT originality ratings (Ocsai-1)", aut), ("MSRP paraphrase pairs", msrp))


def data_kinds() -> dict:
    """Whether each dataset here is the real one, our bundled sample, or missing (enters the run id)."""
    out = {}
    for _, mod in SOURCES:
        src, _ = _try(mod.source)
        out[mod.DATASET.name] = "missing" if src is None else "sample" if src.is_sample else "real"
    return out


def data_sources() -> list[dict]:
    """Where each text set comes from, and whether it carries the human labels its check needs."""
    from creval.datasets.base import provenance
    rows = []
    for what, mod in SOURCES:
        src, err = _try(mod.source)
        rows.append({"data": what, "where": err if src is None else provenance(mod.DATASET, src, what).split(": ", 1)[1],
                     "labels": "no" if src is None or src.is_sample else "yes"})
    return rows


def load_texts(cfg: RethinkingConfig, text_set: str) -> pd.DataFrame:
    """The texts of one set: ``id, group, text, label, kind, context`` (+ set-specific fields); ``attrs``
    say whether it is ``labelled`` and ``why`` not."""
    if text_set == "ps":
        df = macgyver.load_feasible_unconventional(cfg.rethink_ps_per_class or None, cfg.data_seed)
        out = pd.DataFrame({"id": [f"{p}::verified" for p in df["problem_id"]], "group": df["problem_id"],
                            "text": df["solution"], "context": df["problem"], "label": df["unconventional"],
                            "kind": np.where(df["unconventional"], "unconventional", "conventional")})
        out.attrs["labelled"] = not str(df.attrs.get("source", "")).startswith("sample")
        out.attrs["why"] = "" if out.attrs["labelled"] else "only the bundled MacGyver sample (not real labels)"
        return out
    if text_set == "solver":
        df = macgyver.load_solver_pairs(problems=cfg.rethink_human_llm_problems or None, seed=cfg.data_seed)
        rows = []
        for r in df.itertuples():
            n = min(len(r.human.split()), len(r.llm.split()))
            for who, t in (("human", r.human), ("llm", r.llm)):
                rows.append({"id": f"{r.problem_id}::{who}", "group": r.problem_id, "text": cut_words(t, n),
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
        if labelled:
            v = ttcw.load_verdicts()
            out = out.merge(v, left_on="id", right_on="story_id", how="left").drop(columns="story_id")
        out.attrs.update(labelled=labelled, why="" if labelled else "no TTCW expert verdicts here (bundled sample "
                                                                   "stories only)")
        return out
    if text_set == "aut":
        df = aut.load_ocsai(cfg.rethink_aut_ratings or None, objects=2, seed=cfg.data_seed)
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


# -- references ------------------------------------------------------------------------------------------
def max_length(cfg: RethinkingConfig) -> int:
    """Longest n-gram of the references: the L sweep's end (at least 8, the example's uniq_L list)."""
    return max(cfg.rethink_ci_sweep_max, cfg.rethink_ci_l_max, 8)


def ci_range(cfg: RethinkingConfig, text_set: str) -> tuple[int, ...]:
    """L range of the CI: the paper's (``rethink_ci_l_min..rethink_ci_l_max``) for solutions and stories;
    2..``rethink_aut_l_max`` for short texts (AUT responses, MSRP sentences), where 5-grams are almost never
    shared."""
    if text_set in ("aut", "msrp"):
        return C.l_range(2, cfg.rethink_aut_l_max)
    return C.l_range(cfg.rethink_ci_l_min, cfg.rethink_ci_l_max)


def reference(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame):
    """The leave-group-out n-gram index a text set is scored against (built once, saved by corpus hash)."""
    from creval.measures.ngram_index import cached_index
    L = range(1, max_length(cfg) + 1)
    if text_set in ("ps", "solver"):
        return cached_index(macgyver.solution_pool(), L, "macgyver-pool")
    if text_set == "ttcw":
        st = ttcw.load_stories()
        return cached_index(list(zip(st["group"], st["text"])), L, "ttcw-stories")
    if text_set == "aut":
        full = aut.load_ocsai(None, objects=2, seed=cfg.data_seed)
        return cached_index(list(zip(full["item_id"], full["response"])), range(1, cfg.rethink_aut_l_max + 1),
                            "aut-ocsai")
    if text_set == "msrp":
        return cached_index(list(zip(texts["group"], texts["text"])), L, "msrp-pairs")
    raise ValueError(text_set)


# -- per-text measures -----------------------------------------------------------------------------------
def text_measures(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame, idx) -> pd.DataFrame:
    """``texts`` (without ``context``) with ``ci``, ``uniq_<L>`` for every L >= 2 of the index, ``n_words``,
    and templates pooled over the set: ``has_template`` and templates per token ``tpt``."""
    t = texts.copy()
    sweep = tuple(L for L in idx.lengths if L >= 2)
    recs = C.creativity_index_many(list(t["text"]), idx, sweep, "mean", list(t["group"]))
    lo_hi = ci_range(cfg, text_set)
    t["ci"] = [C.aggregate({L: r.l_uniq[L] for L in lo_hi}, cfg.rethink_ci_agg) for r in recs]
    for L in sweep:
        t[f"uniq_{L}"] = [r.l_uniq[L] for r in recs]
    t["n_words"] = [r.n_tokens for r in recs]
    st = T.template_stats(T.pos_tag(list(t["text"])), n=cfg.rethink_template_n, top_n=cfg.rethink_template_top)
    t["has_template"] = [float(h) for h in st["has"]]
    t["tpt"] = st["tpt"]
    return t.drop(columns=["context"])


def ppl_scored(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> np.ndarray:
    """Which texts perplexity scores: the first ``rethink_ppl_items`` of each kind (MSRP: of pairs)."""
    unit = texts["group"] if text_set == "msrp" else texts["id"]
    first = {k: set(list(dict.fromkeys(unit[texts["kind"] == k]))[:cfg.rethink_ppl_items])
             for k in texts["kind"].unique()}
    return np.array([u in first[k] for u, k in zip(unit, texts["kind"])], dtype=bool)


def perplexity_rows(cfg: RethinkingConfig, model, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """``set, id, model, ppl, bpb, n_tokens`` (+ ``ppl_cond``) of ``texts`` (already the scored ones)."""
    from creval.measures.perplexity import perplexity_many
    cut = [cut_words(x, cfg.rethink_ppl_max_words) for x in texts["text"]]
    ctx = list(texts["context"]) if text_set in WITH_CONTEXT else []
    scored = perplexity_many(model, cut + cut[:len(ctx)], [None] * len(cut) + ctx)     # one batch
    pp, pc = scored[:len(cut)], scored[len(cut):] or [None] * len(cut)
    rows = []
    for i, p, c in zip(texts["id"], pp, pc):
        r = {"set": text_set, "id": i, "model": model.name, "ppl": p.ppl, "bpb": p.bits_per_byte,
             "n_tokens": p.n_tokens}
        if c is not None:
            r["ppl_cond"] = c.ppl
        rows.append(r)
    return rows


def group_templates(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """Template statistics of each group (kind) of a set, templates extracted from the group itself."""
    rows = []
    ns = sorted({*cfg.rethink_template_n_sweep, cfg.rethink_template_n})
    for kind, g in texts.groupby("kind", sort=False):
        tagged = T.pos_tag(list(g["text"]))
        asks = [(n, "sequence") for n in ns] + [(cfg.rethink_template_n, "compat")]
        for n, mode in asks:
            st = T.template_stats(tagged, list(g["text"]), n=n, top_n=cfg.rethink_template_top, mode=mode)
            rows.append({"set": text_set, "kind": kind, "texts": len(g), "n": n, "top": cfg.rethink_template_top,
                         "mode": mode, "rate": st["rate"], "tpt_mean": st["tpt_mean"], "cr_pos": st["cr_pos"]})
    return rows


# -- the rubric judge ------------------------------------------------------------------------------------
def balanced(t: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` texts per kind (seeded)."""
    parts = [g.sample(min(n, len(g)), random_state=seed) for _, g in t.groupby("kind", sort=True)]
    return pd.concat(parts).reset_index(drop=True) if parts else t.iloc[:0]


def alternating(t: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` texts in all, taken in turn from each kind (seeded): 1 -> one text, 4 -> two of each of 2 kinds."""
    b = balanced(t, n, seed)
    b["_r"] = b.groupby("kind").cumcount()
    return b.sort_values(["_r", "kind"]).head(n).drop(columns="_r").reset_index(drop=True)


def judge_pick(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> pd.DataFrame:
    """The texts the rubric judge scores: ``rethink_judge_items`` per class, or the first
    ``rethink_ttcw_judge_stories`` TTCW stories."""
    n = cfg.rethink_ttcw_judge_stories if text_set == "ttcw" else cfg.rethink_judge_items
    if texts.empty or n <= 0:
        return texts.iloc[:0]
    return texts.iloc[:n] if text_set == "ttcw" else balanced(texts, n, cfg.seed)


def judge_rows(cfg: RethinkingConfig, model, text_set: str, pick: pd.DataFrame) -> list[dict]:
    """Rubric-judge records of ``pick`` (texts cut to ``rethink_ppl_max_words``) with ``set, id, kind,
    label`` and the headline score ``judge``."""
    from creval.judges.registry import make_judge
    from creval.judges.rubric import HEADLINE
    domain = "cw" if text_set == "ttcw" else "ps"
    items = [{"id": r.id, "text": cut_words(r.text, cfg.rethink_ppl_max_words), "problem": r.context}
             for r in pick.itertuples()]
    judge = make_judge("rubric", model, analysis_tokens=cfg.rethink_judge_tokens)
    recs = judge(items, domain)
    return [{"set": text_set, "id": i, "kind": k, "label": lab, "judge": r.scores[HEADLINE[domain]], **r.to_dict()}
            for i, k, lab, r in zip(pick["id"], pick["kind"], pick["label"], recs)]


def twist_rows(cfg: RethinkingConfig, model, texts: pd.DataFrame) -> list[dict]:
    """Prompt twist on ``rethink_twist_items`` MacGyver solutions, alternating kinds."""
    from creval.judges.rubric import twist_test
    pick = alternating(texts, cfg.rethink_twist_items, cfg.seed)
    res = twist_test(model, [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()])
    return [{**r, "kind": k} for r, k in zip(res, pick["kind"])]


def rerun_rows(cfg: RethinkingConfig, model, texts: pd.DataFrame) -> list[dict]:
    """``rethink_reruns`` analyses sampled at temperature 1 for ``rethink_rerun_items`` solutions, each scored."""
    from creval.judges.registry import make_judge
    pick = alternating(texts, cfg.rethink_rerun_items, cfg.seed)
    items = [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()]
    judge = make_judge("rubric", model, analysis_tokens=cfg.rethink_judge_tokens, samples=cfg.rethink_reruns,
                       seed=cfg.seed)
    return [r.to_dict() for r in judge(items, "ps")]


# -- the example -----------------------------------------------------------------------------------------
def example_row(cfg: RethinkingConfig, measures: pd.DataFrame, judged: set, idx) -> dict:
    """One MacGyver solution as data (a judged unconventional one when there is one): its tokens, the spans
    reused from other problems' solutions, its template occurrences (templates pooled over the set)."""
    pref = measures.assign(_j=measures["id"].isin(judged), _u=measures["kind"] == "unconventional")
    row = pref.sort_values(["_j", "_u"], ascending=False, kind="stable").iloc[0]
    L = cfg.rethink_ci_l_min
    toks = word_tokenize(row["text"])
    spans = C.reused_spans(toks, idx, L, row["group"])
    tagged = T.pos_tag([row["text"]])[0]
    tpl = T.extract_templates(T.pos_tag(list(measures["text"])), cfg.rethink_template_n, cfg.rethink_template_top)
    hits = T.template_matches(tagged, tpl, cfg.rethink_template_n)
    n = cfg.rethink_template_n
    return {"id": row["id"], "group": row["group"], "kind": row["kind"], "text": row["text"], "tokens": toks,
            "span_L": L, "spans": [list(s) for s in spans], "reference": idx.describe(), "pos_tokens": len(tagged.tags),
            "template_n": n, "template_hits": [{"start": i, "words": list(tagged.tokens[i:i + n]), "tags": list(g)}
                                               for i, g in hits]}


# -- the run ---------------------------------------------------------------------------------------------
def _frame_rows(df: pd.DataFrame) -> list[dict]:
    return df.to_dict(orient="records")


def measures_rows(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """The ``measures_<set>`` rows of one set (no model call; the POS tags are cached)."""
    if not len(texts):
        return _frame_rows(texts.drop(columns=["context"]))
    return _frame_rows(text_measures(cfg, text_set, texts, reference(cfg, text_set, texts)))


def text_units(cfg: RethinkingConfig, texts: dict) -> list[Unit]:
    """The model-free units: each set's creativity index and pooled templates (``measures_<set>``), and each
    template set's per-group statistics (``templates``)."""
    out = [Unit(f"measures/{s}", (f"measures_{s}", partial(measures_rows, cfg, s, t))) for s, t in texts.items()]
    return out + [Unit(f"templates/{s}", ("templates", partial(group_templates, cfg, s, texts[s])))
                  for s in TEMPLATE_SETS if len(texts[s])]


def call_units(cfg: RethinkingConfig, texts: dict, models: list, judge) -> list[Unit]:
    """The units that call models, independent of each other: perplexity of ``PPL_CHUNK`` texts of a set
    under one model under test (one batch); the rubric judge of one set's picked texts; the prompt twist; the
    sampled reruns (each one batch of calls per step)."""
    out = []
    for m in models:
        for s, t in texts.items():
            scored = t[ppl_scored(cfg, s, t)] if len(t) else t
            out += [Unit(f"perplexity/{m.name}/{s}/{k // PPL_CHUNK}",
                         ("perplexity", partial(perplexity_rows, cfg, m, s, scored.iloc[k:k + PPL_CHUNK])))
                    for k in range(0, len(scored), PPL_CHUNK)]
    for s in JUDGED:
        pick = judge_pick(cfg, s, texts[s])
        if len(pick):
            out.append(Unit(f"judge/{s}", ("judge", partial(judge_rows, cfg, judge, s, pick))))
    return out + [Unit("twist", ("twist", partial(twist_rows, cfg, judge, texts["ps"]))),
                  Unit("rerun", ("rerun", partial(rerun_rows, cfg, judge, texts["ps"])))]


def unit_rows(u: Unit) -> dict[str, list]:
    """The work of a unit of :func:`text_units` or :func:`call_units`: its one table's rows."""
    table, rows = u.item
    return {table: rows()}


def run(cfg: RethinkingConfig) -> Path:
    """Every rethinking record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
    from tqdm.auto import tqdm

    from creval.models.registry import load_model

    store = contract.start(cfg)
    texts = {s: load_texts(cfg, s) for s in tqdm(SETS, desc="rethinking · texts", unit="set")}
    store.write("data_sources", data_sources())
    store.write("sets", [{"set": s, "texts": len(t), "labelled": bool(t.attrs.get("labelled")),
                          "why": t.attrs.get("why", ""), "ci_l": list(ci_range(cfg, s))} for s, t in texts.items()])
    tables = units.run_units(cfg.run_dir, "texts", text_units(cfg, texts), unit_rows,
                             desc="rethinking · creativity index, templates")

    # perplexity under every model under test; the rubric judge, its prompt twist and reruns (judge_model)
    models = [load_model(name) for name in cfg.tested]
    jm = load_model(cfg.judge_model)
    for m in (*models, jm):
        store.note_model(m)
    tables.update(units.run_units(cfg.run_dir, "calls", call_units(cfg, texts, models, jm), unit_rows,
                                  width=units.width(*cfg.tested, cfg.judge_model), desc="rethinking · model calls"))
    tables.setdefault("templates", [])
    for table, rows in tables.items():
        store.write(table, rows)

    # the example solution and the staged TTCW LLM judges
    if len(texts["ps"]):
        judged = {r["id"] for r in tables.get("judge", []) if r["set"] == "ps" and r["judge"] is not None}
        store.write("example", [example_row(cfg, pd.DataFrame(tables["measures_ps"]), judged,
                                            reference(cfg, "ps", texts["ps"]))])
    llm = []
    if texts["ttcw"].attrs.get("labelled"):
        for name in ttcw.llm_judge_models():
            j = ttcw.load_llm_judge(name)
            llm += [{"judge": name, "story_id": r.story_id, "llm_passes": int(r.llm_passes)} for r in j.itertuples()]
    store.write("ttcw_llm_judges", llm)
    log.info("rethinking run %s written", store.root)
    return contract.finish(store)


def records(cfg: RethinkingConfig) -> contract.Records:
    """The rethinking tables of ``cfg`` (see the module doc), running only what is missing."""
    return contract.read(cfg, run)
