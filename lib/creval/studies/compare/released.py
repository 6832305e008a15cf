"""Released outputs measured (chapter 09): MacGyver's benchmarked solvers (seven LLMs and the Prolific crowd,
with their human correct/efficient annotations) and TTCW's story writers (three LLMs and the New Yorker
authors, with the experts' test passes), as :class:`creval.models.fixed.FixedOutputs`, on every measure that
needs no new sample. One row per dataset x model x measure x item (``dataset, model, measure, item, value``):

- ``creativity index``: L-uniqueness for L = ``rethink_ci_l_min..rethink_ci_l_max`` (mean) against every text
  of the dataset here, the texts of the same item left out (MacGyver: the solution pool; TTCW: the stories);
- ``distinct-2``: distinct word bigrams / bigrams of the text (repetition inside one answer);
- ``self-BLEU``: sentence BLEU of the text against ``released_bleu_refs`` of the same model's answers to other
  items (drawn with ``data_seed``): how much a model repeats itself across items (higher = more repetitive);
- ``cosine to people`` / ``cosine to other models``: mean embedding cosine (``compare_embedder``) of the text to
  people's answers to the same item (for the crowd: the other crowd answers) / to the other models' answers;
- lexical (:mod:`creval.measures.lexical`): phrases reused across the model's own answers, MATTR, word length,
  rare-word share, and the rate of the words the models over-use relative to people (derived on other items);
  per model, the words it over-uses relative to people on the same items (``info["overused"]``);
- the human labels: ``people: correct`` and ``people: efficient`` (MacGyver annotations, 0/1), ``experts: TTCW
  passes`` (the share of Yes over 14 tests x 3 experts; the New Yorker stories have verdicts but no text here).

A model's value on an item is the mean over its answers there. Only the items every model of the dataset
answered are used (MacGyver: 219 of 323 problems; TTCW: the 12 plots), so every model is ranked on the same
items; ``released_items`` (0: all) caps them (drawn with ``data_seed``)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets import macgyver, ttcw
from creval.measures import creativity_index as C
from creval.measures import homogeneity as H
from creval.measures import lexical as LX
from creval.measures.diversity import distinct_n, sentence_bleu
from creval.measures.ngram_index import cached_index
from creval.models.fixed import FixedOutputs

PEOPLE_MG, PEOPLE_TTCW = "people (Prolific)", "NewYorker"
LABELS = {"people: correct": "correct", "people: efficient": "efficient"}
CI, DISTINCT, BLEU, COS_PEOPLE, COS_MODELS = ("creativity index", "distinct-2", "self-BLEU", "cosine to people",
                                              "cosine to other models")
TTCW_PASSES = "experts: TTCW passes"
TYPICAL, SHARED3, MATTR, WORDLEN, RARE = ("LLM-typical word rate", "phrases reused across own answers", "MATTR",
                                          "mean word length", "rare-word share")
HIGHER = {CI: "fewer of its n-grams occur in other texts", DISTINCT: "less repetition inside an answer",
          BLEU: "more repetition across the model's own answers", COS_PEOPLE: "closer to what people wrote",
          COS_MODELS: "closer to what the other models wrote", "people: correct": "people judged it correct",
          "people: efficient": "people judged it correct and efficient",
          TTCW_PASSES: "experts passed more Torrance tests",
          TYPICAL: "more of the words the models over-use relative to people (derived on the other items)",
          SHARED3: "more of its word 3-grams recur in 2+ of its other answers", MATTR: "a more varied vocabulary",
          WORDLEN: "longer words", RARE: "more words outside the dataset's 1,000 most common"}
_STEP = re.compile(r"(?i)[*_#]*\bstep\s*\d+\b[^\w\n]*")     # "Step1:", "**Step 1:**", "step 2)" anywhere


def plain(text: str) -> str:
    """A solution without its ``Step1:`` markers (they would be matched everywhere)."""
    return _STEP.sub("", text).strip()


def shared_items(df: pd.DataFrame, who: str, item: str) -> list[str]:
    """The items every one of ``df``'s models answered (so every model is ranked on the same items)."""
    k = df[who].nunique()
    return sorted(it for it, g in df.groupby(item) if g[who].nunique() == k)


def _cap(items: list[str], cap: int, seed: int) -> set[str]:
    items = sorted(items)
    if not cap or cap >= len(items):
        return set(items)
    return set(np.random.default_rng(seed).choice(items, size=cap, replace=False).tolist())


def macgyver_outputs(cap: int = 0, seed: int = 0) -> tuple[dict[str, FixedOutputs], pd.DataFrame, dict]:
    """Per solver its released solutions, the labelled rows (capped to ``cap`` problems) and what was read."""
    df = macgyver.load_released()
    keep = _cap(shared_items(df, "solver", "problem_id"), cap, seed)
    df = df[df["problem_id"].isin(keep)].reset_index(drop=True)
    problems = {r["problem_id"]: r["problem"] for r in macgyver.load_problems()[0]}
    df["task"] = df["problem_id"].map(problems).fillna("")
    outs = {s: FixedOutputs.from_rows(s, zip(g["problem_id"], g["solution"]), df.attrs["source"])
            for s, g in df.groupby("solver", sort=False)}
    info = {"dataset": "macgyver", "source": df.attrs["source"], "sample": df.attrs["is_sample"],
            "items": len(keep), "people": PEOPLE_MG}
    return outs, df, info


def ttcw_outputs(cap: int = 0, seed: int = 0) -> tuple[dict[str, FixedOutputs], pd.DataFrame, dict]:
    """Per writer its stories (plot group = item), the expert pass rate per story where the data has verdicts."""
    st = ttcw.load_stories(with_text_only=False, released=True)
    keep = _cap(shared_items(st[st["text"].notna()], "source", "group"), cap, seed)
    st = st[st["group"].isin(keep)].reset_index(drop=True)
    if ttcw.has_verdicts():
        v = ttcw.load_verdicts()
        st = st.merge(v.assign(pass_rate=v["passes"] / v["n_verdicts"])[["story_id", "pass_rate"]], on="story_id",
                      how="left")
    else:
        st["pass_rate"] = np.nan
    st["task"] = st["plot"].fillna("")
    texts = st[st["text"].notna()]
    outs = {s: FixedOutputs.from_rows(s, zip(g["group"], g["text"]), st.attrs.get("source", ""))
            for s, g in texts.groupby("source", sort=False)}
    info = {"dataset": "ttcw", "source": st.attrs.get("source", ""), "sample": bool(st.attrs.get("is_sample")),
            "items": len(keep), "people": PEOPLE_TTCW, "verdicts": bool(st["pass_rate"].notna().any())}
    return outs, st, info


def _row(dataset, model, measure, item, value) -> dict:
    return {"dataset": dataset, "model": model, "measure": measure, "item": str(item), "value": float(value)}


def label_rows(dataset: str, df: pd.DataFrame) -> list[dict]:
    """The human labels as values (mean over a model's answers to the item)."""
    rows = []
    if dataset == "macgyver":
        for (m, it), g in df.groupby(["solver", "problem_id"], sort=False):
            rows += [_row(dataset, m, name, it, g[col].astype(float).mean()) for name, col in LABELS.items()]
    else:
        for r in df[df["pass_rate"].notna()].to_dict("records"):
            rows.append(_row(dataset, r["source"], TTCW_PASSES, r["group"], r["pass_rate"]))
    return rows


def ci_rows(dataset: str, outs: dict[str, FixedOutputs], index, Ls) -> list[dict]:
    """Creativity index of every answer against ``index``, its own item's texts left out (mean per item)."""
    flat = [(m, it, plain(t)) for m, o in outs.items() for it in o.items for t in o.answers(it)]
    recs = C.creativity_index_many([t for _, _, t in flat], index, Ls, "mean", [it for _, it, _ in flat])
    df = pd.DataFrame({"m": [m for m, _, _ in flat], "it": [it for _, it, _ in flat], "v": [r.ci for r in recs]})
    return [_row(dataset, m, CI, it, g["v"].mean()) for (m, it), g in df.groupby(["m", "it"], sort=False)]


def repetition_rows(dataset: str, outs: dict[str, FixedOutputs], refs: int, seed: int) -> list[dict]:
    """distinct-2 inside each answer and self-BLEU against ``refs`` of the model's answers to other items."""
    rows, rng = [], np.random.default_rng(seed)
    for m, o in outs.items():
        for it in o.items:
            own = o.answers(it)
            others = [t for j in o.items if j != it for t in o.answers(j)]
            pick = [others[k] for k in rng.choice(len(others), size=min(refs, len(others)), replace=False)] \
                if others else []
            rows.append(_row(dataset, m, DISTINCT, it, np.mean([distinct_n([t], 2) for t in own])))
            if pick:
                rows.append(_row(dataset, m, BLEU, it, np.mean([sentence_bleu(t, pick) for t in own])))
    return rows


def cosine_rows(dataset: str, outs: dict[str, FixedOutputs], people: str, embedder) -> list[dict]:
    """Per model and item: mean cosine of its answers to people's answers and to the other models' answers."""
    uniq = list(dict.fromkeys(t for o in outs.values() for it in o.items for t in o.answers(it)))
    if not uniq:
        return []
    vec = dict(zip(uniq, embedder.encode(uniq)))
    rows = []
    for m, o in outs.items():
        for it in o.items:
            mine = np.array([vec[t] for t in o.answers(it)])
            human = [vec[t] for t in outs[people].answers(it)] if people in outs else []
            models = [vec[t] for k, x in outs.items() if k not in (m, people) for t in x.answers(it)]
            if m == people and len(mine) > 1:
                rows.append(_row(dataset, m, COS_PEOPLE, it, H.cosine_within(mine)))
            elif m != people and human:
                rows.append(_row(dataset, m, COS_PEOPLE, it, H.cosine_between(mine, np.array(human))))
            if models:
                rows.append(_row(dataset, m, COS_MODELS, it, H.cosine_between(mine, np.array(models))))
    return rows


def _half(item: str) -> int:
    return sum(map(ord, item)) % 2


def lexical_rows(dataset: str, outs: dict[str, FixedOutputs], people: str) -> tuple[list[dict], list[dict]]:
    """Per model and item: reused phrases, MATTR, word length, rare-word share and (with people's texts) the
    LLM-typical word rate, cross-fitted: a text on one half of the items (by a stable hash) is scored with the
    words the models over-use relative to people on the other half. Also the over-used words of each model
    relative to people on the items both answered (``word, z, n model, n people``), the 15 strongest."""
    outs = {m: FixedOutputs(o.name, {k: tuple(plain(t) for t in v) for k, v in o.texts.items()}, o.source)
            for m, o in outs.items()}                       # "Step 1:" markers are no one's vocabulary
    pooled = LX.counts(t for o in outs.values() for it in o.items for t in o.answers(it))
    common = LX.common_words(pooled)
    llms = [m for m in outs if m != people]
    vocab = {}
    if people in outs:
        for h in (0, 1):
            other = lambda o: (t for it in o.items if _half(it) != h for t in o.answers(it))  # noqa: E731
            vocab[h] = set(LX.overused(LX.counts(t for m in llms for t in other(outs[m])), LX.counts(other(
                outs[people])), prior=pooled))
    rows, words = [], []
    for m, o in outs.items():
        flat = [(it, t) for it in o.items for t in o.answers(it)]
        reuse = LX.shared_ngram_share([t for _, t in flat], 3, 2)
        df = pd.DataFrame({"it": [it for it, _ in flat], SHARED3: reuse,
                           MATTR: [LX.mattr(t) for _, t in flat], WORDLEN: [LX.mean_word_length(t) for _, t in flat],
                           RARE: [LX.rare_share(t, common) for _, t in flat],
                           TYPICAL: [LX.word_rate(t, vocab[_half(it)]) if vocab else np.nan for it, t in flat]})
        for it, g in df.groupby("it", sort=False):
            rows += [_row(dataset, m, k, it, g[k].mean()) for k in (SHARED3, MATTR, WORDLEN, RARE, TYPICAL)
                     if g[k].notna().any()]
        if people in outs and m != people:
            shared = [it for it in o.items if outs[people].answers(it)]
            lo = LX.log_odds(LX.counts(t for it in shared for t in o.answers(it)),
                             LX.counts(t for it in shared for t in outs[people].answers(it)), prior=pooled)
            words += [{"dataset": dataset, "model": m, "word": w, "z": z, "n model": a, "n people": b}
                      for w, z, a, b in lo[:15] if z > 0]
    return rows, words


def dataset_rows(dataset: str, cfg, embedder) -> tuple[list[dict], list[dict], dict]:
    """``(values, answers, info)`` of one dataset: every measure's rows, the answers (for the pairwise judge)
    as ``item, task, model, text`` and what was read."""
    load = macgyver_outputs if dataset == "macgyver" else ttcw_outputs
    outs, df, info = load(cfg.compare_released_items, cfg.data_seed)
    rethink = cfg.upstream()["rethinking"]
    Ls = C.l_range(rethink.rethink_ci_l_min, rethink.rethink_ci_l_max)
    if dataset == "macgyver":
        index = cached_index([(g, plain(t)) for g, t in macgyver.solution_pool()], Ls, "macgyver-pool")
        tasks = dict(zip(df["problem_id"], df["task"]))
    else:
        st = ttcw.load_stories()
        index = cached_index(list(zip(st["group"], st["text"])), Ls, "ttcw-stories")
        tasks = dict(zip(df["group"], df["task"]))
    rows = label_rows(dataset, df) + ci_rows(dataset, outs, index, Ls)
    rows += repetition_rows(dataset, outs, cfg.compare_released_bleu_refs, cfg.data_seed)
    rows += cosine_rows(dataset, outs, info["people"], embedder)
    lex, info["overused"] = lexical_rows(dataset, outs, info["people"])
    rows += lex
    answers = [{"dataset": dataset, "item": it, "task": tasks.get(it, ""), "model": m, "text": o.answer(it)}
               for m, o in outs.items() for it in o.items]
    info["models"] = {m: o.describe() for m, o in outs.items()}
    return rows, answers, info


def released_rows(cfg, embedder) -> tuple[list[dict], list[dict], list[dict], list[str]]:
    """Both datasets: ``(values, answers, infos, notes)``; a dataset that cannot be read is a note."""
    values, answers, infos, notes = [], [], [], []
    for dataset in ("macgyver", "ttcw"):
        try:
            v, a, info = dataset_rows(dataset, cfg, embedder)
        except CrevalError as e:
            notes.append(f"released outputs of {dataset}: not read ({e.problem})")
            continue
        values, answers, infos = values + v, answers + a, infos + [info]
        if info["sample"]:
            notes.append(f"released outputs of {dataset}: the bundled illustrative sample (texts written for this "
                         "project under the models' names): its numbers mean nothing")
    return values, answers, infos, notes
