"""Chapter 09's "What this build found" rows, pure: the comparison's records in, one row per claim out (the
claim, this build's number with its n and 95% interval linked to its items, the word of the book's one rule,
why). :func:`creval.book.findings.findings` lays them out.

The claims are the ones the chapter reads its homogeneity tables against: Jiang et al. (2025, *Artificial
Hivemind*) report that open-ended answers repeat within one model and are strikingly alike across different
models. Both are read on the prompts people also answered, against people's own spread: per prompt, the mean
cosine between a model's answers (or two models' answers) minus the mean cosine between people's answers to the
same prompt, with a paired bootstrap interval over the prompts, the independent unit. The claim is that this
difference is above 0.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats.verdicts import TESTABLE, Verdict, claim_verdict
from creval.studies.claims import too_few_of
from creval.studies.compare.report import models_of
from creval.studies.compare.values import PEOPLE
from creval.studies.config import boot_settings
from creval.studies.links import items
from creval.studies.tables import captioned, guard_module

COLUMNS = ["the paper's claim", "this build", "verdict", "reason"]
WITHIN = ("Jiang et al. (2025) report that open-ended answers repeat within one model: a model's answers to a "
          "prompt are more alike than people's.")
ACROSS = ("Jiang et al. (2025) report that different models' answers are strikingly alike: two models' answers "
          "to a prompt are more alike than people's.")


def _per_prompt(h: pd.DataFrame, task: str, a: str, b: str) -> pd.Series:
    """The cosine per prompt between ``a``'s and ``b``'s answers to ``task``'s prompts."""
    g = h[(h["task"] == task) & (h["a"] == a) & (h["b"] == b)]
    return g.groupby("prompt")["cosine"].mean().astype(float)


def against_people(h: pd.DataFrame, task: str, a: str, b: str, n_boot: int = 1000, seed: int = 0) -> dict:
    """Per prompt, cosine(a, b) minus cosine(people, people) on the prompts both have: the mean difference,
    its paired bootstrap interval (none with fewer than 5 prompts) and n prompts."""
    x, y = _per_prompt(h, task, a, b), _per_prompt(h, task, PEOPLE, PEOPLE)
    shared = x.index.intersection(y.index)
    x, y = x[shared].to_numpy(float), y[shared].to_numpy(float)
    keep = np.isfinite(x) & np.isfinite(y)
    d = corr.paired_mean_diff_ci(x, y, n_boot=n_boot, seed=seed)
    mean = float(np.mean(x[keep] - y[keep])) if keep.any() else float("nan")
    return {"value": mean, "lo": d["lo"], "hi": d["hi"], "n": int(keep.sum())}


def claim_row(claim: str, task: str, who: str, est: dict) -> dict:
    """One row of the table: the claim, this build's difference with n and interval, the rule's word and why."""
    v = claim_verdict(est["value"], est["lo"], est["hi"], est["n"], claimed="+", null=0.0, units="prompt",
                      degenerate=too_few_of(est["n"], "prompt"))
    link = items(f"{est['n']} prompt{'s' if est['n'] != 1 else ''}", "compare", "homogeneity", {"task": task})
    how = ("95% interval: paired bootstrap over prompts" if np.isfinite(est["lo"]) and np.isfinite(est["hi"])
           else f"no interval with fewer than {corr.MIN_N} prompts")
    shown = num.fmt_estimate(est["value"], est["lo"], est["hi"], 3)
    here = f"{task}: cosine of {who} minus people's, per prompt: {shown} on {link} (n = {est['n']}; {how})."
    return {COLUMNS[0]: claim, COLUMNS[1]: here, COLUMNS[2]: v.label, COLUMNS[3]: v.reason}


def untested(claim: str, here: str, why: str) -> dict:
    """A row the build cannot read: what it has instead (``here``), *not testable here* and why."""
    v = Verdict(TESTABLE, why)
    return {COLUMNS[0]: claim, COLUMNS[1]: here, COLUMNS[2]: v.label, COLUMNS[3]: v.reason}


def what_this_shows(recs) -> pd.DataFrame:
    """The claims of the chapter (the module's docstring), one row per task people answered and per model (or
    pair of models), each read by the rule; a claim this build cannot read is one row saying why."""
    h = recs["homogeneity"]
    n_boot, seed = boot_settings(recs)
    models = models_of(recs["values"]) or sorted({m for m in (h["a"] if len(h) else []) if m != PEOPLE})
    tasks = sorted({t for t, a in zip(h["task"], h["a"]) if a == PEOPLE}) if len(h) else []
    rows, measured = [], f"Models measured: {', '.join(models) or 'none'}."
    for claim, pairs in ((WITHIN, [(m, m) for m in models]), (ACROSS, list(combinations(models, 2)))):
        if not tasks:
            rows.append(untested(claim, measured, "no prompt of this build was also answered by people"))
        elif not pairs:
            rows.append(untested(claim, measured, f"this build measured {len(models)} model(s): the claim needs two"))
        for task in tasks:
            for a, b in pairs:
                who = f"{a}'s answers" if a == b else f"{a}'s and {b}'s answers"
                rows.append(claim_row(claim, task, who, against_people(h, task, a, b, n_boot, seed)))
    return captioned(pd.DataFrame(rows, columns=COLUMNS), "What this build found")


guard_module(globals())
