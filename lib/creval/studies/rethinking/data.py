"""The texts of chapter 06 (Lu et al. 2025, Rethinking creativity evaluation): which datasets are here, and
each text set as one DataFrame (``id, group, text, full, label, kind, context`` + the set's own fields).

Sets: ``ps`` (MacGyver verified feasible solutions, unconventional vs conventional), ``solver`` (a crowd and a
GPT-4 solution of the same problem, cut to the shorter one's words), ``ttcw`` (the LLM-written TTCW stories
with the experts' verdicts), ``aut`` (Ocsai-1 responses with originality ratings), ``msrp`` (sentence pairs,
paraphrase or not), and two sets of human judgment the card grades the cheap measures on (issue 54): ``lamp``
(an LLM's paragraph, a writer's edit and an LLM's edit of it, ranked by expert writers) and ``confed`` (65
stories on one prompt by 12 LLMs and by people, rated on a rubric). ``full`` is the text before any cut (the
formatting control re-matches lengths after it strips step markers)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets import aut, confederacy, lamp, macgyver, msrp, ttcw
from creval.datasets.base import provenance
from creval.studies.config import Config

SOURCES = (("MacGyver solutions (PS, crowd vs LLM)", macgyver), ("TTCW stories and expert verdicts", ttcw),
           ("AUT originality ratings (Ocsai-1)", aut), ("MSRP paraphrase pairs", msrp),
           ("LAMP writers' rankings of AI paragraphs and their edits", lamp),
           ("A Confederacy of Models: rubric ratings of stories", confederacy))

# a step marker or a list number at the start of a line (or after a <br>): "Step1:", "step 2.", "3)", "4." (not
# "1.5 litres"), with an optional bullet before it
STEP_MARKER = re.compile(r"(?im)(^|<br\s*/?>|\n)[ \t]*(?:[-*\u2022][ \t]*)?"
                         r"(?:step[ \t]*\d+[ \t]*[:.)\-]?|\d+[ \t]*[.):](?!\d))[ \t]*")


def cut_words(text: str, n: int) -> str:
    """The first ``n`` whitespace words of ``text``."""
    return " ".join(str(text).split()[:n])


def has_step_marker(text: str) -> bool:
    """Whether ``text`` holds a step marker or list number at the start of a line (:data:`STEP_MARKER`)."""
    return bool(STEP_MARKER.search(str(text or "")))


def strip_step_markers(text: str) -> str:
    """``text`` without its step markers and list numbers ("Step1: Open the bottle" -> "Open the bottle"): the
    formatting control of the crowd vs GPT-4 contrast (GPT-4 numbers its steps far more often)."""
    return STEP_MARKER.sub(r"\1", str(text or ""))


def try_load(fn):
    """``(value, None)`` or ``(None, reason)`` for a loader that may lack its data on this machine."""
    try:
        return fn(), None
    except CrevalError as e:
        return None, str(e).splitlines()[0]


def data_kinds() -> dict:
    """Whether each dataset here is the real one, our bundled sample, or missing (enters the run id)."""
    out = {}
    for _, mod in SOURCES:
        src, _ = try_load(mod.source)
        out[mod.DATASET.name] = "missing" if src is None else "sample" if src.is_sample else "real"
    return out


def data_sources() -> list[dict]:
    """Where each text set comes from, and whether it carries the human labels its check needs."""
    rows = []
    for what, mod in SOURCES:
        src, err = try_load(mod.source)
        where = err if src is None else provenance(mod.DATASET, src, what).split(": ", 1)[1]
        rows.append({"data": what, "where": where, "labels": "no" if src is None or src.is_sample else "yes"})
    return rows


def _labelled(out: pd.DataFrame, labelled: bool, why: str) -> pd.DataFrame:
    out.attrs.update(labelled=bool(labelled), why="" if labelled else why)
    return out


def ps_texts(cfg: Config) -> pd.DataFrame:
    """MacGyver verified feasible solutions, unconventional (label True) vs conventional."""
    df = macgyver.load_feasible_unconventional(cfg.rethink_ps_per_class or None, cfg.data_seed)
    out = pd.DataFrame({"id": [f"{p}::verified" for p in df["problem_id"]], "group": df["problem_id"],
                        "text": df["solution"], "full": df["solution"], "context": df["problem"],
                        "label": df["unconventional"],
                        "kind": np.where(df["unconventional"], "unconventional", "conventional")})
    return _labelled(out, not str(df.attrs.get("source", "")).startswith("sample"),
                     "only the bundled MacGyver sample (not real labels)")


def solver_texts(cfg: Config) -> pd.DataFrame:
    """A crowd (label True) and a GPT-4 solution of each problem, both cut to the shorter one's words."""
    df = macgyver.load_solver_pairs(problems=cfg.rethink_human_llm_problems or None, seed=cfg.data_seed)
    rows = []
    for r in df.itertuples():
        n = min(len(r.human.split()), len(r.llm.split()))
        for who, t in (("human", r.human), ("llm", r.llm)):
            rows.append({"id": f"{r.problem_id}::{who}", "group": r.problem_id, "text": cut_words(t, n), "full": t,
                         "full_words": len(t.split()), "context": r.problem, "label": who == "human", "kind": who})
    out = pd.DataFrame(rows, columns=["id", "group", "text", "full", "full_words", "context", "label", "kind"])
    return _labelled(out, len(out) > 0, "no crowd (Prolific) and GPT-4 solutions of the same problems here")


def ttcw_texts(cfg: Config) -> pd.DataFrame:
    """The LLM-written TTCW stories, with the experts' verdicts when they are here."""
    st = ttcw.load_stories()
    st = st.iloc[:cfg.rethink_ttcw_stories] if cfg.rethink_ttcw_stories < len(st) else st
    out = pd.DataFrame({"id": st["story_id"], "group": st["group"], "text": st["text"], "full": st["text"],
                        "context": None, "label": st["source"], "kind": st["source"]})
    labelled = ttcw.has_verdicts()
    if labelled:
        out = out.merge(ttcw.load_verdicts(), left_on="id", right_on="story_id", how="left").drop(columns="story_id")
    return _labelled(out, labelled, "no TTCW expert verdicts here (bundled sample stories only)")


def aut_texts(cfg: Config) -> pd.DataFrame:
    """Ocsai-1 AUT responses of the two most frequent objects, with their mean originality ratings."""
    df = aut.load_ocsai(cfg.rethink_aut_ratings or None, objects=2, seed=cfg.data_seed)
    out = pd.DataFrame({"id": df["item_id"], "group": df["item_id"], "object": df["prompt"],
                        "text": df["response"], "full": df["response"],
                        "context": [f"Uses for a {o}:" for o in df["prompt"]], "label": df["score"],
                        "kind": df["prompt"]})
    return _labelled(out, not (df["source"] == "sample").all(), "only the bundled AUT sample (not real ratings)")


def msrp_texts(cfg: Config) -> pd.DataFrame:
    """``rethink_paraphrase_pairs`` MSRP test pairs of each kind (seeded), both sentences of each."""
    pairs, err = try_load(lambda: msrp.read_msrp("test"))
    if pairs is None:
        out = pd.DataFrame(columns=["id", "group", "text", "full", "context", "label", "kind", "side"])
        return _labelled(out, False, f"MSRP not available here ({err})")
    rng = np.random.default_rng(cfg.data_seed)
    rows = []
    for q in (1, 0):
        idx = [i for i, p in enumerate(pairs) if p[2] == q]
        for i in rng.permutation(idx)[:cfg.rethink_paraphrase_pairs]:
            for side in (0, 1):
                rows.append({"id": f"msrp-{i}-{side}", "group": f"msrp-{i}", "text": pairs[i][side],
                             "full": pairs[i][side], "context": None, "label": bool(q),
                             "kind": "paraphrase" if q else "different", "side": side})
    return _labelled(pd.DataFrame(rows), True, "")


LAMP_KIND = {lamp.RAW: "raw", lamp.WRITER_EDIT: "writer_edit", lamp.AI_EDIT: "ai_edit"}
"""LAMP's versions as the ``kind`` of a text: the raw AI paragraph and its two edits."""
HUMAN_COLUMNS = {"lamp": ["item", "n_writers", "over_raw", "mean_rank"],
                 "confed": ["total", "rating_group", "creativity_r1", "creativity_r2", "total_r1", "total_r2"]}


def lamp_texts(cfg: Config) -> pd.DataFrame:
    """LAMP (:mod:`creval.datasets.lamp`): one row per item and version. ``group`` is the instruction (the
    declared unit; one instruction was shown twice, as two items), ``item`` the item as shown, ``kind`` the
    version (:data:`LAMP_KIND`), ``context`` the instruction's text, ``label`` the writers' points (mean of
    3 - rank: 2 when every writer put it first), ``n_writers`` who ranked it, ``mean_rank`` and ``over_raw``
    (on an edit: how many of them ranked it above the item's raw paragraph; NaN on the raw one)."""
    got, err = try_load(lamp.load)
    cols = ["id", "group", "text", "full", "context", "label", "kind", *HUMAN_COLUMNS["lamp"]]
    if got is None:
        return _labelled(pd.DataFrame(columns=cols), False, f"LAMP not available here ({err})")
    items, rankings, src = got
    ranks = lamp.ranks_of(rankings)
    rows = []
    for it in items:
        raw = ranks.get((it.item_id, lamp.RAW), [])
        for v in lamp.VERSIONS:
            if v not in it.texts:
                continue
            got_r = ranks.get((it.item_id, v), [])
            mean = float(np.mean(got_r)) if got_r else np.nan
            over = np.nan if v == lamp.RAW or len(raw) != len(got_r) else \
                float(sum(a < b for a, b in zip(got_r, raw)))
            rows.append({"id": f"{it.item_id}::{LAMP_KIND[v]}", "group": it.unit, "text": it.texts[v],
                         "full": it.texts[v], "context": it.instruction, "label": 3 - mean, "kind": LAMP_KIND[v],
                         "item": it.item_id, "n_writers": len(got_r), "over_raw": over, "mean_rank": mean})
    return _labelled(pd.DataFrame(rows, columns=cols), not src.is_sample,
                     "only the bundled LAMP sample (invented rankings, not the writers')")


def confed_texts(cfg: Config) -> pd.DataFrame:
    """A Confederacy of Models (:mod:`creval.datasets.confederacy`): one row per story. ``group`` is the
    author (a model or ``human``: the declared unit), ``kind`` person or model, ``label`` the raters' mean
    Creativity, ``total`` their mean total, ``rating_group`` the block of stories one pair of raters scored and
    each rater's ``creativity_r<slot>`` and ``total_r<slot>`` (their agreement is the ceiling)."""
    got, err = try_load(confederacy.load)
    cols = ["id", "group", "text", "full", "context", "label", "kind", *HUMAN_COLUMNS["confed"]]
    if got is None:
        return _labelled(pd.DataFrame(columns=cols), False, f"Confederacy not available here ({err})")
    stories, ratings, src = got
    by: dict[str, list] = {}
    for r in ratings:
        by.setdefault(r.story_id, []).append(r)
    rows = []
    for s in stories:
        row = {"id": s.story_id, "group": s.author, "text": s.text, "full": s.text, "context": None,
               "kind": s.kind, "rating_group": int(s.rating_group)}
        for key in ("creativity", "total"):
            vals = {r.slot: (r.total if key == "total" else r.scores.get(key, np.nan)) for r in by.get(s.story_id, [])}
            for slot in (1, 2):
                row[f"{key}_r{slot}"] = float(vals.get(slot, np.nan))
            ok = [float(v) for v in vals.values() if np.isfinite(v)]
            row["label" if key == "creativity" else key] = float(np.mean(ok)) if ok else np.nan
        rows.append(row)
    return _labelled(pd.DataFrame(rows, columns=cols), not src.is_sample,
                     "only the bundled Confederacy sample (invented stories and ratings)")


LOADERS = {"ps": ps_texts, "solver": solver_texts, "ttcw": ttcw_texts, "aut": aut_texts, "msrp": msrp_texts,
           "lamp": lamp_texts, "confed": confed_texts}


def load_texts(cfg: Config, text_set: str) -> pd.DataFrame:
    """The texts of one set (see the module doc); ``attrs`` say whether it is ``labelled`` and ``why`` not."""
    if text_set not in LOADERS:
        raise ValueError(f"unknown text set {text_set!r}")
    return LOADERS[text_set](cfg)
