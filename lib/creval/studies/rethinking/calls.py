"""The model calls of chapter 06: perplexity of the texts under each model under test, the rubric judge
(``judge_model``) with its prompt twist and sampled reruns, and the pairwise novelty judge on LAMP's paragraphs
against their edits (:func:`lamp_judge_rows`). Each function is the work of one unit of
:mod:`creval.studies.rethinking.run`; the call cache serves every call made before."""
from __future__ import annotations

import numpy as np
import pandas as pd

from creval.judges.registry import make_judge
from creval.judges.rubric import HEADLINE, twist_test
from creval.measures.perplexity import perplexity_many
from creval.studies.human_sets import judge_prefs
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.data import cut_words

WITH_CONTEXT = ("ps", "aut")                   # sets scored by perplexity given their problem too
LAMP_EDITS = ("writer_edit", "ai_edit")        # LAMP's two comparisons: each edit against the raw paragraph
LAMP_DEFINITION = ("A response is novel when its prose is fresh and particular: concrete details, images and "
                   "turns of phrase a reader would not see coming, rather than stock phrases, cliches and "
                   "general statements anyone could write. Do not reward length, and do not judge how closely "
                   "it keeps to the instruction.")
"""What the pairwise novelty judge is told novelty means for a paragraph of fiction or essay (LAMP)."""


def lamp_pick(cfg: RethinkingConfig, texts: pd.DataFrame) -> pd.DataFrame:
    """The LAMP texts the model-backed measures see: every version of ``rethink_lamp_model_instructions``
    instructions (``group``) drawn with ``data_seed``, in the set's order; all of them when it is 0 or at
    least the number of instructions."""
    n = cfg.rethink_lamp_model_instructions
    groups = sorted(set(texts["group"])) if len(texts) else []
    if n <= 0 or n >= len(groups):
        return texts
    chosen = set(np.random.default_rng(cfg.data_seed).permutation(groups)[:n].tolist())
    return texts[texts["group"].isin(chosen)]


def ppl_scored(cfg: RethinkingConfig, text_set: str, texts: pd.DataFrame) -> np.ndarray:
    """Which texts perplexity scores: the first ``rethink_ppl_items`` of each kind (MSRP: of pairs); LAMP's
    picked instructions (:func:`lamp_pick`); the first ``rethink_confed_ppl_per_author`` stories of each
    Confederacy author (0: every story)."""
    if text_set == "lamp":
        return texts["id"].isin(set(lamp_pick(cfg, texts)["id"])).to_numpy()
    if text_set == "confed":
        k = cfg.rethink_confed_ppl_per_author
        return (texts.groupby("group").cumcount() < k).to_numpy() if k > 0 else np.ones(len(texts), bool)
    unit = texts["group"] if text_set == "msrp" else texts["id"]
    first = {k: set(list(dict.fromkeys(unit[texts["kind"] == k]))[:cfg.rethink_ppl_items])
             for k in texts["kind"].unique()}
    return np.array([u in first[k] for u, k in zip(unit, texts["kind"])], dtype=bool)


def perplexity_rows(cfg: RethinkingConfig, model, text_set: str, texts: pd.DataFrame) -> list[dict]:
    """``set, id, model, ppl, bpb, n_tokens, nll, first_nll, n_bytes`` (+ ``ppl_cond``) of ``texts`` (already the
    scored ones): :func:`creval.measures.perplexity.perplexity_summary` reads them."""
    cut = [cut_words(x, cfg.rethink_ppl_max_words) for x in texts["text"]]
    ctx = list(texts["context"]) if text_set in WITH_CONTEXT else []
    scored = perplexity_many(model, cut + cut[:len(ctx)], [None] * len(cut) + ctx)     # one batch
    pp, pc = scored[:len(cut)], scored[len(cut):] or [None] * len(cut)
    rows = []
    for i, p, c in zip(texts["id"], pp, pc):
        r = {"set": text_set, "id": i, "model": model.name, "ppl": p.ppl, "bpb": p.bits_per_byte,
             "n_tokens": p.n_tokens, "nll": p.sum_nll, "first_nll": p.first_nll, "n_bytes": p.n_bytes}
        if c is not None:
            r["ppl_cond"] = c.ppl
        rows.append(r)
    return rows


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
    domain = "cw" if text_set == "ttcw" else "ps"
    items = [{"id": r.id, "text": cut_words(r.text, cfg.rethink_ppl_max_words), "problem": r.context}
             for r in pick.itertuples()]
    judge = make_judge("rubric", model, analysis_tokens=cfg.rethink_judge_tokens)
    recs = judge(items, domain)
    return [{"set": text_set, "id": i, "kind": k, "label": lab, "judge": r.scores[HEADLINE[domain]], **r.to_dict()}
            for i, k, lab, r in zip(pick["id"], pick["kind"], pick["label"], recs)]


def twist_rows(cfg: RethinkingConfig, model, texts: pd.DataFrame) -> list[dict]:
    """Prompt twist on ``rethink_twist_items`` MacGyver solutions, alternating kinds."""
    pick = alternating(texts, cfg.rethink_twist_items, cfg.seed)
    res = twist_test(model, [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()])
    return [{**r, "kind": k} for r, k in zip(res, pick["kind"])]


def rerun_rows(cfg: RethinkingConfig, model, texts: pd.DataFrame) -> list[dict]:
    """``rethink_reruns`` analyses sampled at temperature 1 for ``rethink_rerun_items`` solutions, each scored."""
    pick = alternating(texts, cfg.rethink_rerun_items, cfg.seed)
    items = [{"id": r.id, "text": r.text, "problem": r.context} for r in pick.itertuples()]
    judge = make_judge("rubric", model, analysis_tokens=cfg.rethink_judge_tokens, samples=cfg.rethink_reruns,
                       seed=cfg.seed)
    return [r.to_dict() for r in judge(items, "ps")]


def lamp_judge_rows(cfg: RethinkingConfig, model, pick: pd.DataFrame) -> list[dict]:
    """The pairwise novelty judge (:class:`creval.judges.novelty.NoveltyJudge`, :data:`LAMP_DEFINITION`) on
    each item of ``pick`` (LAMP texts, :func:`lamp_pick`): each edit (:data:`LAMP_EDITS`) against the item's
    raw paragraph, both under the item's instruction, texts cut to ``rethink_ppl_max_words``, asked in both
    orders in one batch. Per (item, edit): ``item, group, pair, first_id, second_id`` (the edit, the raw
    paragraph), ``edit_shown_first`` / ``edit_shown_second`` (whether the judge picked the edit in that order;
    None on an exact tie of its log-probs), ``pref`` (:func:`~creval.studies.human_sets.judge_prefs`:
    1 or 0 when both orders agree, 0.5 on a flip), ``p_edit`` (its position-averaged P(edit more novel)) and
    ``judge_model``."""
    by = {(r.item, r.kind): r for r in pick.itertuples()}
    jobs = [(by[(it, e)], by[(it, "raw")], e) for it in dict.fromkeys(pick["item"]) for e in LAMP_EDITS
            if (it, e) in by and (it, "raw") in by]
    if not jobs:
        return []
    judge = make_judge("novelty", model, definition=LAMP_DEFINITION)
    n = cfg.rethink_ppl_max_words
    got = judge.compare_many([((ed.context, cut_words(ed.text, n)), (raw.context, cut_words(raw.text, n)))
                              for ed, raw, _ in jobs])
    first = [None if c.votes[0] == 0 else c.votes[0] > 0 for c in got]
    second = [None if c.votes[1] == 0 else c.votes[1] > 0 for c in got]
    prefs = judge_prefs(first, second)
    return [{"item": ed.item, "group": ed.group, "pair": e, "first_id": ed.id, "second_id": raw.id,
             "edit_shown_first": a, "edit_shown_second": b, "pref": float(p), "p_edit": float(c.p_x),
             "judge_model": getattr(model, "name", str(model))}
            for (ed, raw, e), a, b, p, c in zip(jobs, first, second, prefs, got)]
