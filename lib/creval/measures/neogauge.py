"""NeoGauge and the other NeoCoder metrics (Lu et al., NAACL 2025, section 3): pure functions.

Notation for a state t: D_t = the problems reaching state t; for problem i, ``detected`` = the techniques found
in the model's solution (a list: duplicates count, as in the paper's code), ``banned`` = the constraint set C_t
(empty at state 0), ``humans`` = the union of the technique lists of problem i's human solutions.

- follow_i = 1[set(detected) & banned is empty]                                  (:func:`follows`)
- novelty_i = |set(detected) - humans| / len(detected), 0 when nothing is detected (:func:`novelty`)
- pass@1(t) = mean correct_i (one sample; Table 2's 1 - (n-c)/n with n = 1)
- constraint following(t) = mean follow_i
- convergent(t) = mean follow_i * correct_i                                         (Eq. 2)
- divergent(t) = mean novelty_i (not gated by correctness)                           (Eq. 3)
- NeoGauge@t = mean follow_i * correct_i * novelty_i    (Eq. 4 as printed omits correct_i; the paper's text,
  section 5.3 and code include it, and so do we)
- cumulative NeoGauge@t = sum of NeoGauge@s for s <= t. The paper never defines it (Fig. 4 right calls it the
  "maximum creativity performance boundary"); the running sum is OUR CHOICE, labelled as such.
- human convergent(t) (Eq. 5) = share of all human solutions of the problems in D_t whose techniques avoid C_t
- human divergent (Eq. 6) = mean over all human solutions j of |T_j - union_{k != j} T_k| / len(T_j), within
  each problem (leave-one-out; the paper's "divergent(human, t = 0)").
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from creval.measures.stats.correlation import bootstrap_ci


def follows(detected: Iterable[str], banned: Iterable[str]) -> bool:
    return not (set(detected) & set(banned))


def novelty(detected: Sequence[str], humans: Iterable[str]) -> float:
    detected = list(detected)
    if not detected:
        return 0.0
    return len(set(detected) - set(humans)) / len(detected)


def _mean(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.mean()) if x.size else float("nan")


def pass_at_1(correct) -> float:
    return _mean(correct)


def constraint_following(follow) -> float:
    return _mean(follow)


def convergent(follow, correct) -> float:
    return _mean(np.asarray(follow, float) * np.asarray(correct, float))


def divergent(nov) -> float:
    return _mean(nov)


def neogauge(follow, correct, nov) -> float:
    return _mean(np.asarray(follow, float) * np.asarray(correct, float) * np.asarray(nov, float))


def cumulative(values_by_state: Sequence[float]) -> list[float]:
    """Running sum over states (our definition of cumulative NeoGauge; NaN states count as 0)."""
    out, s = [], 0.0
    for v in values_by_state:
        s += 0.0 if v != v else v
        out.append(s)
    return out


def human_convergent(human_lists_by_problem: Sequence[Sequence[Sequence[str]]],
                     banned_by_problem: Sequence[Iterable[str]]) -> float:
    """Eq. 5: over the given problems (those of D_t with human solutions), the share of all their human
    solutions whose technique lists avoid the problem's banned set."""
    num = den = 0
    for lists, banned in zip(human_lists_by_problem, banned_by_problem):
        for t in lists:
            den += 1
            num += follows(t, banned)
    return num / den if den else float("nan")


def human_loo_novelty(lists: Sequence[Sequence[str]]) -> list[float]:
    """Leave-one-out novelty of each human solution of ONE problem (the terms of Eq. 6)."""
    out = []
    for j, t in enumerate(lists):
        rest = set().union(*[set(x) for k, x in enumerate(lists) if k != j]) if len(lists) > 1 else set()
        out.append(novelty(t, rest))
    return out


def human_divergent(human_lists_by_problem: Sequence[Sequence[Sequence[str]]]) -> float:
    """Eq. 6: mean leave-one-out novelty over all human solutions of all problems."""
    vals = [v for lists in human_lists_by_problem for v in human_loo_novelty(lists)]
    return _mean(vals)


def state_metrics(correct, follow, nov, creative_mask=None, n_boot: int = 1000, seed: int = 0,
                  ci: bool = True) -> dict:
    """All per-state numbers of Table 3 from per-problem arrays of one state (each with a 95% bootstrap
    interval over problems). ``creative_mask`` selects the problems counted in convergent, divergent and
    NeoGauge (the paper drops problems without human solutions there, 1773F, but keeps them in pass@1 and
    constraint following)."""
    c = np.asarray(correct, float)
    f = np.asarray(follow, float)
    v = np.asarray(nov, float)
    m = np.ones(len(c), bool) if creative_mask is None else np.asarray(creative_mask, bool)
    out = {"n": int(len(c)), "n_creative": int(m.sum()),
           "pass@1": pass_at_1(c), "constraint following": constraint_following(f),
           "convergent": convergent(f[m], c[m]), "divergent": divergent(v[m]), "NeoGauge": neogauge(f[m], c[m], v[m])}
    if ci:
        out["pass@1 CI"] = bootstrap_ci(pass_at_1, c, n_boot=n_boot, seed=seed)
        out["constraint following CI"] = bootstrap_ci(constraint_following, f, n_boot=n_boot, seed=seed)
        out["convergent CI"] = bootstrap_ci(convergent, f[m], c[m], n_boot=n_boot, seed=seed)
        out["divergent CI"] = bootstrap_ci(divergent, v[m], n_boot=n_boot, seed=seed)
        out["NeoGauge CI"] = bootstrap_ci(neogauge, f[m], c[m], v[m], n_boot=n_boot, seed=seed)
    return out
