"""Every report function of every study, fed degenerate records, gives a table, a figure or a sentence: never an
exception (a chapter that raises is published with "An Exception was encountered" at its top).

The functions are found by introspection: every public function of each study's ``report``, ``reading``,
``figures`` and ``tables`` modules and of every other study module a chapter imports (not ``run``, ``config``,
``records``). A function that takes the records is called with each kind of degenerate records below; one that
takes something else must have its arguments in :data:`OTHER_ARGS`, so a new function that is not covered
fails :func:`test_every_report_function_is_covered`.

Kinds: ``empty`` (no table written), ``one item`` (one row per table), ``all NaN`` (every float of every table
NaN), ``parsed nothing`` (every verdict, value and confidence unparsed), ``order never answered`` (every
reversed ranking unparsed, the case that made chapter 07 fail).
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import pkgutil
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import creval.studies as studies
from creval.core import paths
from creval.studies.config import Config
from creval.studies.contract import Records

REPO = Path(__file__).resolve().parents[2]
REPORT_MODULES = ("report", "reading", "figures", "tables")
NOT_REPORT = {"run", "config", "records"}
KINDS = ("empty", "one item", "all NaN", "parsed nothing", "order never answered")


def study_names() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(studies.__path__)
            if m.ispkg and importlib.util.find_spec(f"creval.studies.{m.name}.config")]


def chapter_modules() -> set[str]:
    """Study modules the chapters import (``from creval.studies.x import a, b`` or ``from creval.studies.x.a``)."""
    out = set()
    for nb in (REPO / "chapters").glob("*.ipynb"):
        text = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
        for pkg, names in re.findall(r"from (creval\.studies\.\w+) import ([\w, ]+)", text):
            out |= {f"{pkg}.{n.strip()}" for n in names.split(",")}
    return {m for m in out if m.rsplit(".", 1)[1] not in NOT_REPORT and is_module(m)}


def is_module(name: str) -> bool:
    """Whether ``name`` is a module (``from creval.grade.grading import SAMPLE`` names a constant of a module)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def report_modules() -> list[str]:
    mods = {f"creval.studies.{s}.{m}" for s in study_names() for m in REPORT_MODULES
            if importlib.util.find_spec(f"creval.studies.{s}.{m}")}
    return sorted(mods | chapter_modules() | {"creval.studies.tables"})


def report_functions() -> list[tuple[str, str]]:
    """``(module, function)`` for every public function defined in a report module."""
    out = []
    for name in report_modules():
        mod = importlib.import_module(name)
        out += [(name, n) for n, f in inspect.getmembers(mod, inspect.isfunction)
                if not n.startswith("_") and f.__module__ == name]
    return out


def config_of(study: str) -> Config:
    mod = importlib.import_module(f"creval.studies.{study}.config")
    cls = next(c for c in vars(mod).values() if inspect.isclass(c) and issubclass(c, Config) and c is not Config
               and c.__module__ == mod.__name__)
    return cls(n_boot=20) if "n_boot" in {f for f in getattr(cls, "__dataclass_fields__", {})} else cls()


# -- one item of each study's tables: the base the degenerate kinds are made from ----------------------------
def _verdict(judge: str, ok: bool) -> dict:
    return {"judge": judge, "verdict": "OK" if ok else "wrong answer", "correct": ok, "cases": [], "detail": ""}


ONE_ITEM: dict[str, dict[str, list[dict]]] = {
    "divergent": {
        "steps": [{"problem_id": "p0", "domain": "macgyver", "model": "m", "step_index": 0, "n": 3, "is_stop": False,
                   "samples": [{"text": "a", "clean": "a", "mean_logprob": -1.0, "n_tokens": 1,
                                "stop_vote": False}] * 3,
                   "cluster_ids": [0, 1, 2], "semantic_entropy": 1.0, "naive_entropy": 1.0, "discrete_entropy": 1.0,
                   "n_clusters": 3, "chosen_index": 0, "temperature": 1.0}],
        "problems": [{"problem_id": "p0", "domain": "macgyver", "model": "m", "problem_text": "fix it",
                      "solution": "a", "n_steps": 1, "stopped_by": "budget", "mean_semantic_entropy": 1.0,
                      "mean_naive_entropy": 1.0, "mean_discrete_entropy": 1.0, "mean_n_clusters": 3.0,
                      "duplicate_filtered": False, "temperature": 1.0, "n": 3, "data_source": "sample"}],
        "sweep": [{"problem_id": "p0", "domain": "macgyver", "model": "m", "temperature": 0.5, "n": 3,
                   "mean_semantic_entropy": 1.0, "duplicate_filtered": False}],
        "entailment": [{"requested": "minilm-sick", "ran": "minilm-cosine", "why": "no SICK"}],
        "nli_eval": [{"backend": "minilm-sick", "ran": "minilm-cosine", "dataset": "sick", "pairs": 1,
                      "accuracy": 1.0, "macro_f1": 1.0, "baseline": "neutral", "baseline_accuracy": 0.5}]},
    "convergent": {
        "bench_verdicts": [{"judge": "retrieval", "pair_id": "p0::m", "criterion": "feasibility", "verdict": True,
                            "unparsed": False, "confidence": 0.8, "model": "m", "domain": "macgyver",
                            "mean_semantic_entropy": 1.0, "input_tokens": 10, "output_tokens": 2, "rounds": 1,
                            "retries": 0, "tokens_by": {}}],
        "human_verdicts": [{"judge": j, "pair_id": "h0", "criterion": "feasibility", "verdict": True,
                            "unparsed": False, "confidence": 0.8, "label": True, "input_tokens": 10,
                            "output_tokens": 2, "rounds": 1, "retries": 0, "early_exit": True, "tokens_by": {}}
                           for j in ("retrieval", "chateval")],
        "sweep": [{"T": 0.5, "pair_id": "h0", "verdict": True, "unparsed": False, "confidence": 0.8, "label": True,
                   "rounds": 1, "input_tokens": 10, "output_tokens": 2}],
        "sweep_calls": [{"T": 0.5, "pairs": 1, "calls_made": 1, "calls_cached": 0}],
        "labels_source": [{"line": "Human labels: sample"}]},
    "validation": {
        "step_diversity": [{"model": "m", "domain": "macgyver", "problem_id": "p0", "step_index": 0, "n": 3,
                            "semantic_entropy": 1.0, "naive_entropy": 1.0, "discrete_entropy": 1.0, "n_clusters": 3,
                            "cosine": 0.5, "self_bleu": 0.5, "distinct_1": 0.5, "distinct_2": 0.5}],
        "solution_novelty": [{"model": "m", "domain": "macgyver", "problem_id": "p0", "novelty_rank": 1,
                              "novelty_score": 1.0, "comparisons": 0, "ties": 0, "mean_semantic_entropy": 1.0,
                              "min_semantic_entropy": 1.0, "max_semantic_entropy": 1.0, "mean_naive_entropy": 1.0,
                              "mean_discrete_entropy": 1.0, "duplicate_filtered": False}],
        "sample_size": [{"problem_id": "p0", "step_index": 0, "n": 3, "n_clusters": 3, "semantic_entropy": 1.0}],
        "data_sources": [{"dataset": "aut", "line": "AUT: sample"}]},
    "aut": {
        "uses": [{"object": "fork", "generator": "g", "level": "common", "level_code": 1, "idx": 0, "text": "eat",
                  "au_id": "u0", "turn": 0, "semdis": 0.5, "words": 1}],
        "turns": [{"generator": "g", "level": "common", "attempt": 0, "refusal": False, "object": "fork",
                   "reply": "1. eat"}],
        "judgments": [{"object": "fork", "au_id": "u0", "generator": "g", "level": "common", "level_code": 1,
                       "judge": "g", "self_judged": True, "method": m, "setting": "comprehensive", "group": 0,
                       "n_items": 1, "order": o, "position": 0, "raw": 3, "value": 3.0, "parse_path": "text",
                       "attempts": 1, "identity_order": False}
                      for m, o in (("score", "forward"), ("rank", "forward"), ("rank", "reverse"))],
        "human": [{"dataset": "sample-ocsai1", "object": "brick", "item_id": "i0", "human": 3.0, "scorer": "g",
                   "mode": "pointwise", "group": 0, "position": 0, "value": 3.0, "parse_path": "text"}]},
    "neocoder": {
        "problems": [{"problem_id": "1A", "native": "1A", "replayed": True, "n_rounds": 1, "n_cases": 1,
                      "state_rounds": [0], "state_banned": [[]], "human_techniques": [["for loop"]],
                      "single_test": True, "yes_no": False, "padded_output": False, "multiline_answer": False,
                      "input_flattened": False, "needs_checker": False, "no_humans": False, "verifiable": True,
                      "n_humans": 1}],
        "codes": [{"problem_id": "1A", "round": 0, "state": 0, "banned": [], "code_sha": "x",
                   "repo": _verdict("repo", True), "strict": _verdict("strict", False), "correct_repo": True,
                   "correct_strict": False, "salvaged": False, "detector": "static", "techniques": ["for loop"],
                   "detection_status": "ok", "follows": True, "novel": [], "novelty": 0.0, "has_humans": True,
                   "verifiable": True, "code": "print(1)"}],
        "data_source": [{"data": "sample", "problems": 1, "rounds": 1, "test cases": 1, "sample": True}]},
    "apparatus": {
        "samples": [{"sample_index": 0, "text": "a", "n_tokens": 1, "mean_logprob": -1.0, "finish_reason": "stop",
                     "token_logprobs": [-1.0], "problem_text": "fix it", "logprob_kind": "raw"}]},
}


def _blank(row: dict, keys: tuple[str, ...], value) -> dict:
    return {k: (value if k in keys else v) for k, v in row.items()}


def degrade(tables: dict[str, list[dict]], kind: str) -> dict[str, list[dict]]:
    """The one-item tables turned into records of ``kind``."""
    if kind == "empty":
        return {}
    if kind == "all NaN":
        return {t: [{k: (math.nan if isinstance(v, float) else v) for k, v in r.items()} for r in rows]
                for t, rows in tables.items()}
    if kind == "parsed nothing":
        def unparsed(r):
            r = _blank(r, ("verdict", "value", "confidence", "raw"), None)
            r.update({k: True for k in ("unparsed",) if k in r})
            r.update({k: "unparsed" for k in ("parse_path",) if k in r})
            r.update({k: False for k in ("correct_strict", "correct_repo") if k in r})
            return r
        return {t: [unparsed(r) for r in rows] for t, rows in tables.items()}
    if kind == "order never answered":
        return {t: [(_blank(r, ("value", "raw"), None) | {"parse_path": "unparsed"}) if r.get("order") == "reverse"
                    else r for r in rows] for t, rows in tables.items()}
    return tables


def records_of(tmp_path: Path, study: str, kind: str) -> Records:
    folder = tmp_path / f"{study}-{kind.replace(' ', '-')}"
    folder.mkdir(parents=True)
    for name, rows in degrade(ONE_ITEM.get(study, {}), kind).items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(folder, config_of(study))


# -- functions that take something other than the records: their degenerate arguments -------------------------
EMPTY, NANS = pd.Series([], dtype=float), pd.Series([math.nan, math.nan])
OTHER_ARGS: dict[str, list[tuple]] = {
    "divergent.report.fmt_temperature_row": [([],), ([(0.5, math.nan)],)],
    "divergent.report.live": [(pd.DataFrame(),)],
    "divergent.report.mean_sd": [(EMPTY,), (NANS,)],
    "divergent.report.paper_range": [("nowhere",)],
    "aut.reading.null_halfwidth": [(0,), (1,)],
    "aut.report.echoes_prompt": [("", "fork"), ("x", "", "common")],
    "aut.report.forward_reverse_rho": [(pd.DataFrame({"object": ["f"], "au_id": ["u"], "order": ["forward"],
                                                      "value": [1.0]}),)],
    "neocoder.report.ci_text": [((math.nan, math.nan),)],
    "reportcard.report.tracked": [({},), ({"tracking": None, "question": None},)],
    "reportcard.report.rater_kind": [(None,), ("",), (math.nan,)],
    "rethinking.figures.check_colour": [({},), ({"CI excludes chance": "yes", "right direction": ""},)],
    "rethinking.figures.short": [("",), (float("nan"),)],
    "rethinking.figures.fig_checks": [(pd.DataFrame(),), (pd.DataFrame({"check": ["c"], "measure": ["m"],
                                                                       "statistic": ["AUROC"], "value": [math.nan],
                                                                       "ci_low": [math.nan], "ci_high": [math.nan]}),)],
    "tables.readable": [({},), ([],), (None,), ({"a": [math.nan, {}]},)],
    "reportcard.report.said_here": [({},), ({"paper": None, "verdict": None, "adjusted": math.nan},)],
    "neocoder.report.state_rows": [([], 0, "all")],
    "neocoder.reading.change_words": [({"kept": math.nan, "p_x": math.nan, "ci_x": (math.nan, math.nan),
                                        "p_y": math.nan, "ci_y": (math.nan, math.nan), "lost": 0, "gained": 0,
                                        "drop": math.nan, "lo": math.nan, "hi": math.nan, "p": math.nan}, 0, 5)],
    "neocoder.reading.linked_count": [(0, ""), (3, "3 codes")],
    "neocoder.reading.paper_pass_pct": [(0,)],
    "neocoder.reading.pct": [(0, 0)],
    "neocoder.reading.per_state": [({},)],
    "neocoder.reading.span": [([],), ([math.nan],)],
    "convergent.report.transcript_html": [(pd.DataFrame(),)],
    "convergent.report.parsed_text": [(None,), ({},), ({"path": "logprobs"},), ([],)],
    "humansets.grading.ceiling_of": [(None,), (pd.DataFrame(),), (pd.DataFrame([{"agreement": math.nan}]),)],
    "humansets.grading.measure_columns": [(pd.DataFrame(),), (pd.DataFrame({"mattr": [math.nan] * 3}),)],
    "humansets.report.fig_rows": [([],)],
    "reportcard.report.whose": [({},), ({"raters": None, "ceiling": math.nan},), ({"raters": "x", "ceiling": None},)],
    "humansets.report.table_rows": [([],)],
    "rethinking.report.mark_spans": [([], [])],
    "rethinking.report.mean_sd": [(EMPTY,), (NANS,)],
    "rethinking.reading.aut_values": [(pd.DataFrame(),)],
    "rethinking.reading.check_value": [(pd.DataFrame(), "x", "y")],
    "rethinking.reading.direction_status": [(True, True), (False, False)],
    "rethinking.reading.value_range": [(math.nan, math.nan)],
    "rethinking.reading.with_chance": [(None,), ({"text": "–", "chance_in_ci": True, "lo": math.nan, "hi": math.nan,
                                                   "null": 0.5, "p": math.nan},)],
    "reportcard.report.source_of": [({},), ({"paper": None, "measure": None, "human data": None},)],
    "reportcard.report.untestable": [(pd.Series({"verdict": "not testable here", "note": None}),)],
    "compare.report.cost_by_model": [(pd.DataFrame(),)],
    "compare.report.cost_per_point": [(pd.DataFrame(), pd.DataFrame())],
    "compare.report.homogeneity_estimates": [(pd.DataFrame(),)],
    "compare.report.model_estimates": [(pd.DataFrame(),)],
    "compare.report.models_of": [(pd.DataFrame(),)],
    "compare.report.flat_values": [(np.array([]),), (np.array([math.nan, 2.0]), True)],
    "compare.report.normalised": [(pd.DataFrame(columns=["measure", "model", "n", "mean", "lo", "hi", "judge"]),
                                   pd.DataFrame(columns=["measure", "model", "item", "value", "judge"]))],
    "compare.report.paired_differences": [(pd.DataFrame(),)],
    "compare.report.refused_measures": [(pd.DataFrame(),), (pd.DataFrame({"measure": ["m"], "judge": ["j"],
                                                                          "provenance": [math.nan]}),)],
    "compare.report.comparable_values": [(pd.DataFrame(columns=["measure"]),)],
    "compare.figures.count_text": [([],), ([math.nan, 3.0],)],
    "compare.reading.against_people": [(pd.DataFrame(columns=["task", "prompt", "a", "b", "cosine"]), "t", "m", "m")],
    "compare.reading.claim_row": [("c", "t", "m", {"value": math.nan, "lo": math.nan, "hi": math.nan, "n": 0})],
    "compare.reading.untested": [("c", "here", "why")],
    "tables.captioned": [(pd.DataFrame(), "")],
    "tables.public_text": [("",), (None,)],
    "tables.echoes": [("", "", 4), ("a b", "a b", 0)],
    "tables.short_path": [("/",)],
    "convergent.report.auarc_caveat": [(pd.DataFrame(),)],
    "convergent.report.no_confidence": [([], [])],
    "convergent.report.one_answer": [([],), ([None, math.nan],)],
    "validation.reading.novelty_agrees": [({"rho": math.nan},)],
    "tables.missing_table": [("x", "y")],
    "tables.computed": [(pd.DataFrame(),), ({"a": 1.0},)],
    "tables.missing_figure": [("x", "y")],
    "tables.guarded": [(len,)],
    "tables.guard_module": [({"__name__": "nowhere"},)],
    "compare.ranking.ranks_of": [(np.array([]),), (np.array([math.nan, 1.0]),)],
    "compare.ranking.measure_ranking": [(pd.DataFrame(columns=["model", "item", "value"]),),
                                        (pd.DataFrame({"model": ["a"], "item": ["i"], "value": [math.nan]}),)],
    "compare.ranking.rankings": [(pd.DataFrame(), "macgyver")],
    "compare.ranking.judgements": [(pd.DataFrame(columns=["item", "a", "b", "votes", "score", "flip", "first_picks",
                                                          "parsed_orders", "state"]),)],
    "reportcard.report.against_baseline": [({"difference": math.nan, "diff lo": math.nan, "diff hi": math.nan,
                                             "vs baseline": "n/a", "baseline": "length"},)],
    "rethinking.reading.claim_verdict": [(None, 1), ({"value": math.nan, "lo": math.nan, "hi": math.nan, "n": 0,
                                                      "null": 0.5, "note": ""}, (0.3, 0.5))],
    "rethinking.report.where_from": [("",), (f"shared:{paths.REPO.parent / 'shared/data/macgyver'}",)],
    "rethinking.report.example_ppl": [({}, config_of("rethinking")), ({"ppl": math.nan}, config_of("rethinking"))],
}
# extra arguments of functions that take the records first and something the chapter computes from them
RECS_EXTRA = {
    "divergent.report.echoing_steps": lambda recs, mod: ("m", "macgyver"),
    "divergent.report.unweighted_samples": lambda recs, mod: ("m", "macgyver"),
    "rethinking.report.formatting_frame": lambda recs, mod: ("ps",),
    "rethinking.reading.ci_claims": lambda recs, mod: (mod.reading_values(recs),),
    "rethinking.reading.other_claims": lambda recs, mod: (mod.reading_values(recs),),
    "rethinking.reading.twist_claim": lambda recs, mod: ({"judge": "j"},),
    "humansets.grading.card_rows": lambda recs, mod: (100, 0),
    "judges.report.fig_plane": lambda recs, mod: ("hanna", "surprise"),
    "humansets.grading.set_rows": lambda recs, mod: ("hanna", 100, 0),
    "humansets.report.summary": lambda recs, mod: (
        importlib.import_module("creval.studies.humansets.grading").card_rows(recs, 100, 0),),
    **{f"compare.ranking.{f}": (lambda recs, mod: ("macgyver",)) for f in (
        "agreement", "fig_pairwise", "pairwise_vs_people", "table_agreement", "table_overused",
        "table_pairwise", "table_pairwise_vs_people", "table_released")},
    **{f"compare.figures.{f}": (lambda recs, mod: ("macgyver",)) for f in ("fig_released", "released_dots")},
}
CHECKS_TAKERS = ("judge_values", "ppl_values", "ps_values", "template_values", "ttcw_values")


def short(module: str, fn: str) -> str:
    return f"{module.removeprefix('creval.studies.')}.{fn}"


def calls(module: str, fn: str, recs_of) -> list[tuple]:
    """The argument tuples ``fn`` is called with: the degenerate records of its study, or its OTHER_ARGS."""
    key = short(module, fn)
    f = getattr(importlib.import_module(module), fn)
    params = list(inspect.signature(f).parameters.values())
    if key in OTHER_ARGS:
        return OTHER_ARGS[key]
    if params and params[0].name == "recs":
        required = [p for p in params[1:] if p.default is inspect.Parameter.empty]
        if not required:
            return [(recs_of(k),) for k in KINDS]
        if key in RECS_EXTRA or fn in CHECKS_TAKERS:
            return [("recs+", k) for k in KINDS]
    if not [p for p in params if p.default is inspect.Parameter.empty]:
        return [()]
    return []


def test_every_report_function_is_covered():
    found = report_functions()
    assert len(found) > 100       # the discovery sees the studies' report modules
    missing = [short(m, f) for m, f in found if not calls(m, f, lambda k: None)]
    assert not missing, f"report functions with no degenerate input in this test: {missing}"


def _check(out, where: str, returns_none: bool = False) -> None:
    assert out is not None or returns_none, f"{where} returned None"
    if isinstance(out, pd.DataFrame) and "missing" in out.attrs:
        assert "not computed" in out.attrs.get("caption", ""), where
    if isinstance(out, go.Figure) and out.layout.meta and "missing" in out.layout.meta:
        assert "not computed" in out.layout.title.text, where
    if isinstance(out, str):
        assert not re.search(r"\bnan\b", out), f"{where} writes a bare nan: {out[:200]}"
        assert not re.search(r"(?<![\w.:/])/(work|root|home|tmp)/", out), f"{where} prints a machine path: {out}"
    if isinstance(out, pd.DataFrame):
        texts = [str(v) for c in out.columns if out[c].dtype == object for v in out[c] if isinstance(v, str)]
        bare = [t for t in texts if re.search(r"\bnan\b", t)]
        assert not bare, f"{where} shows a bare nan in a text cell: {bare[:3]}"


@pytest.mark.parametrize("study", [s for s in study_names() if s != "estimate"])
def test_report_functions_never_raise_on_degenerate_records(study, tmp_path):
    made: dict[str, Records] = {}

    def recs_of(kind):
        if kind not in made:
            made[kind] = records_of(tmp_path, study, kind)
        return made[kind]
    for module, fn in report_functions():
        if not module.startswith(f"creval.studies.{study}."):
            continue
        mod = importlib.import_module(module)
        for args in calls(module, fn, recs_of):
            if args and isinstance(args[0], str) and args[0] == "recs+":
                recs = recs_of(args[1])
                extra = (RECS_EXTRA[short(module, fn)](recs, mod) if short(module, fn) in RECS_EXTRA
                         else (importlib.import_module(f"creval.studies.{study}.report").table_checks(recs),))
                args = (recs, *extra)
            on = args[0].root.name if args and isinstance(args[0], Records) else "its arguments"
            where = f"{short(module, fn)} on {on}"
            try:
                out = getattr(mod, fn)(*args)
            except ImportError:           # a display helper whose front end is not installed here
                continue
            _check(out, where, "None" in str(inspect.signature(getattr(mod, fn)).return_annotation))


def test_table_bias_with_every_reversed_ranking_unparsed(tmp_path):
    """The records that stopped chapter 07: every reversed ranking unparsed, so no ``reverse`` column."""
    from creval.studies.aut import report
    t = report.table_bias(records_of(tmp_path, "aut", "order never answered"))
    assert "missing" not in t.attrs and len(t) == 2
    rank = t[t["setting"] == "comprehensive rank"].iloc[0]
    assert math.isnan(rank["rho(forward, reverse)"]) and rank["unparsed"] == pytest.approx(0.5)


def test_a_chapter_that_raised_stops_the_render_naming_its_cell(tmp_path):
    """`creval book` publishes nothing when a chapter raised: the render names the chapter, cell and error."""
    from creval.book import execute, render
    from creval.core.errors import CrevalError
    chapter = next(f for _, f in execute.book_structure() if f.endswith(".ipynb"))
    (tmp_path / chapter).parent.mkdir(parents=True)
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# T"]},
             {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["# a comment\n", "table(x)"],
              "outputs": [{"output_type": "error", "ename": "KeyError", "evalue": "'reverse'", "traceback": []}]}]
    (tmp_path / chapter).write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert execute.failing_cell(json.loads((tmp_path / chapter).read_text())) == (2, "table(x)", "KeyError: 'reverse'")
    assert render.failed_chapters(tmp_path) == [f"{chapter}: cell 2 (`table(x)`) raised KeyError: 'reverse'"]
    with pytest.raises(CrevalError, match="cell 2"):
        render.render_offline(tmp_path)
    assert not (tmp_path / "site").exists()
    assert re.fullmatch(r"the aut study's records in runs/smoke/aut/\w+",
                        execute.chapter_records("chapters/07-aut-agreement.ipynb", {"run_root": "runs/smoke"}))
    cells[1]["outputs"] = []
    (tmp_path / chapter).write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert render.failed_chapters(tmp_path) == []


def test_pages_name_data_sources_not_the_build_machines_folders():
    from creval.core import paths
    from creval.studies.tables import public_text
    home = paths.home()
    line = f"Human labels: MacGyver from shared:{paths.REPO.parent}/shared/data/macgyver"
    assert "/shared/data" not in public_text(line).replace("(shared/data", "")
    assert public_text(f"from download:{home}/datasets/neocoder") == "from a download (datasets/neocoder)"
    assert public_text(f"runs in {home}/runs/default/aut/abc") == "runs in runs/default/aut/abc"
    assert public_text("1/8 of https://example.org/a/b") == "1/8 of https://example.org/a/b"
