"""Chapter 06's rows of the report card (:mod:`creval.studies.reportcard.card`): the creativity index,
templates per token and perplexity against each labelled set, Lu et al.'s claim that they fail to track people
beyond surface features. Declared as ``card=`` on the study, so the card grades whatever the study offers."""
from __future__ import annotations

import numpy as np

from creval.datasets import aut, macgyver, ttcw
from creval.studies.reportcard import card as C
from creval.studies.rethinking.config import RethinkingConfig
from creval.studies.rethinking.readers import labelled, measures, unlabelled_reason

RETHINK_SETS = (("ps", "MacGyver: unconventional vs conventional solutions", "label", "auc", False),
                ("solver", "MacGyver: crowd vs GPT-4 solutions (length-matched)", "label", "auc", False),
                ("ttcw", "TTCW: expert test passes (0-42)", "passes", "spearman", True),
                ("aut", "Ocsai-1: AUT originality ratings", "label", "spearman", False))
UNIT_OF = {"ps": macgyver.DATASET, "solver": macgyver.DATASET, "ttcw": ttcw.DATASET, "aut": aut.DATASET}
"""Each set's dataset, whose declared unit (``unit``; a ``stratum`` where it has one) every interval resamples:
a set's ``group`` column holds the problem, the plot or the object."""
BY_AUTHOR = {"solver": ("Lu et al. (Table 2): the index is higher for people's texts than for a model's", "+")}
"""Sets whose label is only who wrote the text: their rows answer whether a measure tells the two apart, stated
as the paper's own claim, and are tallied apart from the claims about human judgment."""
RETHINK_MEASURES = {"ci": ("creativity index", 1),
                    "ci_unmarked": ("creativity index, step markers stripped (formatting control)", 1),
                    "tpt": ("templates per token (negated)", -1), "ppl": ("perplexity", 1)}
STORED = {"ppl": "perplexity", "ci_unmarked": "formatting"}    # measures read from a table of their own, per set
PAPER_FIGURES = {("ps", "ci"): "CI 0.76 vs 0.75 (means; Table 2)", ("ps", "tpt"): "template rate 38.7% vs 31.9%",
                 ("ps", "ppl"): "PPL 13.98 vs 14.11"}


def rethinking_baselines(m) -> dict[str, np.ndarray]:
    """Length as stored (before any cut) and as cut to the pair's shorter text, step markers, line count and
    list lines: the trivial features of chapter 06's texts."""
    cut = m["n_words"].astype(float).to_numpy()
    full = m["full_words"].astype(float).to_numpy() if "full_words" in m else np.full(len(m), np.nan)
    stored = np.where(np.isfinite(full), full, cut)
    out = {"length as stored (words)": stored}
    if np.any(stored != cut):
        out["length as cut (words)"] = cut
    if "marked" in m and m["marked"].notna().all():
        out["step markers"] = m["marked"].astype(float).to_numpy()
    return {**out, **C.format_baselines(m["text"])}


def source_of(ts: str, col: str) -> tuple[str, str, dict]:
    """The records a measure's row counts: its own table filtered on the set (perplexity, the formatting
    control), else the set's ``measures_<set>``."""
    return (RethinkingConfig.study, STORED[col], {"set": ts}) if col in STORED else \
        (RethinkingConfig.study, f"measures_{ts}", {})


def rethinking_rows(recs, n_boot: int, seed: int) -> list[dict]:
    """Creativity index, templates and perplexity against each labelled set of chapter 06, every surface
    baseline, the writer as the author (strata) on TTCW; the crowd vs GPT-4 index is followed by its formatting
    control."""
    rows = []
    for ts, data, label, stat, by_writer in RETHINK_SETS:
        m = measures(recs, ts)
        if m.empty or label not in m:
            continue
        sample = "" if labelled(recs, ts) else f"not real labels: {unlabelled_reason(recs, ts)}"
        y, base = m[label].astype(float), rethinking_baselines(m)
        author = m["kind"].astype(str).to_numpy() if by_writer and "kind" in m else None
        where = m["group"].astype(str).to_numpy()
        strat = bool(UNIT_OF[ts].stratum)            # the group is a stratum (the object), the unit each text
        for col, (name, sign) in RETHINK_MEASURES.items():
            if col == "ci_unmarked" and ts != "solver":
                continue
            if col in m and m[col].notna().sum() >= 2:
                rows.append(C.graded(C.LU_R, name, data, sign * m[col].astype(float), base, y, stat, n_boot, seed,
                                   author=author, cluster=None if strat else where,
                                   group=where if strat else None, label_is_author=ts in BY_AUTHOR,
                                   claim=BY_AUTHOR.get(ts), question=C.CONTROL if col == "ci_unmarked" else None,
                                   paper_figure=PAPER_FIGURES.get((ts, col), ""), note=sample,
                                   degenerate=sample or None, units="text", source=source_of(ts, col)))
    return rows
