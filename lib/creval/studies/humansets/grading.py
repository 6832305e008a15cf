"""The card's rows of the human sets (issue 63): every cheap measure against each criterion nearest to creativity
(HANNA Surprise and Complexity, SLM creativity), beside length and format baselines, within prompts (the
within-prompt estimand, prompts resampled whole), within each writer (people and each model), the raters named
and their own agreement (each held out against the others, within prompts) drawn as the ceiling. Declared as
``card=`` on the study; each claim stated by its claimant (:func:`creval.studies.card.claimant`)."""
from __future__ import annotations

import math

from creval.measures import pertext as P
from creval.studies import card as C
from creval.studies.humansets.config import HumansetsConfig
from creval.studies.humansets.run import JUDGE, KIND
from creval.studies.humansets.sets import SETS


def set_rows(recs, name: str, n_boot: int, seed: int) -> list[dict]:
    """One card row per cheap measure and creative criterion of the set ``name``."""
    t, info = recs["texts"], recs["sets"]
    t = t[t["set"] == name] if len(t) and "set" in t else t.iloc[0:0]
    hs = SETS.get(name)
    if t.empty or hs is None or not {"author", "prompt"} <= set(t.columns):
        return []
    info = info[info["set"] == name] if len(info) and "set" in info else info.iloc[0:0]
    info = info.iloc[0].to_dict() if len(info) else {}
    sample = "" if not info.get("sample") else f"not real ratings: {info.get('why', 'the bundled sample')}"
    base = {k: t[k].astype(float).to_numpy() for k in P.BASELINES if k in t}
    ceilings = recs["ceilings"]
    rows = []
    targets = [(crit, col, col.partition(KIND)[2]) for crit in hs.creative if crit.column in t
               for col in [crit.column, *sorted(c for c in t.columns if c.startswith(crit.column + KIND))]]
    for crit, col, kind in targets:          # each criterion over every rater, then over each kind of rater alone
        y = t[col].astype(float).to_numpy()
        cut = ceilings[(ceilings["set"] == name) & (ceilings["criterion"] == col)] \
            if len(ceilings) and {"set", "criterion"} <= set(ceilings.columns) else None
        ceiling, how = ceiling_of(cut)
        data = f"{hs.short}: {crit.label} ({crit.lo:g}-{crit.hi:g}, {kind + ' ' if kind else ''}raters' mean)"
        raters = (f"{kind} raters only ({int(cut['n_raters'].iloc[0])} with 5 or more texts)"
                  if kind and cut is not None and len(cut) else str(info.get("raters", "")) or None)
        note = "; ".join(s for s in (sample, f"raters' ceiling: one rater against the others' mean, {how}, "
                                             f"{ceiling:.2f}" if ceiling is not None else "") if s)
        graded = [(C.BOOK, f"LLM judge {col[len(JUDGE):].rsplit(':', 1)[0]} (mean of its prompt variants)",
                   t[col].astype(float))            # a released LLM judge's own score of this criterion
                  for col in t.columns if col.startswith(JUDGE) and col.endswith(f":{crit.column}")]
        graded += [(C.claimant(m), P.DESCRIBE.get(m, m), P.oriented(m, t[m])) for m in measure_columns(t)]
        rows += [C.graded(paper, measure, data, x, base, y, "spearman", n_boot, seed,
                          author=t["author"].astype(str).to_numpy(), group=t["prompt"].astype(str).to_numpy(),
                          note=note, degenerate=sample or None, units="text",
                          source=(HumansetsConfig.study, "texts", {"set": name}),
                          raters=raters, ceiling=ceiling)
                 for paper, measure, x in graded]
    return rows


def ceiling_of(cut) -> tuple[float | None, str]:
    """The raters' ceiling of one set and criterion (a ``ceilings`` row) and how it was read: within prompts, as
    the card's rows are; pooled where no rater scored two texts of one prompt (SLM's readers saw one synopsis of a
    title), said so."""
    if cut is None or not len(cut):
        return None, ""
    within, pooled = (float(cut[k].iloc[0]) if k in cut else math.nan for k in ("agreement", "pooled"))
    if math.isfinite(within):
        return within, "within prompts"
    return (pooled, "pooled (no rater scored two texts of one prompt)") if math.isfinite(pooled) else (None, "")


def measure_columns(t) -> list[str]:
    """The measure columns of the ``texts`` table (every cheap measure the run computed, baselines aside)."""
    return [c for c in P.DESCRIBE if c in t and c not in P.BASELINES and t[c].notna().sum() >= 2]


def card_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Every set's rows, in the order the sets are declared."""
    return [r for name in SETS for r in set_rows(recs, name, n_boot, seed)]
