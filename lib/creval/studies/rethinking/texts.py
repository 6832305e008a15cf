"""The model-free measures of chapter 06: creativity-index references, per-text creativity index and templates,
per-group template statistics, the formatting control, and the example solution. No model call; the n-gram
indexes are saved by corpus hash (:func:`creval.measures.ngram_index.cached_index`) and the POS tags are cached.

Creativity-index references are in-pool and leave-group-out: every MacGyver solution we have, by problem,
minus the scored text's problem; the TTCW stories minus the same plot; AUT responses minus the response
itself; MSRP sentences minus the pair itself; LAMP's paragraphs minus every version of the same instruction; the
Confederacy stories minus the same author's (``datasets.macgyver.solution_pool`` and the n-gram index). The
two sets of human judgment (:data:`HUMAN_SETS`) also get the lexical measures (distinct-1, distinct-2, MATTR)."""
from __future__ import annotations

import pandas as pd

from creval.datasets import aut, macgyver, ttcw
from creval.measures import creativity_index as C
from creval.measures import pertext as P
from creval.measures import templates as T
from creval.measures.ngram_index import cached_index, word_tokenize
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.data import cut_words, has_step_marker, strip_step_markers

FORMATTING_SETS = ("ps", "solver")      # MacGyver sets scored again with step markers stripped
HUMAN_SETS = ("lamp", "confed")         # issue 54's sets: referenced against themselves, lexical measures too


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


def reference(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame, unmarked: bool = False):
    """The leave-group-out n-gram index a text set is scored against (built once, saved by corpus hash);
    ``unmarked``: the MacGyver pool with every step marker stripped (the formatting control)."""
    L = range(1, max_length(cfg) + 1)
    if text_set in ("ps", "solver"):
        if unmarked:
            return cached_index([(g, strip_step_markers(t)) for g, t in macgyver.solution_pool()], L,
                                "macgyver-pool-unmarked")
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
    if text_set in HUMAN_SETS:              # the set itself, leave-group-out (instruction; author)
        return cached_index(list(zip(texts["group"], texts["text"])), L, f"{text_set}-texts")
    raise ValueError(text_set)


def text_measures(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame, idx) -> pd.DataFrame:
    """``texts`` (without ``context`` and ``full``) with ``ci``, ``uniq_<L>`` for every L >= 2 of the index,
    ``n_words``, and templates pooled over the set: ``has_template`` and templates per token ``tpt``."""
    t = texts.drop(columns=[c for c in ("context", "full") if c in texts.columns])
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
    if text_set in HUMAN_SETS:
        lex = P.lexical(list(t["text"]))          # mean word length is a baseline, not a measure
        for k in ("distinct_1", "distinct_2", "mattr"):
            t[k] = lex[k]
    return t


def measures_rows(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """The ``measures_<set>`` rows of one set (no model call; the POS tags are cached)."""
    if not len(texts):
        return texts.drop(columns=[c for c in ("context", "full") if c in texts.columns]).to_dict(orient="records")
    return text_measures(cfg, text_set, texts, reference(cfg, text_set, texts)).to_dict(orient="records")


def unmarked_texts(text_set: str, texts: pd.DataFrame) -> list[str]:
    """The texts with step markers and list numbers stripped from the whole text (``full``); crowd vs GPT-4
    pairs are then cut again to the shorter one's words, as the raw texts were."""
    plain = [strip_step_markers(t) for t in texts["full"]]
    if text_set != "solver":
        return plain
    shortest: dict = {}
    for g, t in zip(texts["group"], plain):
        shortest[g] = min(shortest.get(g, len(t.split())), len(t.split()))
    return [cut_words(t, shortest[g]) for g, t in zip(texts["group"], plain)]


def formatting_rows(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """The formatting control of one MacGyver set: each text's creativity index again with its step markers
    and list numbers stripped, against the pool stripped the same way (``ci_unmarked``); ``marked`` says
    whether the text had such a marker."""
    if not len(texts):
        return []
    plain = unmarked_texts(text_set, texts)
    idx = reference(cfg, text_set, texts, unmarked=True)
    recs = C.creativity_index_many(plain, idx, ci_range(cfg, text_set), cfg.rethink_ci_agg, list(texts["group"]))
    return [{"set": text_set, "id": i, "kind": k, "label": lab, "marked": has_step_marker(full),
             "n_words_unmarked": r.n_tokens, "ci_unmarked": C.aggregate(r.l_uniq, cfg.rethink_ci_agg)}
            for i, k, lab, full, r in zip(texts["id"], texts["kind"], texts["label"], texts["full"], recs)]


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
