"""The rethinking study's run (chapter 06, Lu et al. 2025): every measure of every text, into ``cfg.run_dir``.

:func:`run` reads the text sets (:mod:`~creval.studies.rethinking.data`), builds their n-gram references, tags
them (:mod:`~creval.studies.rethinking.texts`), scores them with every model under test and asks the rubric
judge (``judge_model``; :mod:`~creval.studies.rethinking.calls`); the report only reads the tables it writes:

- ``sets``: per text set (``ps``, ``solver``, ``ttcw``, ``aut``, ``msrp``, ``lamp``, ``confed``) its size,
  whether it carries the human labels its checks need (``labelled``; ``why`` when not), its CI range and its reference;
- ``data_sources``: where each dataset was read from (the chapter prints it);
- ``measures_<set>``: one row per text, in the set's order: ``id, group, text, label, kind`` (+ the set's own
  fields: ``full_words``, ``object``, ``side``, the TTCW experts' ``passes``, ``originality_passes``, LAMP's
  ``item, n_writers, over_raw, mean_rank``, Confederacy's ``total``, ``rating_group`` and each rater's scores),
  the creativity index ``ci`` and ``uniq_<L>`` for every L of the reference (the Fig. 2/3 L sweep),
  ``n_words``, and templates pooled over the set (``has_template``, ``tpt``);
- ``formatting``: the formatting control of ``ps`` and ``solver``: ``set, id, kind, label, marked`` (the
  text had a step marker or list number), ``ci_unmarked`` (the CI with those stripped from the text and from
  the pool) and ``n_words_unmarked``;
- ``perplexity``: ``set, id, model, ppl, bpb, n_tokens`` (+ ``ppl_cond`` = PPL given the problem for ``ps``
  and ``aut``) of the first ``rethink_ppl_items`` texts of each group (LAMP: every version of
  ``rethink_lamp_model_instructions`` seeded instructions; Confederacy: ``rethink_confed_ppl_per_author``
  stories per author, 0 for all), for every model in ``cfg.tested``;
- ``lamp_judge``: the pairwise novelty judge (``judge_model``, both orders) on the same LAMP items, each edit
  against the raw paragraph: ``item, group, pair, first_id, second_id, edit_shown_first, edit_shown_second,
  pref`` (1, 0, or 0.5 on a flip) and ``p_edit``;
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

Units (:mod:`creval.core.units`, in ``units/`` of the run folder; a rerun does only the unfinished ones):
``texts`` (each set's measures, each template set's group statistics, the formatting control; no model call)
and ``calls`` (each ``PPL_CHUNK`` texts of a set under one model under test, the rubric judge of each set, the
novelty judge on each ``PPL_CHUNK`` LAMP items, the twist, the reruns), the latter run together up to the
in-flight budget of the models when they are servers.
"""
from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from creval.core import units
from creval.core.units import Unit
from creval.datasets import ttcw
from creval.models import capabilities
from creval.models import width as widths
from creval.models.registry import load_model
from creval.studies import contract
from creval.studies.rethinking.calls import (
    WITH_CONTEXT,
    judge_pick,
    judge_rows,
    lamp_judge_rows,
    lamp_pick,
    perplexity_rows,
    ppl_scored,
    rerun_rows,
    twist_rows,
)
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.data import data_sources, load_texts
from creval.studies.rethinking.texts import (
    FORMATTING_SETS,
    HUMAN_SETS,
    ci_range,
    example_row,
    formatting_rows,
    group_templates,
    measures_rows,
    reference,
)

log = logging.getLogger("creval.studies.rethinking.run")

__all__ = ["PPL_CHUNK", "WITH_CONTEXT", "call_units", "run", "text_units"]

SETS = ("ps", "solver", "ttcw", "aut", "msrp", *HUMAN_SETS)
JUDGED = ("ps", "solver", "ttcw")              # sets the rubric judge scores
TEMPLATE_SETS = ("ps", "solver", "ttcw")       # sets whose groups get their own templates (Table 2, Fig. 4)
PPL_CHUNK = 8                                  # texts of a set scored by perplexity in one unit


def text_units(cfg: RethinkingConfig, texts: dict) -> list[Unit]:
    """The model-free units: each set's creativity index and pooled templates (``measures_<set>``), each
    template set's per-group statistics (``templates``), and the formatting control (``formatting``)."""
    out = [Unit(f"measures/{s}", (f"measures_{s}", partial(measures_rows, cfg, s, t))) for s, t in texts.items()]
    out += [Unit(f"templates/{s}", ("templates", partial(group_templates, cfg, s, texts[s])))
            for s in TEMPLATE_SETS if len(texts[s])]
    return out + [Unit(f"formatting/{s}", ("formatting", partial(formatting_rows, cfg, s, texts[s])))
                  for s in FORMATTING_SETS if len(texts[s])]


def call_units(cfg: RethinkingConfig, texts: dict, models: list, judge) -> list[Unit]:
    """The units that call models, independent of each other: perplexity of ``PPL_CHUNK`` texts of a set
    under one model under test (one batch); the rubric judge of one set's picked texts; the pairwise novelty
    judge on ``PPL_CHUNK`` picked LAMP items; the prompt twist; the sampled reruns (each one batch of calls
    per step)."""
    out = []
    for m in models:
        why = capabilities.refusal(m.spec, "loglikelihood")
        if why:                     # a chat-only model: one line, no failing units (models/capabilities.py)
            log.warning("perplexity skipped: %s", why)
            continue
        for s, t in texts.items():
            scored = t[ppl_scored(cfg, s, t)] if len(t) else t
            out += [Unit(f"perplexity/{m.name}/{s}/{k // PPL_CHUNK}",
                         ("perplexity", partial(perplexity_rows, cfg, m, s, scored.iloc[k:k + PPL_CHUNK])))
                    for k in range(0, len(scored), PPL_CHUNK)]
    for s in JUDGED:
        pick = judge_pick(cfg, s, texts[s])
        if len(pick):
            out.append(Unit(f"judge/{s}", ("judge", partial(judge_rows, cfg, judge, s, pick))))
    lamp = lamp_pick(cfg, texts["lamp"])
    out += [Unit(f"lamp_judge/{k // PPL_CHUNK}", ("lamp_judge", partial(lamp_judge_rows, cfg, judge, part)))
            for k, part in lamp_chunks(lamp)]
    return out + [Unit("twist", ("twist", partial(twist_rows, cfg, judge, texts["ps"]))),
                  Unit("rerun", ("rerun", partial(rerun_rows, cfg, judge, texts["ps"])))]


def lamp_chunks(pick: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """``pick``'s LAMP texts in parts of ``PPL_CHUNK`` items (every version of an item in one part), each with
    the index of its first item: one judge unit per part, so an interrupted run keeps the parts it finished."""
    items = list(dict.fromkeys(pick["item"])) if len(pick) else []
    return [(k, pick[pick["item"].isin(set(items[k:k + PPL_CHUNK]))]) for k in range(0, len(items), PPL_CHUNK)]


def unit_rows(u: Unit) -> dict[str, list]:
    """The work of a unit of :func:`text_units` or :func:`call_units`: its one table's rows."""
    table, rows = u.item
    return {table: rows()}


def llm_judge_rows(texts: dict) -> list[dict]:
    """The staged TTCW LLM judges' Yes counts per story (none without the experts' verdicts)."""
    if not texts["ttcw"].attrs.get("labelled"):
        return []
    return [{"judge": name, "story_id": r.story_id, "llm_passes": int(r.llm_passes)}
            for name in ttcw.llm_judge_models() for r in ttcw.load_llm_judge(name).itertuples()]


def run(cfg: RethinkingConfig) -> Path:
    """Every rethinking record of ``cfg`` into ``cfg.run_dir`` (see the module doc)."""
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
                                  width=widths.width(*cfg.tested, cfg.judge_model), desc="rethinking · model calls"))
    for table in ("templates", "formatting", "lamp_judge"):
        tables.setdefault(table, [])
    for table, rows in tables.items():
        store.write(table, rows)

    # the example solution and the staged TTCW LLM judges
    if len(texts["ps"]):
        judged = {r["id"] for r in tables.get("judge", []) if r["set"] == "ps" and r["judge"] is not None}
        store.write("example", [example_row(cfg, pd.DataFrame(tables["measures_ps"]), judged,
                                            reference(cfg, "ps", texts["ps"]))])
    store.write("ttcw_llm_judges", llm_judge_rows(texts))
    log.info("rethinking run %s written", store.root)
    return contract.finish(store)
