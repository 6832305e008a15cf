"""Does a measure track people, or something trivial (issues 40, 51, 57)? :func:`tracks_people` compares a
measure's agreement with human labels or scores against the strongest trivial baseline (a surface feature of
the text: length, format), chosen inside every bootstrap replicate, and, given who wrote each text, within each
author's texts.

Pooling texts by people and by models makes any measure that tells the two apart look good when people rate one
group higher. Who wrote a text is therefore never a rival *fitted on the ratings* (an author's mean rating is the
outcome, not a feature of the text); it enters as strata: the statistic is also read within each author. The
words (docs/verdicts.md), from the 95% intervals:

- *tracks people*: above chance and ahead of every surface baseline, pooled and, given authors, within them;
- *tracks authorship only*: above chance and ahead of the baselines pooled, but within authors its interval lies
  below the equivalence margin above chance (:data:`EQUIVALENCE`): it tells who wrote the text, not what people
  judged;
- *no better than* a baseline (:data:`NO_BETTER`; :func:`word_label` names it): its lead over the strongest
  baseline has an interval wholly below the margin and holding 0, pooled or within authors, whatever its own
  interval (so a measure moved toward noise never reads as less of a failure; issue 66). A lead that is neither
  shown nor shown short is *inconclusive*, the reason saying so and the smallest lead the test could detect;
- *does not track people*: its interval lies below the margin above chance, pooled and within authors (inside
  the margin around chance, or on the wrong side of it): no agreement worth the name;
- *inconclusive here* and *not testable here* otherwise.

Resampling is by independent unit (``cluster``), within strata (``group``: the prompt each text answers;
:func:`creval.measures.stats.resample.strata_draws`). The units counted are those a resample can move (a stratum
of one unit is redrawn as itself); an interval whose replicates are all equal is never read. Pure numpy.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from creval.measures.stats import prompts as PR
from creval.measures.stats.numbers import fmt_number
from creval.measures.stats.ranks import average_ranks
from creval.measures.stats.resample import boot_p, fixed_reason, movable, nested, percentile, strata_draws
from creval.measures.stats.verdicts import ENOUGH, INCONCLUSIVE, TESTABLE, smallest_detectable

TRACKS = "tracks people"
AUTHORSHIP = "tracks authorship only"
NO_BETTER = "no better than a trivial baseline"
NO_TRACK = "does not track people"
WORDS = (TRACKS, AUTHORSHIP, NO_BETTER, NO_TRACK, INCONCLUSIVE, TESTABLE)
NULL = {"spearman": 0.0, "auc": 0.5}
NAME = {"spearman": "Spearman rho", "auc": "AUROC"}
"""How the card and the plots name each statistic."""
CHANCE = {**NULL, **{NAME[k]: v for k, v in NULL.items()}, "AUC": NULL["auc"]}
"""Each statistic's chance level under any of its names: the one table every card and plot reads."""
BOUNDS = {"spearman": (-1.0, 1.0), "auc": (0.0, 1.0)}   # a statistic there in every resample is perfect, not frozen
EQUIVALENCE = {"spearman": 0.1, "auc": 0.06}
"""The margin around chance inside which an interval says "no agreement worth the name": Spearman's rho within
+-0.1 (a weak correlation by any convention), an AUROC within 0.5 +- 0.06 (a standardised gap under about 0.2,
small: chapter 06's "barely differs" uses the same). *does not track people* needs the whole 95% interval inside
it (a stricter test than the two one-sided tests' 90% interval)."""
MIN_UNITS = 5    # independent units below which no cluster bootstrap is meaningful
FEW_GROUPS = 10  # fewer prompts than this: the card says its conclusions hold for these prompts


AUTHORSHIP_WORDS = {TRACKS: "tells people's texts from a model's", NO_TRACK: "does not tell them apart",
                    NO_BETTER: "no better than a trivial baseline at telling them apart"}
"""The words of a row whose label is only who wrote the text (it answers another question than judgment)."""


def rule_word(label: str) -> str:
    """The rule's word (:data:`WORDS`) behind a word as a reader reads it (:func:`word_label`, or an authorship
    row's :data:`AUTHORSHIP_WORDS`): what a colour or a tally keys on. A word of no rule comes back as it is."""
    label = str(label or "")
    back = {v: k for k, v in AUTHORSHIP_WORDS.items()}
    if label in back:
        return back[label]
    return NO_BETTER if label.startswith("no better than") else label


def word_label(r: dict) -> str:
    """The word as a reader reads it: *no better than* names its baseline ("no better than words")."""
    word = str(r.get("word", ""))
    if word == NO_BETTER and r.get("beaten by"):
        where = " within authors" if r.get("beaten within") else ""
        return f"no better than {r['beaten by']}{where}"
    return word


def column_stats(cols: np.ndarray, y: np.ndarray, stat: str) -> np.ndarray:
    """The statistic of each column of ``cols`` (n x k) against ``y``: Spearman's rho (Pearson on average
    ranks) or the AUC of the column as a score for ``y`` = 1 (Mann-Whitney U / n_pos n_neg, ties 1/2). NaN
    for a constant column, a constant ``y`` or a single class."""
    cols = np.asarray(cols, float).reshape(len(y), -1)
    with np.errstate(all="ignore"):
        if stat == "spearman":
            both = average_ranks(np.column_stack([cols, np.asarray(y, float)]))     # one sort for the columns and y
            r, ry = both[:, :-1], both[:, -1]
            rc, yc = r - r.mean(axis=0), ry - ry.mean()
            den = np.sqrt((rc ** 2).sum(axis=0) * (yc ** 2).sum())
            return np.where(den > 0, (rc * yc[:, None]).sum(axis=0) / np.where(den > 0, den, 1), np.nan)
        if stat == "auc":
            r = average_ranks(cols)
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


CHANCE_BASELINE = "chance (no baseline varies here)"


def _best(b: np.ndarray, stat: str) -> float:
    """The strongest baseline; chance when none is defined (a feature constant on these texts orders nothing, so
    it does as well as a coin: with every baseline constant, the lead is the measure's distance from chance)."""
    return float(np.nanmax(b)) if np.isfinite(b).any() else NULL[stat]


def _replicate(x, y, base, author, stat) -> dict:
    """Every quantity of one (re)sample: the measure, each baseline (better orientation), the best baseline,
    and per author the measure and each baseline, weighted into the within-author statistic and the within
    best baseline (the strongest per author, then weighted)."""
    vals = column_stats(np.column_stack([x, base]), y, stat)
    m, b = vals[0], _strength(vals[1:], stat)
    out = {"value": m, "bases": b, "best": _best(b, stat)}
    if author is not None:
        per, wsum, wval, wbase = {}, 0.0, 0.0, 0.0
        wb = np.zeros(base.shape[1])
        for g in np.unique(author):
            at = author == g
            v = column_stats(np.column_stack([x[at], base[at]]), y[at], stat)
            per[g] = v[0]
            gb = _strength(v[1:], stat)
            if np.isfinite(v[0]):
                w = at.sum() if stat == "spearman" else (y[at] == 1).sum() * (y[at] != 1).sum()
                wsum, wval, wbase = wsum + w, wval + w * v[0], wbase + w * _best(gb, stat)
                wb += w * np.nan_to_num(gb, nan=NULL[stat])
        out["per"] = per
        out["within"] = wval / wsum if wsum else math.nan
        out["within base"] = wbase / wsum if wsum else math.nan
        out["within bases"] = wb / wsum if wsum else np.full(base.shape[1], math.nan)
    return out


def _word(b: dict, null: float, has_author: bool, margin: float) -> str:
    """The word from the bounds (``b``: lo/hi of the measure, of its lead over the best baseline, of the
    within-author statistic and of its lead over the best baseline there, and the lower bound of the strongest
    baseline's own statistic, pooled and within; missing bounds as +-inf)."""
    above, beats = b["lo"] > null, b["diff lo"] > 0
    w_above = has_author and b["within lo"] > null
    w_beats = has_author and b["wdiff lo"] > 0
    if above and beats and (not has_author or (w_above and w_beats)):
        return TRACKS
    # no agreement worth the name within authors: weighted over them, and no author's own interval above chance
    none_within = has_author and b["within hi"] < null + margin and b["author lo"] <= null
    if above and beats and none_within:
        return AUTHORSHIP
    if b["hi"] < null + margin and (not has_author or none_within):     # pooled and within: nothing to see
        return NO_TRACK
    if (_short(b, "diff", margin) and not w_beats) or (has_author and _short(b, "wdiff", margin)):
        return NO_BETTER     # the lead's interval lies below the margin: a trivial feature does as well (issue 66)
    return INCONCLUSIVE


def _short(b: dict, key: str, margin: float) -> bool:
    """Whether the lead ``key`` ("diff" pooled, "wdiff" within authors) is shown short of the margin: its whole
    interval lies below ``margin`` and it holds 0 or less (a lead that is shown above 0 is not "no better")."""
    return b[f"{key} hi"] < margin and b[f"{key} lo"] <= 0


def _beaten_by(out: dict, bounds: dict, has_author: bool, names: list[str]) -> tuple[str, bool]:
    """The baseline a *no better than* measure does not beat, and whether within authors: the pooled strongest
    when the pooled lead is shown short of the margin, else the strongest within authors."""
    if has_author and not _short(bounds, "diff", out["margin"]) and out.get("within bases") is not None:
        wb = out["within bases"]
        if np.isfinite(wb).any():
            return names[int(np.nanargmax(wb))], True
    return out.get("baseline") or "", False


def tracks_people(x, y, *, stat: str, baselines: dict[str, Sequence[float]], author: Sequence | None = None,
                  cluster: Sequence | None = None, group: Sequence | None = None, n_boot: int = 2000,
                  seed: int = 0, alpha: float = 0.05, margin: float | None = None, direction: str = "+",
                  min_n: int = ENOUGH) -> dict:
    """Whether measure ``x`` (one value per text, oriented by ``direction``: ``"+"`` higher = more of what
    people rated) tracks people's ``y`` (a score, ``stat="spearman"``; a 0/1 label, ``stat="auc"``) beyond
    every trivial baseline in ``baselines`` (name -> one value per text: surface features, never fitted on
    ``y``) and, given ``author`` (who wrote each text), within authors. ``cluster``: the independent unit
    (a writer, a model, a problem; each text when None) that the bootstrap resamples whole; ``group``: the
    prompt each text answers: the statistic is then the within-prompt one (:mod:`~creval.measures.stats.prompts`:
    each prompt's level removed, so a measure that only knows the prompt gets no credit), with ``pooled value``,
    per-prompt values (``prompts``) and their t-interval (``over prompts``); with :data:`FEW_GROUPS` or more
    prompts they are the unit, resampled whole, otherwise a stratum (units resampled within it).
    ``margin``: the equivalence margin around chance (default :data:`EQUIVALENCE`).

    Returns ``statistic, n, n_units, n_groups, value, lo, hi, baseline`` (the strongest on the data),
    ``baseline value, baselines`` (each, better orientation), ``difference, diff lo, diff hi`` (lead over
    the best baseline, chosen inside every replicate), ``within`` (per author ``{author, n, value, lo,
    hi}``), ``within value/lo/hi``, ``within difference`` and bounds, ``word`` (:data:`WORDS`), ``beaten
    by`` (the baseline a *no better than* word names), ``borderline`` (a bound's Monte-Carlo margin could
    flip the word), ``p`` (the one-sided bootstrap p of the test that decided the word) and ``reason``. Rows
    with a missing value anywhere are dropped."""
    if stat not in NULL:
        raise ValueError(f"unknown statistic {stat!r}: spearman or auc")
    null, names = NULL[stat], list(baselines)
    margin = EQUIVALENCE[stat] if margin is None else float(margin)
    sign = -1.0 if direction in ("-", -1, "negative") else 1.0
    x, y = sign * np.asarray(x, float), np.asarray(y, float)
    base = np.column_stack([np.asarray(baselines[k], float) for k in names]) if names else np.zeros((len(x), 0))
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(base).all(axis=1)
    aut = None if author is None else np.asarray(author, dtype=object)[keep].astype(str)
    clu = None if cluster is None else np.asarray(cluster, dtype=object)[keep]
    grp = None if group is None else np.asarray(group, dtype=object)[keep]
    x, y, base = x[keep], y[keep], base[keep]
    n = int(keep.sum())
    n_groups = 0 if grp is None else len(set(grp.tolist()))
    frozen = grp is not None and movable(clu, grp, n) == 0    # every prompt holds one unit: nothing within
    x, y, base, clu, strata, extra = _within_prompts(x, y, base, clu, None if frozen else grp, stat, alpha)
    n_units = 0 if frozen else movable(clu, strata, n)    # what a resample can move (a stratum of one: nothing)
    out = {"statistic": stat, "n": n, "n_units": n_units, "n_groups": n_groups, "null": null, "margin": margin,
           "n_boot": n_boot, "seed": seed, "borderline": False, "word": TESTABLE, "within": [], **extra}
    obs = _replicate(x, y, base, aut, stat) if n >= 2 else None
    why = _untestable(n, n_units, min_n, obs, n_boot)
    out.update({"value": math.nan if obs is None else float(obs["value"]),
                "baselines": {} if obs is None else dict(zip(names, map(float, obs["bases"])))})
    if obs is not None:
        bv = out["baselines"]
        best = max(bv, key=lambda k: -math.inf if math.isnan(bv[k]) else bv[k], default=None)
        if best is None or math.isnan(bv[best]):
            best = CHANCE_BASELINE
        out.update({"baseline": best, "baseline value": bv.get(best, null),
                    "difference": float(obs["value"] - obs["best"])})
    if why:
        return {**out, "reason": why}
    reps = [_replicate(x[i], y[i], base[i], None if aut is None else aut[i], stat)
            for i in strata_draws(clu, strata, n, n_boot, seed)]
    fixed = fixed_reason([r["value"] for r in reps], bounds=BOUNDS[stat])
    if fixed:                           # every replicate equal: a zero-width interval says nothing (issue 66)
        return {**out, "reason": fixed}
    ci = _ci_of(reps, "value", None, alpha, n_boot)
    diff = _ci_of(reps, "value", "best", alpha, n_boot)
    bounds = {"lo": ci["lo"], "hi": ci["hi"], "diff lo": diff["lo"], "diff hi": diff["hi"]}
    mcs = {"lo": ci["mc_lo"], "hi": ci["mc_hi"], "diff lo": diff["mc_lo"], "diff hi": diff["mc_hi"]}
    out.update({"lo": ci["lo"], "hi": ci["hi"], "diff lo": diff["lo"], "diff hi": diff["hi"]})
    if aut is not None:
        _within_authors(out, bounds, mcs, obs, reps, aut, alpha, n_boot)
    if any(math.isnan(bounds[k]) for k in ("lo", "hi", "diff lo", "diff hi")):
        out.pop("within bases", None)
        return {**out, "reason": "no interval: the statistic is undefined on too many resamples"}
    nan_ok = {k: (v if not math.isnan(v) else (-math.inf if k.endswith("lo") else math.inf)) for k, v in bounds.items()}
    word = _word(nan_ok, null, aut is not None, margin)
    out["word"], out["borderline"] = word, _flips(nan_ok, mcs, null, aut is not None, margin, word)
    out["beaten by"], out["beaten within"] = _beaten_by(out, nan_ok, aut is not None, names) \
        if word == NO_BETTER else (None, False)
    out.pop("within bases", None)
    out["p"] = _p_of(word, reps, null, margin, aut is not None)
    out["reason"] = _reason(out, word)
    return out


def _within_authors(out: dict, bounds: dict, mcs: dict, obs: dict, reps: list, aut, alpha: float, n_boot: int):
    """The within-author statistic, its lead and each author's own interval, into ``out``, with the bounds that
    decide a word (and their Monte-Carlo margins, the best author's lower bound included) into ``bounds``/``mcs``."""
    w, wd = _ci_of(reps, "within", None, alpha, n_boot), _ci_of(reps, "within", "within base", alpha, n_boot)
    bounds.update({"within lo": w["lo"], "within hi": w["hi"], "wdiff lo": wd["lo"], "wdiff hi": wd["hi"]})
    mcs.update({"within lo": w["mc_lo"], "within hi": w["mc_hi"], "wdiff lo": wd["mc_lo"], "wdiff hi": wd["mc_hi"]})
    out.update({"within value": float(obs["within"]), "within lo": w["lo"], "within hi": w["hi"],
                "within difference": float(obs["within"] - obs["within base"]), "within diff lo": wd["lo"],
                "within diff hi": wd["hi"], "within bases": obs["within bases"]})
    out["within"] = [_per_author(g, int((aut == g).sum()), obs, reps, alpha, n_boot) for g in obs["per"]]
    top = max((a for a in out["within"] if math.isfinite(a["lo"])), key=lambda a: a["lo"], default=None)
    bounds["author lo"] = top["lo"] if top else -math.inf
    mcs["author lo"] = top.pop("mc_lo") if top else math.nan      # it decides a word: its margin counts too
    for a in out["within"]:
        a.pop("mc_lo", None)


def _within_prompts(x, y, base, clu, grp, stat: str, alpha: float):
    """The within-prompt estimand (issue 63; :mod:`~creval.measures.stats.prompts`): with prompts ``grp``, each
    prompt's level removed from the measure, the baselines (and, for Spearman, the ratings), and the unit to
    resample: the prompts themselves when there are :data:`FEW_GROUPS` or more (and no unit spans two), else
    the given units within them. Returns ``x, y, base, cluster, strata`` and the row's prompt fields."""
    if grp is None or len(x) < 2:
        return x, y, base, clu, grp, {}
    extra = {"estimand": "within prompts", "pooled value": float(column_stats(x[:, None], y, stat)[0]),
             "prompts": PR.per_group(x, y, grp, lambda a, b: column_stats(a[:, None], b, stat)[0])}
    extra["over prompts"] = PR.t_interval([p["value"] for p in extra["prompts"]], alpha)
    x = PR.within_ranks(x, grp)
    base = np.column_stack([PR.within_ranks(c, grp) for c in base.T]) if base.shape[1] else base
    y = PR.within_ranks(y, grp) if stat == "spearman" else y
    if len(set(grp.tolist())) >= FEW_GROUPS and (clu is None or nested(clu, grp, len(x))):
        return x, y, base, grp, None, extra          # enough prompts: they are the unit, resampled whole
    return x, y, base, clu, grp, extra


def _ci_of(reps, key, minus, alpha, n_boot) -> dict:
    return percentile([r[key] - (r[minus] if minus else 0.0) for r in reps], alpha, n_boot)


def _p_of(word: str, reps: list[dict], null: float, margin: float, has_author: bool) -> float:
    """The one-sided bootstrap p-value of the test that decided ``word`` (for a correction across claims): every
    condition a word needs must hold, so its p is their largest (an interval inside a margin is two one-sided
    tests); NaN for the words no test decided."""
    def p(key, minus, ref, side):
        return boot_p([r[key] - (r[minus] if minus else 0.0) for r in reps], ref, side)

    def near(key):
        return p(key, None, null + margin, -1)
    if word == TRACKS:
        parts = [p("value", None, null, 1), p("value", "best", 0.0, 1)]
        if has_author:
            parts += [p("within", None, null, 1), p("within", "within base", 0.0, 1)]
        return max(parts)
    if word == AUTHORSHIP:
        return max(p("value", None, null, 1), near("within"))
    if word == NO_TRACK:
        return max([near("value")] + ([near("within")] if has_author else []))
    if word == NO_BETTER:
        return p("value", "best", margin, -1)      # the lead lies short of the margin: fails beyond the surface
    return math.nan


def _per_author(g, n_g, obs, reps, alpha, n_boot) -> dict:
    c = percentile([r["per"].get(g, math.nan) for r in reps], alpha, n_boot)
    return {"author": str(g), "n": n_g, "value": float(obs["per"][g]), "lo": c["lo"], "hi": c["hi"],
            "mc_lo": c["mc_lo"]}


def _untestable(n: int, n_units: int, min_n: int, obs: dict | None, n_boot: int) -> str:
    if n < min_n:
        return f"{n} item(s), fewer than the {min_n} a verdict needs"
    if n_units == 0:
        return fixed_reason(None, 0)
    if n_units < MIN_UNITS:
        return (f"{n_units} independent unit(s) (clusters), fewer than the {MIN_UNITS} a cluster bootstrap needs")
    if obs is None or math.isnan(obs["value"]):
        return "the measure or the human labels are constant (or one class only): no statistic"
    if n_boot < 10:
        return f"{n_boot} resamples: no interval"
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
                 f"lead over the best baseline there {f(out['within difference'])} "
                 f"[{f(out['within diff lo'])}, {f(out['within diff hi'])}]")
    if word == INCONCLUSIVE:
        d = smallest_detectable(out["diff lo"], out["diff hi"])
        if out["lo"] > out["null"]:
            head += (f"; it agrees with people above chance, but its lead over {out['baseline']} was not shown "
                     f"(nor shown short of the margin {out['margin']:g})")
        head += f"; the smallest lead this test could detect is about {d:.2g}"
    g = out.get("n_groups", 0)
    if g:
        head += f"; within prompts (each prompt's level removed; pooled {f(out.get('pooled value'))})"
    if 0 < g < FEW_GROUPS:
        t = out.get("over prompts") or {}
        head += (f"; resampled within {g} prompts: it holds for these prompts; over prompts, the mean per-prompt "
                 f"{out['statistic']} is {f(t.get('value'))} [{f(t.get('lo'))}, {f(t.get('hi'))}] "
                 f"(t, {t.get('df', 0)} df)")
    elif g:
        head += f"; {g} prompts resampled whole"
    return head
