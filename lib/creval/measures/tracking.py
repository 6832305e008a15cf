"""Does a measure track people, or something trivial (issue 40)? :func:`tracks_people` compares a measure's
agreement with human labels or scores against the strongest trivial baseline, chosen inside every bootstrap
replicate, and, given who wrote each text, against the author label and within each author's texts.

Pooling texts by people and by models makes any measure that tells the two apart look good when people rate
one group higher: the author label alone then "agrees with people". So a measure *tracks people* only when its
interval lies above chance, it beats every baseline (length as stored and as cut, format features, the author
label: the within-replicate maximum, Lu et al. 2025 sec. 4 note length as the confound) and, given authors,
the effect holds within authors (the within-author statistic above chance and above the best baseline there).
A measure that beats the format baselines pooled but not the author label or within authors *tracks
authorship only*. Resampling is by independent unit (:mod:`creval.measures.resample`). Pure numpy/scipy.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from creval.measures.numbers import fmt_number
from creval.measures.resample import boot_p, cluster_draws, percentile, units
from creval.measures.verdicts import ENOUGH, INCONCLUSIVE, TESTABLE, smallest_detectable

TRACKS = "tracks people"
AUTHORSHIP = "tracks authorship only"
NO_TRACK = "does not track people"
WORDS = (TRACKS, AUTHORSHIP, NO_TRACK, INCONCLUSIVE, TESTABLE)
AUTHOR = "author label"
NULL = {"spearman": 0.0, "auc": 0.5}
MIN_UNITS = 5    # independent units below which no cluster bootstrap is meaningful


def _ranks(a: np.ndarray) -> np.ndarray:
    """Average ranks (1..n, ties share their mean rank) down axis 0, a column with a NaN all NaN: the values of
    ``scipy.stats.rankdata(a, axis=0)`` in plain numpy, for the bootstrap calls it thousands of times per
    measure (scipy's checks cost ~0.3 ms a call, the most of a card's time)."""
    a = np.asarray(a, float)
    m = a[:, None] if a.ndim == 1 else a.reshape(a.shape[0], int(np.prod(a.shape[1:])))
    n = len(m)
    order = np.argsort(m, axis=0, kind="stable")
    s = np.take_along_axis(m, order, axis=0)
    pos = np.arange(1, n + 1, dtype=float)[:, None]
    starts = np.ones(m.shape, bool)
    starts[1:] = s[1:] != s[:-1]                                # a new value begins a tie group
    ends = np.ones(m.shape, bool)
    ends[:-1] = starts[1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0.0), axis=0)
    last = np.minimum.accumulate(np.where(ends, pos, n + 1.0)[::-1], axis=0)[::-1]
    r = np.empty(m.shape)
    np.put_along_axis(r, order, (first + last) / 2, axis=0)
    r[:, np.isnan(m).any(axis=0)] = np.nan
    return r.reshape(a.shape)


def column_stats(cols: np.ndarray, y: np.ndarray, stat: str) -> np.ndarray:
    """The statistic of each column of ``cols`` (n x k) against ``y``: Spearman's rho (Pearson on average
    ranks) or the AUC of the column as a score for ``y`` = 1 (Mann-Whitney U / n_pos n_neg, ties 1/2). NaN
    for a constant column, a constant ``y`` or a single class."""
    cols = np.asarray(cols, float).reshape(len(y), -1)
    with np.errstate(all="ignore"):
        if stat == "spearman":
            both = _ranks(np.column_stack([cols, np.asarray(y, float)]))     # one sort for the columns and y
            r, ry = both[:, :-1], both[:, -1]
            rc, yc = r - r.mean(axis=0), ry - ry.mean()
            den = np.sqrt((rc ** 2).sum(axis=0) * (yc ** 2).sum())
            return np.where(den > 0, (rc * yc[:, None]).sum(axis=0) / np.where(den > 0, den, 1), np.nan)
        if stat == "auc":
            r = _ranks(cols)
            pos = np.asarray(y) == 1
            n_pos, n_neg = int(pos.sum()), int((~pos).sum())
            if n_pos == 0 or n_neg == 0:
                return np.full(cols.shape[1], np.nan)
            u = r[pos].sum(axis=0) - n_pos * (n_pos + 1) / 2
            same = np.ptp(cols, axis=0) == 0
            return np.where(same, np.nan, u / (n_pos * n_neg))
    raise ValueError(f"unknown statistic {stat!r}: spearman or auc")


def _strength(v: np.ndarray, stat: str) -> np.ndarray:
    """A baseline's agreement in its better orientation (a trivial feature may run either way)."""
    return np.abs(v) if stat == "spearman" else 0.5 + np.abs(v - 0.5)


def _group_mean(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each row's author mean of ``y``: the author label as the best feature it can be."""
    out = np.empty(len(y))
    for g in np.unique(groups):
        at = groups == g
        out[at] = y[at].mean()
    return out


def _replicate(x, y, base, author, stat, names) -> dict:
    """Every quantity of one (re)sample: the measure, each baseline (better orientation), the best baseline
    with and without the author label, and per author the measure and the best format baseline."""
    cols = base if author is None else np.column_stack([base, _group_mean(y, author)])
    vals = column_stats(np.column_stack([x, cols]), y, stat)
    m, b = vals[0], _strength(vals[1:], stat)
    out = {"value": m, "bases": b}
    out["best"] = np.nanmax(b) if np.isfinite(b).any() else math.nan
    nb = b[: base.shape[1]]
    out["best format"] = np.nanmax(nb) if np.isfinite(nb).any() else math.nan
    if author is not None:
        per, wsum, wval, wbase = {}, 0.0, 0.0, 0.0
        for g in np.unique(author):
            at = author == g
            v = column_stats(np.column_stack([x[at], base[at]]), y[at], stat)
            per[g] = v[0]
            gb = _strength(v[1:], stat)
            if np.isfinite(v[0]) and np.isfinite(gb).any():
                w = at.sum() if stat == "spearman" else (y[at] == 1).sum() * (y[at] != 1).sum()
                wsum, wval, wbase = wsum + w, wval + w * v[0], wbase + w * np.nanmax(gb)
        out["per"] = per
        out["within"] = wval / wsum if wsum else math.nan
        out["within base"] = wbase / wsum if wsum else math.nan
    return out


def _word(b: dict, null: float, has_author: bool, margin: float) -> str:
    """The word from the bounds (``b``: lo/hi of the measure, of its lead over the best baseline with and
    without the author label, of the within-author statistic and its lead there)."""
    above = b["lo"] > null
    if above and b["diff lo"] > 0 and (not has_author or (b["within lo"] > null and b["wdiff lo"] > 0)):
        return TRACKS
    if has_author and above and b["fdiff lo"] > 0:
        return AUTHORSHIP
    beaten = b["hi"] < null or b["diff hi"] < margin
    if has_author and not beaten:
        beaten = b["fdiff hi"] < margin and (b["within hi"] < null or b["wdiff hi"] < margin)
    return NO_TRACK if beaten else INCONCLUSIVE


def tracks_people(x, y, *, stat: str, baselines: dict[str, Sequence[float]], author: Sequence | None = None,
                  cluster: Sequence | None = None, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05,
                  margin: float = 0.0, direction: str = "+", min_n: int = ENOUGH) -> dict:
    """Whether measure ``x`` (one value per text, oriented by ``direction``: ``"+"`` higher = more of what
    people rated) tracks people's ``y`` (a score, ``stat="spearman"``; a 0/1 label, ``stat="auc"``) beyond
    every trivial baseline in ``baselines`` (name -> one value per text) and, given ``author`` (who wrote each
    text; its label joins the baselines as :data:`AUTHOR`), within authors. ``cluster``: the independent unit
    (prompt, writer, problem) that the bootstrap resamples whole; rows when None. ``margin``: the smallest
    lead over a baseline that matters (*does not track people* when the lead's interval lies below it).

    Returns ``statistic, n, n_units, value, lo, hi, baseline`` (the strongest on the data), ``baseline value,
    baselines`` (each, better orientation), ``difference, diff lo, diff hi`` (lead over the best baseline,
    chosen inside every replicate), ``format difference`` and its bounds (without the author label),
    ``within`` (per author ``{author, n, value, lo, hi}``), ``within value/lo/hi``, ``within difference``
    and bounds, ``word`` (:data:`WORDS`), ``borderline`` (a bound's Monte-Carlo margin could flip it), ``p``
    (the one-sided bootstrap p of the test that decided the word, for a correction across claims) and
    ``reason``. Rows with a missing value anywhere are dropped."""
    if stat not in NULL:
        raise ValueError(f"unknown statistic {stat!r}: spearman or auc")
    null, names = NULL[stat], list(baselines)
    sign = -1.0 if direction in ("-", -1, "negative") else 1.0
    x, y = sign * np.asarray(x, float), np.asarray(y, float)
    base = np.column_stack([np.asarray(baselines[k], float) for k in names]) if names else np.zeros((len(x), 0))
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(base).all(axis=1)
    aut = None if author is None else np.asarray(author, dtype=object)[keep].astype(str)
    clu = None if cluster is None else np.asarray(cluster, dtype=object)[keep]
    x, y, base = x[keep], y[keep], base[keep]
    n, n_units = int(keep.sum()), len(units(clu, int(keep.sum())))
    out = {"statistic": stat, "n": n, "n_units": n_units, "null": null, "n_boot": n_boot, "seed": seed,
           "borderline": False, "word": TESTABLE, "within": []}
    obs = _replicate(x, y, base, aut, stat, names) if n >= 2 else None
    why = _untestable(n, n_units, min_n, obs)
    every = names + ([AUTHOR] if aut is not None else [])
    out.update({"value": math.nan if obs is None else float(obs["value"]),
                "baselines": {} if obs is None else dict(zip(every, map(float, obs["bases"])))})
    if out["baselines"]:
        bv = out["baselines"]
        best = max(bv, key=lambda k: -math.inf if math.isnan(bv[k]) else bv[k])
        out.update({"baseline": best, "baseline value": out["baselines"][best],
                    "difference": float(obs["value"] - obs["best"])})
    if why:
        return {**out, "reason": why}
    reps = [_replicate(x[i], y[i], base[i], None if aut is None else aut[i], stat, names)
            for i in cluster_draws(clu, n, n_boot, seed)]
    ci = {"value": _ci_of(reps, "value", None, alpha, n_boot)}
    out.update({"lo": ci["value"]["lo"], "hi": ci["value"]["hi"]})
    bounds = {"lo": ci["value"]["lo"], "hi": ci["value"]["hi"]}
    mcs = {"lo": ci["value"]["mc_lo"], "hi": ci["value"]["mc_hi"]}
    diff, fdiff = _ci_of(reps, "value", "best", alpha, n_boot), _ci_of(reps, "value", "best format", alpha, n_boot)
    for key, c in (("diff", diff), ("fdiff", fdiff)):
        bounds.update({f"{key} lo": c["lo"], f"{key} hi": c["hi"]})
        mcs.update({f"{key} lo": c["mc_lo"], f"{key} hi": c["mc_hi"]})
    out.update({"diff lo": diff["lo"], "diff hi": diff["hi"],
                "format difference": float(obs["value"] - obs["best format"]),
                "format diff lo": fdiff["lo"], "format diff hi": fdiff["hi"]})
    if aut is not None:
        w, wd = _ci_of(reps, "within", None, alpha, n_boot), _ci_of(reps, "within", "within base", alpha, n_boot)
        bounds.update({"within lo": w["lo"], "within hi": w["hi"], "wdiff lo": wd["lo"], "wdiff hi": wd["hi"]})
        mcs.update({"within lo": w["mc_lo"], "within hi": w["mc_hi"], "wdiff lo": wd["mc_lo"], "wdiff hi": wd["mc_hi"]})
        out.update({"within value": float(obs["within"]), "within lo": w["lo"], "within hi": w["hi"],
                    "within difference": float(obs["within"] - obs["within base"]), "within diff lo": wd["lo"],
                    "within diff hi": wd["hi"]})
        out["within"] = [_per_author(g, int((aut == g).sum()), obs, reps, alpha, n_boot) for g in obs["per"]]
    if any(math.isnan(bounds[k]) for k in ("lo", "hi", "diff lo", "diff hi")):
        return {**out, "reason": "no interval: the statistic is undefined on too many resamples"}
    nan_ok = {k: (v if not math.isnan(v) else (-math.inf if k.endswith("lo") else math.inf)) for k, v in bounds.items()}
    word = _word(nan_ok, null, aut is not None, margin)
    out["word"], out["borderline"] = word, _flips(nan_ok, mcs, null, aut is not None, margin, word)
    out["p"] = _p_of(word, reps, null, margin, aut is not None)
    out["reason"] = _reason(out, word)
    return out


def _ci_of(reps, key, minus, alpha, n_boot) -> dict:
    return percentile([r[key] - (r[minus] if minus else 0.0) for r in reps], alpha, n_boot)


def _p_of(word: str, reps: list[dict], null: float, margin: float, has_author: bool) -> float:
    """The one-sided bootstrap p-value of the test that decided ``word`` (for a correction across claims): every
    condition of *tracks people* must hold, so its p is their largest; *does not track people* needs one of
    its conditions, so its p is their smallest; NaN for the words no test decided."""
    def p(key, minus, ref, side):
        return boot_p([r[key] - (r[minus] if minus else 0.0) for r in reps], ref, side)
    if word == TRACKS:
        parts = [p("value", None, null, 1), p("value", "best", 0.0, 1)]
        if has_author:
            parts += [p("within", None, null, 1), p("within", "within base", 0.0, 1)]
        return max(parts)
    if word == AUTHORSHIP:
        return max(p("value", None, null, 1), p("value", "best format", 0.0, 1))
    if word == NO_TRACK:
        return min(p("value", None, null, -1), p("value", "best", margin, -1))
    return math.nan


def _per_author(g, n_g, obs, reps, alpha, n_boot) -> dict:
    c = percentile([r["per"].get(g, math.nan) for r in reps], alpha, n_boot)
    return {"author": str(g), "n": n_g, "value": float(obs["per"][g]), "lo": c["lo"], "hi": c["hi"]}


def _untestable(n: int, n_units: int, min_n: int, obs: dict | None) -> str:
    if n < min_n:
        return f"{n} item(s), fewer than the {min_n} a verdict needs"
    if n_units < MIN_UNITS:
        return f"{n_units} independent unit(s), fewer than the {MIN_UNITS} a cluster bootstrap needs"
    if obs is None or math.isnan(obs["value"]):
        return "the measure or the human labels are constant (or one class only): no statistic"
    return ""


def _flips(bounds: dict, mcs: dict, null: float, has_author: bool, margin: float, word: str) -> bool:
    """Whether moving any decisive bound by its Monte-Carlo margin changes the word."""
    keys = [k for k in bounds if math.isfinite(bounds[k]) and math.isfinite(mcs.get(k, math.nan)) and mcs[k] > 0]
    for signs in itertools.product((-1, 1), repeat=len(keys)):
        moved = {**bounds, **{k: bounds[k] + s * mcs[k] for k, s in zip(keys, signs)}}
        if _word(moved, null, has_author, margin) != word:
            return True
    return False


def _reason(out: dict, word: str) -> str:
    f = fmt_number            # "–" for a value no resample could define: never a bare nan in a sentence
    head = (f"{out['statistic']} {f(out['value'])} [{f(out['lo'])}, {f(out['hi'])}] on {out['n']} texts "
            f"({out['n_units']} units); best baseline {out['baseline']} {f(out['baseline value'])}, lead "
            f"{f(out['difference'])} [{f(out['diff lo'])}, {f(out['diff hi'])}]")
    if "within value" in out:
        head += (f"; within authors {f(out['within value'])} [{f(out['within lo'])}, {f(out['within hi'])}], "
                 f"lead over the best format baseline there {f(out['within difference'])} "
                 f"[{f(out['within diff lo'])}, {f(out['within diff hi'])}]")
    if word == INCONCLUSIVE:
        d = smallest_detectable(out["diff lo"], out["diff hi"])
        head += f"; the smallest lead this test could detect is about {d:.2g}"
    return head
