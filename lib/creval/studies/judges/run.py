"""The judges study's run (chapter 07c, issue 64): for every panel (:mod:`.panels`: a set's criterion, its people
and its released judges on one scale), the people and the judges as raters of one table
(:func:`creval.grade.judges.judge_table`: agreement on the people's held-out references, severity and
discrimination from one graded response model, the alternative-annotator test), then per judge its steadiness
across prompt wordings (:mod:`creval.measures.stats.consistency`) and whom and what length it favours beyond the
people (:mod:`creval.measures.stats.bias`).

Then, unless ``judge_model`` is the embedded default (which cannot keep a rating's reply format), the user's own
judge rates the stories of ``judges_own_prompts`` HANNA prompts (picked with ``data_seed``) on both criteria, one
unit per prompt, and puts TTCW's 14 tests to the model-written stories of ``judges_own_plots`` plots, one unit per
plot (resumable, cached); it is read among the released judges on those stories (sets ``hanna-yours`` and
``ttcw-yours``). Tables: ``panels``, ``raters``, ``variants``, ``bias``, ``texts``, ``own``."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from creval.core import units
from creval.core.table import TextTable
from creval.core.units import Unit
from creval.datasets import ttcw
from creval.datasets.rated import raters_words
from creval.grade import judges as J
from creval.grade.raters import Ratings
from creval.judges import story_rating
from creval.measures import pertext as P
from creval.measures.stats import bias, consistency
from creval.models import width as widths
from creval.models.registry import load_model, model_name
from creval.studies import contract
from creval.studies.judges.config import JudgesConfig
from creval.studies.judges.panels import Panel, panels_of
from creval.studies.judges.records import (
    BiasRecord,
    JudgedTextRecord,
    OwnRecord,
    PanelRecord,
    RaterRecord,
    VariantRecord,
)

JUDGE = "judge"


def row_mean(m: np.ndarray) -> np.ndarray:
    """Each text's mean over the wordings a judge answered readably (NaN where it answered none)."""
    ok = np.isfinite(m)
    n = ok.sum(axis=1)
    return np.where(n > 0, np.where(ok, m, 0).sum(axis=1) / np.maximum(n, 1), np.nan)


def ratings(p: Panel) -> Ratings:
    """The panel's people and judges (each judge's mean over its wordings) as one texts x raters table."""
    names = [*p.people_names, *p.judges]
    cols = [row_mean(m) for m in p.judges.values()]
    m = np.column_stack([p.people, *cols]) if cols else p.people
    kinds = {**{r: p.people_kind for r in p.people_names}, **{j: JUDGE for j in p.judges}}
    return Ratings(TextTable(Path(p.source), p.ids, p.ids, [{} for _ in p.ids]), m, names, kinds)


def text_rows(p: Panel) -> list[dict]:
    """The ``texts`` rows of one panel: per text the people's mean, each judge's score (:func:`row_mean`) and the
    surface baselines (:func:`creval.measures.pertext.format_features`; NaN where the text is not released)."""
    with np.errstate(all="ignore"):
        people = np.nanmean(p.people, axis=1)
    base = P.format_features([str(t) for t in p.texts]) if p.texts else {}
    missing = np.array([not str(t).strip() for t in p.texts], bool)     # TTCW releases no New Yorker story's text
    base = {k: np.where(missing, np.nan, v) for k, v in base.items()}
    scores = {f"{JUDGE}:{name}": row_mean(m) for name, m in p.judges.items()}
    author = p.author if len(p.author) else np.where(p.person, "person", "model")
    return [JudgedTextRecord(p.set, p.criterion, k, str(p.prompt[i]), str(author[i]), bool(p.person[i]),
                             float(people[i]), int(np.isfinite(p.people[i]).sum()),
                             {**{c: float(v[i]) for c, v in scores.items()},
                              **{c: float(v[i]) for c, v in base.items()}}).to_dict()
            for i, k in enumerate(p.ids)]


def variant_row(cfg: JudgesConfig, p: Panel, name: str, m: np.ndarray) -> dict:
    """How steady one judge is across its wordings (texts x wordings ``m``), beside how often the people's order
    of the same pairs flips between raters (:func:`creval.measures.stats.consistency.flip_gap`)."""
    f = consistency.flip_rate(m, p.prompt, cfg.n_boot, cfg.seed)
    share = consistency.variant_share(m)
    g = consistency.flip_gap(m, p.people, p.prompt, cfg.n_boot, cfg.seed)
    return VariantRecord(p.set, p.criterion, name, m.shape[1], p.unread[name], f["rate"], f["lo"], f["hi"],
                         f["pairs"], share["text"], share["variant"] + share["inconsistency"], g["people"],
                         g["value"], g["lo"], g["hi"], g["mc_lo"], g["mc_hi"], g["p"], g["prompts"]).to_dict()


def panel_tables(cfg: JudgesConfig, p: Panel) -> tuple[dict, list[dict], list[dict], list[dict], list[dict]]:
    """The ``panels`` row and the ``raters``, ``variants``, ``bias`` and ``texts`` rows of one panel."""
    if not p.readable:
        return PanelRecord(p.set, p.criterion, p.label, p.source, p.sample, 0, 0, 0, 0, "", math.nan, math.nan,
                           math.nan, p.note).to_dict(), [], [], [], []
    r = ratings(p)
    res = J.judge_table(r, list(p.prompt), cfg.n_boot, cfg.judges_irt_boot, cfg.seed)
    keys = ("agreement", "agreement_lo", "agreement_hi", "lead", "lead_lo", "lead_hi", "severity", "severity_lo",
            "severity_hi", "discrimination", "discrimination_lo", "discrimination_hi", "alt_winning_rate")
    rows = [RaterRecord(p.set, p.criterion, x["rater"], x["kind"], x["person"], x["n"], *(x[k] for k in keys),
                        "" if x["person"] else ("yes" if x["alt_passes"] else "no"), x["advantage"],
                        x["epsilon"]).to_dict() for x in res["rows"]]
    people = r.mean(p.people_kind)
    variants, leans = [], []
    for name, m in p.judges.items():
        if m.shape[1] > 1:
            variants.append(variant_row(cfg, p, name, m))
        score = row_mean(m)
        gap = bias.author_gap(score, people, p.person, p.prompt, cfg.n_boot, cfg.seed)
        lean = bias.length_lean(score, people, p.words, p.prompt, cfg.n_boot, cfg.seed)
        leans.append(BiasRecord(p.set, p.criterion, name, gap["value"], gap["lo"], gap["hi"], gap["n_prompts"],
                                lean["value"], lean["lo"], lean["hi"], lean["n"]).to_dict())
    info = PanelRecord(p.set, p.criterion, p.label, p.source, p.sample, len(p.ids), len(set(p.prompt.tolist())),
                       len(p.people_names), len(p.judges),
                       raters_words(np.isfinite(p.people).sum(axis=1), len(p.people_names), p.people_kind),
                       res["ceiling"], res["ceiling_lo"],
                       res["ceiling_hi"], "").to_dict()
    return info, rows, variants, leans, text_rows(p)


DEFAULT_NOTE = ("the embedded default judge, SmolLM2-135M, cannot keep a rating's reply format (chapter 03 counts its "
                "unparsed replies): not testable here; give -p judge_model=MODEL to place your judge among these")
YOURS, YOURS_TTCW = "hanna-yours", "ttcw-yours"
TESTS = 14


def own_prompts(cfg: JudgesConfig, p: Panel) -> list[str]:
    """The ``judges_own_prompts`` HANNA prompts the user's judge rates, picked with ``data_seed``."""
    return sorted(set(p.first_prompts(cfg.judges_own_prompts, cfg.data_seed).prompt.tolist()))


def own_plots(cfg: JudgesConfig, p: Panel) -> list[str]:
    """The ``judges_own_plots`` TTCW plots whose model-written stories (the released texts) the user's judge
    tests, picked with ``data_seed``."""
    return sorted(set(p.first_prompts(cfg.judges_own_plots, cfg.data_seed).prompt.tolist()))


def own_units(p: Panel, prompts: list[str], criteria: list[str]) -> list[Unit]:
    """One unit per prompt: its stories, each to be rated on every criterion."""
    return [Unit(f"own/{g}", [(p.ids[i], g, p.prompt_texts[i], p.texts[i], c)
                             for i in np.flatnonzero(p.prompt == g) for c in criteria]) for g in prompts]


def ttcw_units(p: Panel, plots: list[str], tests: list[dict]) -> list[Unit]:
    """One unit per TTCW plot: each of its released stories with each of the 14 tests."""
    return [Unit(f"own-ttcw/{g}", [(p.ids[i], g, p.texts[i], t) for i in np.flatnonzero(p.prompt == g)
                                   if str(p.texts[i]).strip() for t in tests]) for g in plots]


def own_rows(model, u: Unit) -> dict[str, list]:
    rated = story_rating.rate(model, [(pt, text, c) for _, _, pt, text, c in u.item])
    return {"own": [OwnRecord(k, g, c, model.name, r["score"], r["state"], r["tries"], r["via"]).to_dict()
                    for (k, g, _, _, c), r in zip(u.item, rated)]}


def ttcw_rows(model, u: Unit) -> dict[str, list]:
    answered = story_rating.pass_tests(model, [(text, t) for _, _, text, t in u.item])
    return {"own": [OwnRecord(k, g, f"test-{int(t['ttcw_idx']):02d}", model.name, r["score"], r["state"],
                              r["tries"], r["via"]).to_dict() for (k, g, _, t), r in zip(u.item, answered)]}


def _yours(cfg: JudgesConfig, p: Panel, mine: dict, set_name: str, what: str) -> Panel | None:
    """Panel ``p`` cut to the texts the user's judge scored (``mine``: id -> score or None), that judge added."""
    keep = np.array([k in mine for k in p.ids])
    if not keep.any():
        return None
    name = f"yours: {model_name(cfg.judge_model)}"
    q = p.subset(keep, set=set_name, label=f"{p.label}, the {int(keep.sum())} {what} your judge rated",
                 unread={**p.unread, name: float(np.mean([mine[k] is None for k in mine]))})
    q.judges[name] = np.array([[np.nan if mine[k] is None else mine[k]] for k in q.ids], float)
    return q


def own_panels(cfg: JudgesConfig, hanna: list[Panel], rows: list[dict]) -> list[Panel]:
    """Each HANNA panel cut to the stories the user's judge rated, that judge added beside the released ones."""
    out = [_yours(cfg, p, {r["id"]: r["score"] for r in rows if r["criterion"] == p.criterion}, YOURS, "stories")
           for p in hanna]
    return [q for q in out if q is not None]


def own_ttcw_panel(cfg: JudgesConfig, p: Panel, rows: list[dict]) -> list[Panel]:
    """The TTCW panel cut to the stories the user's judge tested, its score the tests passed (of 14; the sum of
    the probabilities from log-probs), none where a test's reply could not be read."""
    by: dict[str, list] = {}
    for r in rows:
        if r["criterion"].startswith("test-"):
            by.setdefault(r["id"], []).append(r["score"])
    mine = {k: (float(sum(v)) if len(v) == TESTS and all(x is not None for x in v) else None) for k, v in by.items()}
    q = _yours(cfg, p, mine, YOURS_TTCW, "model-written stories")
    return [q] if q is not None else []


def own_judge(cfg: JudgesConfig, store, read: list[Panel]) -> tuple[list[Panel], list[dict]]:
    """The user's judge on a seeded sample of HANNA stories and of TTCW's model-written stories: its panels and
    its ``own`` rows (a note panel and no call for the embedded default, or when no such panel was read)."""
    hanna = [p for p in read if p.set == "hanna" and p.readable] if cfg.judges_own_prompts else []
    tt = [p for p in read if p.set == "ttcw" and p.readable] if cfg.judges_own_plots else []
    if not hanna and not tt:
        return [], []
    if not cfg.asks_own_judge():
        first = (hanna or tt)[0]
        return [Panel(YOURS if hanna else YOURS_TTCW, ", ".join(p.criterion for p in hanna + tt),
                      "your judge", first.source, first.sample, note=DEFAULT_NOTE)], []
    model = load_model(cfg.judge_model)
    store.note_model(model)
    width, rows, panels = widths.width(cfg.judge_model), [], []
    if hanna:
        todo = own_units(hanna[0], own_prompts(cfg, hanna[0]), [p.criterion for p in hanna])
        mine = units.run_units(cfg.run_dir, "own", todo, lambda u: own_rows(model, u), width=width,
                               desc="judges · your judge, HANNA").get("own", [])
        rows, panels = rows + mine, own_panels(cfg, hanna, mine)
    tests = ttcw.load_tests().to_dict("records") if tt else []
    if tt and len(tests) == TESTS:
        todo = ttcw_units(tt[0], own_plots(cfg, tt[0]), tests)
        mine = units.run_units(cfg.run_dir, "own_ttcw", todo, lambda u: ttcw_rows(model, u), width=width,
                               desc="judges · your judge, TTCW").get("own", [])
        rows, panels = rows + mine, panels + own_ttcw_panel(cfg, tt[0], mine)
    return panels, rows


def run(cfg: JudgesConfig) -> Path:
    store = contract.start(cfg)
    tables: dict[str, list] = {"panels": [], "raters": [], "variants": [], "bias": [], "texts": []}
    read = panels_of(cfg.judges_sets, cfg.judges_prompts, cfg.data_seed)
    yours, own = own_judge(cfg, store, read)
    for p in tqdm([*read, *yours], desc="judges · panels", unit="panel"):
        for name, part in zip(tables, panel_tables(cfg, p)):
            tables[name] += [part] if isinstance(part, dict) else part
    tables["own"] = own
    for name, rows in tables.items():
        store.write(name, rows)
    return contract.finish(store)
