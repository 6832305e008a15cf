"""Grade measures on a user's own rated texts (issue 42, ``creval grade``): every measure that needs no new
sample is computed per text, then each is put to the report card's rule (:func:`~creval.measures.stats.tracking.
tracks_people`: the statistic against the human labels with its cluster-bootstrap interval, against the
strongest trivial baseline on the same texts, and within each author) and gets its word.

:func:`measure_table` computes the per-text table, :func:`grade` the card rows, :func:`grade_file` both from
a file (what the command and chapter 08 call); :mod:`creval.grade.card` writes the card.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.table import TextTable, check_lengths, read_table
from creval.grade import raters as R
from creval.judges.rubric import rubric_judge
from creval.measures import pertext as P
from creval.measures import templates as T
from creval.measures.diversity import item_originality, semdis
from creval.measures.stats import correlation as corr
from creval.measures.stats.tracking import tracks_people
from creval.models import embeddings, heavy, registry
from creval.models import width as units
from creval.models.embeddings import Embedder
from creval.models.registry import check, get_spec, load_model

GROUPS = ("ci", "ppl", "templates", "diversity", "lexical", "prompt", "judge")
"""The measure families ``--measures`` picks from (``judge`` runs only with a judge model)."""
CHEAP = tuple(g for g in GROUPS if g != "judge")
SAMPLE = paths.samples_dir() / "grade" / "stories.csv"
"""The bundled labelled sample: 60 short stories written for creval, with our own 1-5 ratings."""


@dataclass
class GradeOptions:
    """What to compute and how: the columns, the measure families, the models and the rule's settings."""
    labels: str
    text: str = "text"
    id: str | None = None
    group: str | None = None                # the item/prompt each text answers: a stratum, never the unit
    cluster: str | None = None              # the independent unit (a writer, a model); None: each text
    author: str | None = None
    prompt: str | None = None
    measures: Sequence[str] = CHEAP
    model: str | None = None                # perplexity (None: :func:`scoring_model`)
    judge: str | None = None                # rubric judge model (creative-writing rubric)
    L: tuple[int, int] = (5, 7)
    agg: str = "mean"
    template_n: int = 5
    template_top: int = 100
    stat: str = "auto"
    n_boot: int = 2000
    seed: int = 0
    warnings: list = field(default_factory=list)
    rater: str | None = None                # long input: the column naming each row's rater (issue 63)
    rater_kind: str | None = None           # its kind (expert, lay, crowd), one per rater


SCORING_MODELS = ("smollm2-135m-hf", "smollm2-135m")
"""Perplexity's default model, the first usable: SmolLM2-135M's packaged weights through transformers in float32,
then the same weights through llama.cpp. Scoring is all prefill, where torch's float32 matrix products beat the
portable llama.cpp build about 3x on 2 CPU cores (476 against 151 tokens/s); the two agree on each text's
perplexity to a median 0.01% (at most 1.6%, Spearman 0.9994 over 40 passages; docs/performance.md)."""


def scoring_model(asked: str | None = None) -> str:
    """``asked``, else the first usable of :data:`SCORING_MODELS` (the last when none is)."""
    if asked:
        return asked
    return next((m for m in SCORING_MODELS if check(get_spec(m))[0]), SCORING_MODELS[-1])


def check_measures(names: Sequence[str], judge: str | None) -> list[str]:
    """The measure families asked for, checked: unknown names and ``judge`` without a judge model are errors."""
    bad = [m for m in names if m not in GROUPS]
    if bad:
        raise CrevalError(f"unknown measure(s) {', '.join(bad)}", f"choose from {', '.join(GROUPS)}")
    out = list(dict.fromkeys(names))
    if judge and "judge" not in out:
        out.append("judge")
    if "judge" in out and not judge:
        raise CrevalError("the judge measure needs a judge model",
                          "give --judge-model MODEL (e.g. --judge-model smollm2-135m)")
    return out


def _prompt_column(table: TextTable, prompt: str | None) -> str | None:
    if prompt:
        table.column(prompt)          # an error naming the file when it has no such column
        return prompt
    return "prompt" if table.rows and "prompt" in table.rows[0] else None


def measure_table(table: TextTable, opt: GradeOptions, step: Callable[[], None] = lambda: None) -> dict:
    """``{column: array}`` of every asked-for measure per text, plus the baselines (:data:`~creval.measures.
    pertext.BASELINES`). Perplexity calls ``step()`` after each text (a progress bar). Long: one branch per
    measure family, each a few lines."""
    texts, names = table.texts, check_measures(opt.measures, opt.judge)
    opt.warnings = []
    cols: dict[str, np.ndarray] = dict(P.format_features(texts))
    groups = [str(g) for g in table.column(opt.group)] if opt.group else None
    scored: dict[str, np.ndarray] = {}
    if "ci" in names:
        Ls = range(opt.L[0], opt.L[1] + 1)
        cols.update(P.ci_references(texts, table.ids, groups, Ls, opt.agg))
        for k in ("ci_own", "ci_group"):
            if k in cols:
                opt.warnings.append(P.saturation(cols[k], P.ci_bound(Ls, opt.agg), P.DESCRIBE[k]))
    if "lexical" in names:
        cols.update(P.lexical(texts))
        opt.warnings.append(P.saturation(cols["distinct_1"], 1.0, P.DESCRIBE["distinct_1"], share=0.5))
    if "ppl" in names:                      # first: its model loads before the tagger's and embedder's libraries
        opt.model = scoring_model(opt.model)
        heavy.lean_heap()
        recs = P.perplexity_each(load_model(opt.model), texts, step=step, width=units.width(opt.model, scoring=True))
        scored = {"ppl": np.array([r.ppl for r in recs]), "bits_per_byte": np.array([r.bits_per_byte for r in recs])}
        heavy.give_back(registry.LOADED)     # its weights go before the next family loads
    if "templates" in names:
        cols["templates_per_token"] = P.templates_per_token(T.pos_tag(texts), opt.template_n, opt.template_top)
    if "diversity" in names or "prompt" in names:
        emb = Embedder()
        if "diversity" in names:
            cols["cosine_to_others"] = item_originality(texts, groups, emb, bleu=False)["cosine_to_others"].to_numpy()
        prompt = _prompt_column(table, opt.prompt)
        if "prompt" in names and prompt:
            cols["prompt_distance"] = semdis([str(p or "") for p in table.column(prompt)], texts, emb)
        elif "prompt" in names:
            opt.warnings.append(f"{table.path}: no prompt column (give --prompt COL): distance to the prompt left out")
        del emb
        heavy.give_back(embeddings.LOADED)
    cols.update(scored)                     # the card's order: perplexity after the embeddings
    cols.update(P.declared(texts, names))   # the measures declared with pertext.text_measure
    if "judge" in names:
        cols["judge"] = judge_scores(table, opt.judge)
    opt.warnings = [w for w in opt.warnings if w]
    return cols


def judge_scores(table: TextTable, model: str) -> np.ndarray:
    """The creative-writing rubric judge's mean aspect score per text (NaN where no aspect parsed)."""
    items = [{"id": k, "text": t} for k, t in zip(table.ids, table.texts)]
    recs = rubric_judge(load_model(model), items, "cw")
    return np.array([np.nanmean([v for v in r.scores.values() if v is not None] or [np.nan]) for r in recs], float)


def statistic_for(y: Sequence[float], stat: str = "auto") -> str:
    """``auc`` for labels with two values (the higher one is the positive class), ``spearman`` otherwise."""
    if stat != "auto":
        return stat
    return "auc" if len(set(y)) == 2 else "spearman"


def as_binary(y: Sequence[float]) -> np.ndarray:
    """Two-valued labels as 0/1 (1 = the higher value)."""
    y = np.asarray(y, float)
    return (y == np.max(y)).astype(float)


def rule(x, y, *, stat: str, baselines: dict, author=None, cluster=None, group=None, n_boot: int = 2000,
         seed: int = 0) -> dict:
    """The report card's rule on one measure (:func:`creval.measures.stats.tracking.tracks_people`): the one call
    site, so the card of ``creval grade`` and chapter 08's card read the same words."""
    return tracks_people(x, y, stat=stat, baselines=baselines, author=author, cluster=cluster, group=group,
                         n_boot=n_boot, seed=seed)


PARALLEL_WORK = 2_000_000
"""Texts x resamples x measures above which :func:`grade` runs the measures' rules in a process per core: the
rule's bootstrap is thousands of small numpy calls (about 5 s a measure for 500 texts and 2,000 resamples on
one core), so the cores split the measures; below it, starting the processes would cost more than it saves."""


def grade(cols: dict, y: Sequence[float], *, author=None, cluster=None, group=None, stat: str = "auto",
          n_boot: int = 2000, seed: int = 0, workers: int | None = None) -> list[dict]:
    """One card row per measure in ``cols`` (its values oriented by :data:`~creval.measures.pertext.
    DIRECTION`), the baselines being the :data:`~creval.measures.pertext.BASELINES` columns of ``cols``.
    ``workers``: processes for the rules (default: one per core when the work passes :data:`PARALLEL_WORK`);
    each rule is seeded alone, so the card is the same whatever the number."""
    y = np.asarray(y, float)
    check_lengths("the grade", len(y), author=author, cluster=cluster, group=group,
                  **{f"measure {k!r}": v for k, v in cols.items()})
    stat = statistic_for(y, stat)
    if stat == "auc":
        y = as_binary(y)
    base = {k: np.asarray(cols[k], float) for k in P.BASELINES if k in cols}
    names = [k for k in cols if k not in P.BASELINES]
    jobs = [(P.oriented(k, cols[k]), y) for k in names]
    kw = dict(stat=stat, baselines=base, author=author, cluster=cluster, group=group, n_boot=n_boot, seed=seed)
    if workers is None:
        workers = (os.cpu_count() or 1) if len(y) * n_boot * len(jobs) >= PARALLEL_WORK else 1
    workers = max(1, min(workers, len(jobs)))
    if workers == 1:
        got = [rule(x, yy, **kw) for x, yy in jobs]
    else:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            got = list(pool.map(partial(rule, **kw), *zip(*jobs)))
    return [{"measure": k, "description": P.DESCRIBE.get(k, k), **r} for k, r in zip(names, got)]


MIN_BOOT = 100
"""Fewer resamples than this leave a 95% percentile bound resting on two or three values: refused."""


def check_boot(n_boot: int) -> None:
    """A CrevalError for a number of resamples too small to read a 95% interval off."""
    if n_boot < MIN_BOOT:
        raise CrevalError(f"--n-boot {n_boot}: a 95% interval needs at least {MIN_BOOT} resamples",
                          "give --n-boot 2000 (the default) or at least 100")


def read_texts(path: str | Path, opt: GradeOptions) -> TextTable:
    """The texts of ``path`` read with ``opt``'s text and id columns (every error names the file); a long file
    (``opt.rater``) comes back folded, one row per text (:func:`creval.grade.raters.fold`)."""
    return read_long(path, opt).texts if opt.rater else read_table(path, text=opt.text, id=opt.id)


def read_long(path: str | Path, opt: GradeOptions) -> "R.Ratings":
    """A long file (one row per text and rater, ``opt.rater`` naming the rater) folded per text."""
    long = read_table(path, text=opt.text, id=opt.id, repeated=True)
    if long.id_column is None:
        raise CrevalError(f"{path}: --rater needs the column naming each text (--id COL; no column 'id' here)",
                          "give --id the column that names the text each rater scored")
    return R.fold(long, opt.labels, opt.rater, opt.rater_kind)


def grade_file(path: str | Path, opt: GradeOptions, step: Callable[[], None] = lambda: None,
               table: TextTable | None = None) -> dict:
    """Read ``path`` (or take its ``table`` already read), compute :func:`measure_table` and :func:`grade` it
    against column ``opt.labels``: ``{"table": TextTable, "measures": {column: array}, "card": [rows],
    "stat": ..., "warnings": [...], "ppl_model": the perplexity model or None}``."""
    ratings = None
    if opt.rater:                       # a long file: the mean of each text's raters, the raters named
        ratings = read_long(path, opt)
        table, y = ratings.texts, list(ratings.mean())
    else:
        table = table if table is not None else read_texts(path, opt)
        y = table.numbers(opt.labels)
    if len(set(y)) < 2:
        raise CrevalError(f"{path}: column {opt.labels!r} holds one value only ({y[0]:g})",
                          "grade against labels that vary")
    check_boot(opt.n_boot)
    author = [str(a) for a in table.column(opt.author)] if opt.author else None
    group = [str(g) for g in table.column(opt.group)] if opt.group else None
    cluster = [str(g) for g in table.column(opt.cluster)] if opt.cluster else None
    check_lengths(path, len(table), labels=y, author=author, group=group, cluster=cluster)
    cols = measure_table(table, opt, step)
    card = grade(cols, y, author=author, cluster=cluster, group=group, stat=opt.stat, n_boot=opt.n_boot,
                 seed=opt.seed)
    kinds = sorted(set((ratings.kinds or {}).values())) if ratings else []
    if ratings is not None:
        card = [{**r, "raters": ratings.who(), **held_out_note(ratings, cols[r["measure"]], r["measure"])}
                for r in card]
    if len(kinds) >= 2:                 # both kinds: each row again against each kind's mean alone
        for k in kinds:
            yk = ratings.mean(k)
            card += [{**r, "measure": f"{r['measure']} ({k})", "raters": ratings.who(k), "kind": k}
                     for r in grade(cols, yk, author=author, cluster=cluster, group=group, stat=opt.stat,
                                    n_boot=opt.n_boot, seed=opt.seed)]
    return {"table": table, "labels": y, "author": author, "group": group, "cluster": cluster, "measures": cols,
            "card": card, "raters": R.ceiling(ratings) if ratings else [],
            "kinds": kinds_note(ratings, card, kinds) if len(kinds) >= 2 else "",
            "stat": statistic_for(y, opt.stat), "warnings": list(opt.warnings), "options": opt,
            "ppl_model": opt.model if "ppl" in cols else None}


def held_out_note(ratings: "R.Ratings", x, measure: str) -> dict:
    """A row's leave-one-rater-out columns: the raters' mean ceiling, the measure against the others, and how
    many held-out raters it equals or passes ("it beats 2 of 3 held-out raters")."""
    h = R.against_raters(ratings, P.oriented(measure, x))
    said = (f"against the others, it beats {h['beats']} of {h['of']} held-out raters" if h["beats"] else
            f"no held-out rater of {h['of']} agrees less with the others")
    return {"ceiling": h["ceiling"], "vs others": h["measure_vs_others"], "beats raters": h["beats"],
            "held out": f"{said} (raters' mean ceiling {h['ceiling']:.2f}, the measure {h['measure_vs_others']:.2f})"}


def kinds_note(ratings: "R.Ratings", card: list[dict], kinds: list[str]) -> str:
    """Where the kinds of rater disagree: their means' Spearman, and the measures whose word differs by kind."""
    a, b = ratings.mean(kinds[0]), ratings.mean(kinds[1])
    ok = np.isfinite(a) & np.isfinite(b)
    rho = corr.spearman(a[ok], b[ok])["rho"] if ok.sum() >= 3 else float("nan")
    words = {}
    for r in card:
        if r.get("kind"):
            words.setdefault(r["measure"].rsplit(" (", 1)[0], {})[r["kind"]] = r["word"]
    differ = [f"{m} ({'; '.join(f'{k}: {w}' for k, w in ws.items())})" for m, ws in words.items()
              if len(set(ws.values())) > 1]
    return (f"{kinds[0]} and {kinds[1]} raters' means agree at Spearman {rho:.2f} on {int(ok.sum())} texts; "
            + ("the word differs by kind for " + ", ".join(differ) if differ else "every measure gets the same word "
               "from both kinds"))


def per_text_rows(result: dict) -> list[dict]:
    """The per-text table: id, label and every measure and baseline, one row per text."""
    table, cols = result["table"], result["measures"]
    extra = {k: result.get(k) for k in ("author", "group", "cluster")}
    return [{"id": k, "label": result["labels"][i], **{c: v[i] for c, v in extra.items() if v is not None},
             **{c: float(v[i]) for c, v in cols.items()}} for i, k in enumerate(table.ids)]
