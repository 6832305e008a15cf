"""Chapter 07's agreement table as a dot plot (issue 53), and the one line that names its degenerate settings
with links to their judgments in the item browser. Pure: the records in, a Figure or a sentence out.

The figure's dots are the agreement table's means over objects (:func:`creval.studies.aut.report.
table_agreement`, same values), each with a 95% bootstrap interval over the objects (the independent unit, as
the chapter's verdicts resample them) and n, the number of objects.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures.stats.resample import cluster_bootstrap
from creval.measures.stats.tracking import MIN_UNITS
from creval.studies.aut.report import FALLBACK, ORACLE, SETTINGS, agreement, degenerate_settings, fallback_settings
from creval.studies.contract import Records
from creval.studies.dots import dot_figure, dots_frame
from creval.studies.links import items
from creval.studies.tables import guard_module

METRICS = {"src": ("the paper's SRC (label sequences)", 0.0), "cell_rho": ("Spearman of the cell means", 0.0),
           "pair_acc": ("share of cross-level pairs in the oracle's order", 0.5)}
DEGENERATE = "degenerate setting (not read)"


def _interval(per_object: pd.Series, n_boot: int, seed: int) -> dict:
    """The mean of per-object values with its bootstrap interval over the objects (none with fewer than
    :data:`~creval.measures.stats.tracking.MIN_UNITS` objects), and n objects."""
    x = per_object.dropna().to_numpy(float)
    if len(x) < MIN_UNITS:
        return {"value": float(x.mean()) if len(x) else np.nan, "lo": np.nan, "hi": np.nan, "n": int(len(x))}
    b = cluster_bootstrap(np.mean, x, n_boot=n_boot, seed=seed)
    return {"value": float(x.mean()), "lo": b["lo"], "hi": b["hi"], "n": int(len(x))}


def shown_agreement(recs: Records) -> pd.DataFrame:
    """The long agreement rows as the table shows them: the settings measured by the log-prob fallback named
    :data:`~creval.studies.aut.report.FALLBACK` and kept once (they are one measurement)."""
    a, fb = agreement(recs), fallback_settings(recs)
    if fb and len(a):
        a = a[~a["setting"].isin(fb[1:])].assign(setting=a["setting"].where(~a["setting"].isin(fb), FALLBACK))
    return a


def agreement_dots(recs: Records) -> pd.DataFrame:
    """One dot per metric, setting and pair: the mean over objects with its interval over objects and n."""
    a, bad, cfg = shown_agreement(recs), degenerate_settings(recs), recs.cfg
    rows = []
    for (s, x, y), g in (a.groupby(["setting", "a", "b"], sort=False) if len(a) else []):
        pair = f"{'O' if x == ORACLE else x} – {y}"
        for metric, (name, _) in METRICS.items():
            est = _interval(g.set_index("object")[metric], min(cfg.n_boot, 1000), cfg.seed)
            rows.append({"panel": name, "label": f"{s} · {pair}", **est,
                         "group": DEGENERATE if s in bad else s})
    order = {s: i for i, s in enumerate([FALLBACK, *SETTINGS])}
    rows.sort(key=lambda r: order.get(r["label"].split(" · ")[0], len(order)))
    return dots_frame(rows)


def fig_agreement(recs: Records) -> go.Figure:
    """The agreement table as a dot plot: each setting and pair's mean over objects with its 95% interval over
    objects and n, one panel per metric with its chance line; degenerate settings grey."""
    dots = agreement_dots(recs)
    panels = {name: chance for name, chance in METRICS.values()}
    return dot_figure(dots, "Agreement per setting and judge pair: mean over objects, 95% interval over objects "
                            "(O = oracle)", chance=panels, x_titles={p: f"{p} (chance {c:g})" for p, c in
                                                                   panels.items()},
                      y_title="setting · pair", grey=(DEGENERATE,))


def degenerate_md(recs: Records) -> str:
    """One line naming each degenerate setting, why (with its share) and a link to its judgments in the item
    browser; empty when no setting is degenerate."""
    bad = degenerate_settings(recs)
    if not bad:
        return ""
    j = recs["judgments"]
    parts = []
    for s, why in sorted(bad.items()):
        setting, method = s.rsplit(" ", 1)
        n = int(((j["setting"] == setting) & (j["method"] == method)).sum()) if len(j) else 0
        link = items(f"its {n} judgments", "aut", "judgments", {"setting": setting, "method": method})
        parts.append(f"{s} ({why}; {link})")
    return ("**Degenerate settings, grey above and left out of the verdicts:** " + "; ".join(parts) + ".")


guard_module(globals())
