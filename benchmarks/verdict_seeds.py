"""Does any verdict of a finished book depend on the bootstrap seed? (issue 40: "every verdict identical across
bootstrap seeds 0-9, or marked borderline").

Reads a finished run root (default: ``runs/default`` under the data home, ``CREVAL_HOME``) and, for each seed
(``CREVAL_BOOT_SEED`` = 0..9: :func:`creval.measures.stats.resample.boot_seed` shifts every report-time resample),
recomputes every verdict the book prints from the records alone, under the guard of ``tests/forbid.py`` (no
model, judge, sandbox or cache call):

- each chapter's verdicts: every ``module.f(recs)`` its notebook calls on a module of its study's package
  (``report``, ``reading``, ``human``, ...), read off the Markdown bullets ("- **verdict (reason)**: claim") and
  the ``verdict`` columns of the tables they return (chapter 07's judge-against-baseline words included);
- the report card's rows (chapter 08), recomputed from the graded studies' records with
  :func:`creval.studies.card.card_rows` (the card's own records were written once, at seed 0):
  the raw word and the word after Holm's correction; and the words of the chapter's grade of the bundled
  sample.

It prints every verdict whose word differs across the seeds, the words per seed, and whether every seed marked
it *borderline*; it exits 1 when a verdict flips without that mark, 2 when the run root cannot be read as
it is (a study missing or unfinished, a run id that differs here: set the data variables the book was built
with, e.g. ``CREVAL_SHARED_DATA=none CREVAL_OFFLINE=1`` for the smoke book of the integration tests).

    .venv/bin/python benchmarks/verdict_seeds.py [--root RUN_ROOT] [--seeds 0-9] [--n-boot N] [--only a,b]
    .venv/bin/python benchmarks/verdict_seeds.py --margin-check    # how often a flip escapes the mark (simulated)
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from creval.core.paths import REPO, home
from creval.measures.stats.resample import SEED_ENV
from creval.studies.contract import is_finished
from creval.studies.registry import STUDIES, upstream_records

CALL = re.compile(r"\b(\w+)\.(\w+)\(recs\)")
BULLET = re.compile(r"^- \*\*(.+?)\*\*", re.MULTILINE)
SHORT = {"supports the paper": "S", "contradicts the paper": "C", "inconclusive here": "I",
         "not testable here": "-", "reproduced": "R", "not reproduced": "N", "tracks people": "T",
         "tracks authorship only": "A", "does not track people": "D", "better": "B", "worse": "W",
         "indistinguishable": "="}    # the last three: a judge against a trivial baseline (stats.paired_word)
GRADE_CELL = {"measures": ["ci", "lexical"], "n_boot": 500}   # chapter 08's grade of the bundled sample


# -- reading verdicts out of what a page prints -----------------------------------------------------------
def parse_label(text: str) -> tuple[str, bool]:
    """``(word, borderline)`` of a printed verdict: "word[, borderline][ (reason)]"."""
    label = str(text).split(" (", 1)[0].strip()
    marked = label.endswith(", borderline")
    return (label[: -len(", borderline")] if marked else label), marked


def read_verdicts(source: str, out) -> dict[tuple, tuple[str, bool, str]]:
    """The claim verdicts (:data:`SHORT`'s words) in one printed output: ``{key: (word, borderline, what)}``.
    Markdown bullets are keyed by their position; a table's ``verdict`` columns by column and row (``what``:
    the row's first text). Other bold words and a sandbox's verdicts ("OK", "wrong answer") are no claims."""
    found = {}
    if isinstance(out, str):
        for i, m in enumerate(BULLET.finditer(out)):
            line = out[m.end():].split("\n", 1)[0].lstrip(": ")
            word, marked = parse_label(m.group(1))
            if word in SHORT:
                found[(source, i)] = (word, marked, line[:90])
    elif isinstance(out, pd.DataFrame):
        cols = [c for c in out.columns if "verdict" in str(c).lower() or c == "word"]
        text = [c for c in out.columns if c not in cols and out[c].map(lambda x: isinstance(x, str)).any()]
        for col in cols:
            for i, (v, row) in enumerate(zip(out[col], out.to_dict("records"))):
                word, marked = parse_label(v)
                if word not in SHORT:
                    continue
                marked = marked or bool(row.get("borderline") is True)
                found[(source, col, i)] = (word, marked, str(row[text[0]])[:90] if text else "")
    return found


def flips(per_seed: dict[int, dict[tuple, tuple]]) -> list[dict]:
    """Every verdict whose word differs across seeds (absent under a seed counts as a word of its own):
    ``{key, what, words, marked, ok}`` with ``marked`` the number of seeds that marked it borderline and
    ``ok`` whether every seed did (a verdict that can flip must say so whichever seed the book ran with)."""
    seeds = sorted(per_seed)
    keys = list(dict.fromkeys(k for s in seeds for k in per_seed[s]))
    out = []
    for k in keys:
        got = [per_seed[s].get(k) for s in seeds]
        words = [g[0] if g else "(absent)" for g in got]
        if len(set(words)) < 2:
            continue
        marked = sum(bool(g and g[1]) for g in got)
        what = next((g[2] for g in got if g and len(g) > 2), "")
        out.append({"key": k, "what": what, "words": dict(zip(seeds, words)), "marked": marked,
                    "ok": marked == len(seeds)})
    return out


# -- the run root ---------------------------------------------------------------------------------------
def configs(root: Path, only: set[str], n_boot: int | None) -> tuple[dict, list[str]]:
    """Per study with a finished folder under ``root``: its Config, rebuilt from the folder's manifest (the
    newest finished one), checked to give the same run id here. The problems, as sentences."""
    cfgs, problems = {}, []
    for name, study in STUDIES.items():
        if only and name not in only:
            continue
        found = sorted((json.loads(f.read_text()) for f in (root / name).glob("*/manifest.json")),
                       key=lambda m: m.get("finished") or 0)
        found = [m for m in found if m.get("complete")]
        if not found:
            problems.append(f"{name}: no finished run folder under {root / name}")
            continue
        params = {k: v for k, v in found[-1]["params"].items() if k not in ("study", "run_id", "identity")}
        params["run_root"] = str(root)
        if n_boot is not None and "n_boot" in params:
            params["n_boot"] = n_boot
        cfg = study.make_config(params)
        if not is_finished(cfg):
            problems.append(f"{name}: run id here {cfg.run_id}, the folder's {found[-1]['params']['run_id']} "
                            "(the data resolves differently here: set the variables the book was built with)")
            continue
        cfgs[name] = cfg
    return cfgs, problems


@contextlib.contextmanager
def no_calls():
    """Every expensive call raises (tests/forbid.py), when pytest is at hand; else a warning."""
    try:
        import pytest
    except ImportError:
        print("warning: pytest is not installed: model calls are not guarded", file=sys.stderr)
        yield
        return
    spec = importlib.util.spec_from_file_location("forbid", REPO / "tests" / "forbid.py")
    forbid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(forbid)
    with pytest.MonkeyPatch.context() as mp:
        forbid.forbid_expensive_calls(mp)
        yield


def chapter_calls(study) -> list[tuple[str, str]]:
    """The ``(module, function)`` pairs the study's chapter calls on its records (any module of the study's
    package: report, reading, human, ...), figures left out."""
    nb = json.loads((REPO / study.chapter).read_text())
    src = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    return sorted({(m, f) for m, f in CALL.findall(src)
                   if not f.startswith("fig") and importlib.util.find_spec(f"{study.package}.{m}") is not None})


def one_seed(cfgs: dict, seed: int, errors: dict) -> dict:
    """Every verdict of the book under bootstrap seed ``seed`` (``CREVAL_BOOT_SEED``)."""
    os.environ[SEED_ENV] = str(seed)
    found: dict = {}
    for name, cfg in cfgs.items():
        study = STUDIES[name]
        recs = study.records(cfg)
        if name == "reportcard":
            from creval.studies.card import card_rows
            try:
                rows = card_rows(upstream_records(cfg), n_boot=cfg.n_boot, seed=cfg.seed)
            except Exception as e:  # noqa: BLE001 - a page shows the error; here it is listed
                errors[(name, "card_rows")] = f"{type(e).__name__}: {e}"[:160]
                continue
            for r in rows:
                key, what = f"{r['measure']} | {r['human data']} | {r['paper']}", r["measure"]
                found[("08 card", key, "verdict")] = (r["verdict"], bool(r["borderline"]), what)
                found[("08 card", key, "after Holm")] = (r["adjusted"], bool(r["adjusted borderline"]), what)
            found.update(bundled_grade(cfg.seed, errors))
            continue
        for mod, f in chapter_calls(study):
            try:
                out = getattr(importlib.import_module(f"{study.package}.{mod}"), f)(recs)
            except Exception as e:  # noqa: BLE001
                errors[(name, f"{mod}.{f}")] = f"{type(e).__name__}: {e}"[:160]
                continue
            found.update(read_verdicts(f"{Path(study.chapter).stem[:2]} {mod}.{f}", out))
    return found


def margin_check(trials: int = 300, seeds: int = 10) -> pd.DataFrame:
    """How often a bound flips across ``seeds`` seeds while some seed leaves it unmarked, at the worst place
    for the threshold it is read against: ``trials`` sets of ``seeds`` x B draws of a smooth, a skewed and a
    discrete statistic (the bound of each seed, its :func:`~creval.measures.stats.resample.mc_margin`), for the
    lower and upper 2.5% bounds, B = 200, 1000, 2000 (docs/verdicts.md quotes it)."""
    import numpy as np

    from creval.measures.stats.resample import mc_margin
    rng, rows = np.random.default_rng(0), []
    draw = {"normal": lambda n: rng.normal(size=n), "skewed": lambda n: rng.gamma(2.0, size=n),
            "discrete": lambda n: rng.binomial(40, 0.3, size=n) / 40}
    for q in (0.025, 0.975):
        for b in (200, 1000, 2000):
            for name, f in draw.items():
                v = f((trials, seeds, b))
                bound = np.quantile(v, q, axis=2)
                m = np.array([[mc_margin(v[t, s], q) for s in range(seeds)] for t in range(trials)])
                worst = 0.0
                for t in np.unique(np.r_[np.quantile(bound, np.linspace(0, 1, 41)), bound.ravel()[:300],
                                         bound.ravel()[:300] - 1e-9]):
                    side = bound > t
                    worst = max(worst, float(np.mean(side.any(1) & ~side.all(1) & (np.abs(bound - t) > m).any(1))))
                rows.append({"bound": q, "B": b, "statistic": name, "worst unmarked flip": worst,
                             "margin / SD of the bound": float(np.mean(m) / bound.std())})
    return pd.DataFrame(rows)


def bundled_grade(seed: int, errors: dict) -> dict:
    """The words of chapter 08's own grade of the bundled sample (its last table; :data:`GRADE_CELL`)."""
    from creval.grade.card import card_table
    from creval.grade.grading import SAMPLE, GradeOptions, grade_file
    try:
        own = grade_file(SAMPLE, GradeOptions(labels="rating", id="id", group="prompt_id", author="author",
                                              prompt="prompt", seed=seed, **GRADE_CELL))
    except Exception as e:  # noqa: BLE001
        errors[("reportcard", "grade_file")] = f"{type(e).__name__}: {e}"[:160]
        return {}
    return read_verdicts("08 grade of the bundled sample", card_table(own))


def seeds_arg(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b) + 1)) if b else [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default="runs/default", help="run root: absolute, or under the data home")
    ap.add_argument("--seeds", type=seeds_arg, default=list(range(10)), help="0-9 (default) or 0,3,5")
    ap.add_argument("--n-boot", type=int, default=None, help="resamples (default: as the book was built)")
    ap.add_argument("--only", default="", help="comma-separated studies (default: every one under the root)")
    ap.add_argument("--margin-check", action="store_true", help="simulate the borderline mark's cover instead")
    a = ap.parse_args(argv)
    if a.margin_check:
        print(margin_check().to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        return 0
    root = Path(a.root) if Path(a.root).is_absolute() else home() / a.root
    cfgs, problems = configs(root, {s for s in a.only.split(",") if s}, a.n_boot)
    for p in problems:
        print("cannot read:", p)
    if not cfgs:
        return 2
    before, per_seed, errors = os.environ.get(SEED_ENV), {}, {}
    try:
        with no_calls():
            for s in a.seeds:
                t = time.time()
                per_seed[s] = one_seed(cfgs, s, errors)
                print(f"seed {s}: {len(per_seed[s])} verdicts, {sum(v[1] for v in per_seed[s].values())} "
                      f"borderline ({time.time() - t:.0f} s)", flush=True)
    finally:
        os.environ.pop(SEED_ENV, None) if before is None else os.environ.__setitem__(SEED_ENV, before)
    for (study, src), e in sorted(errors.items()):
        print(f"not read: {study} {src}: {e}")
    first = per_seed[a.seeds[0]]
    print(f"\n{len(first)} verdicts read under seed {a.seeds[0]}: "
          + ", ".join(f"{n} {w}" for w, n in Counter(v[0] for v in first.values()).most_common()))
    bad = flips(per_seed)
    if not bad:
        print(f"No verdict's word differs across seeds {a.seeds[0]}-{a.seeds[-1]}.")
    else:
        print(f"\n{len(bad)} verdict(s) whose word differs across the seeds "
              f"({', '.join(f'{k} = {w}' for w, k in SHORT.items())}):")
        print(pd.DataFrame([{"where": " / ".join(map(str, f["key"])), "what": f["what"][:60],
                             "words by seed": " ".join(SHORT.get(w, "?") for w in f["words"].values()),
                             "borderline under": f"{f['marked']} of {len(a.seeds)}",
                             "marked": "yes" if f["ok"] else "NO"} for f in bad]).to_string(index=False))
    unmarked = [f for f in bad if not f["ok"]]
    if unmarked:
        print(f"\n{len(unmarked)} verdict(s) flip with the seed without the borderline mark under every seed.")
    return 1 if unmarked else 0


if __name__ == "__main__":
    sys.exit(main())
