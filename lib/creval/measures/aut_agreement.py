"""Agreement between creativity judges on Alternative Uses Test responses (Rabeyah et al. 2024).

The paper's metric (its "SRC", Tables 2-11, Fig. 7) is reproduced exactly as it was computed: every value
it prints is a multiple of 1/8 because it is a Spearman correlation between two *sequences of level
labels*, not between scores. For one judge and object the 12 (generator, level) cells get the mean of
their 5 uses' values (score, or rank turned into "higher = more creative"); the cells are sorted by that
mean, most creative first, and each position is replaced by its cell's level code (3 = highly creative,
2 = creative, 1 = common). The oracle sequence is the level codes sorted descending (Eq. 1:
``[3,3,3,3,2,2,2,2,1,1,1,1]``). Judge vs oracle = Spearman(judge sequence, oracle sequence); judge vs
judge = Spearman between the two judges' sequences (so it ignores *which* generator sits where).
One adjacent swap across the hc/c boundary gives 0.875, two boundary-crossing swaps 0.75 (a swap inside a
level changes nothing), a hc/common swap 0.5. Cells without a value (nothing parsed) go last as one tied
block: an unparsed highly creative cell is penalised, an unparsed common one rewarded (the chapter counts them).

Ties between cell means (the paper does not say what it did; a weak judge gives every cell the same
mean) are handled as the expected value over random tie-breaking: inside a block of equal means the
rank values of the labels are replaced by the block's mean in the covariance, the denominator keeps the
variance of the untied label ranks. Without ties this is the plain Spearman; when every cell is tied it
is 0 (no information), never a spurious 1.

Finer measures beside it: :func:`cell_rho` (Spearman of the cell means, generator order included),
:func:`pair_accuracy` (share of cross-level use pairs ordered as the oracle), :func:`self_preference`
(judge-leniency- and quality-free self-preference, with a bootstrap CI) and :func:`position_bias`.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from creval.measures.stats.ranks import average_ranks
from creval.measures.stats.resample import boot_rng, mc_margin

LEVELS = ("common", "creative", "highly_creative")
LEVEL_CODE = {lvl: i + 1 for i, lvl in enumerate(LEVELS)}


def label_blocks(cell_values: Mapping, cell_labels: Mapping, decimals: int = 9) -> list[list[int]]:
    """The judge's label sequence, most creative first, as blocks of tied cells.

    ``cell_values``: cell -> mean value (higher = more creative); ``cell_labels``: cell -> level code.
    Cells whose value is NaN (nothing parsed) form one tied block at the end. Values equal after
    rounding to ``decimals`` are ties."""
    cells = list(cell_values)
    vals = {c: float(cell_values[c]) for c in cells}
    finite = sorted({round(v, decimals) for v in vals.values() if np.isfinite(v)}, reverse=True)
    blocks = [[int(cell_labels[c]) for c in cells if np.isfinite(vals[c]) and round(vals[c], decimals) == v]
              for v in finite]
    nan = [int(cell_labels[c]) for c in cells if not np.isfinite(vals[c])]
    return blocks + ([nan] if nan else [])


def oracle_blocks(labels: Sequence[int]) -> list[list[int]]:
    """The oracle's sequence (Eq. 1): the labels sorted descending, one position per block."""
    return [[int(x)] for x in sorted(labels, reverse=True)]


def paper_src(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> float:
    """The paper's SRC between two label sequences given as blocks of ties (:func:`label_blocks`).

    Plain sequences (``[3, 3, 2, ...]``) are accepted too (each label its own block). Both sequences must
    hold the same multiset of labels. Returns the expected Spearman over random orders inside the blocks;
    NaN when all labels are equal."""
    ba = [list(x) if isinstance(x, (list, tuple)) else [x] for x in a]
    bb = [list(x) if isinstance(x, (list, tuple)) else [x] for x in b]
    la = [v for blk in ba for v in blk]
    lb = [v for blk in bb for v in blk]
    if sorted(la) != sorted(lb):
        raise ValueError(f"the two sequences hold different labels: {sorted(la)} vs {sorted(lb)}")
    if len(set(la)) < 2:
        return float("nan")
    labels = sorted(set(la))
    ranks = average_ranks(la)
    r = {lab: float(np.mean([ranks[i] for i, v in enumerate(la) if v == lab])) for lab in labels}

    def expected(blocks):
        out = []
        for blk in blocks:
            m = float(np.mean([r[v] for v in blk]))
            out += [m] * len(blk)
        return np.asarray(out)

    x, y = expected(ba), expected(bb)
    full = np.asarray([r[v] for v in la])
    var = float(((full - full.mean()) ** 2).sum())
    return float(((x - x.mean()) * (y - y.mean())).sum() / var)


def cell_sequences(values: Mapping, labels: Mapping) -> tuple[list[list[int]], list[list[int]]]:
    """``(judge blocks, oracle blocks)`` for one judge's cell means."""
    return label_blocks(values, labels), oracle_blocks([labels[c] for c in values])


def oracle_src(values: Mapping, labels: Mapping) -> float:
    """Paper SRC of one judge's cell means against the oracle (Eq. 1)."""
    j, o = cell_sequences(values, labels)
    return paper_src(j, o)


def judge_src(values_a: Mapping, values_b: Mapping, labels: Mapping) -> float:
    """Paper SRC between two judges (their sorted label sequences; generator identity ignored)."""
    cells = [c for c in values_a if c in values_b]
    return paper_src(label_blocks({c: values_a[c] for c in cells}, labels),
                     label_blocks({c: values_b[c] for c in cells}, labels))


def cell_rho(values_a: Mapping, values_b: Mapping) -> float:
    """Spearman of the cell means of two judges (or a judge and the oracle's level codes): unlike the
    paper's SRC it counts which generator's cell is where. NaN when either side is constant."""
    from scipy.stats import spearmanr
    cells = [c for c in values_a if c in values_b]
    x = np.asarray([values_a[c] for c in cells], float)
    y = np.asarray([values_b[c] for c in cells], float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        return float("nan")
    return float(spearmanr(x[keep], y[keep]).statistic)


def pair_accuracy(values: Sequence[float], levels: Sequence[int]) -> float:
    """Share of pairs of uses from different levels that the judge orders as the oracle does (higher level,
    higher value); a tie counts 1/2. NaN values are left out; NaN when no cross-level pair remains."""
    v = np.asarray(values, float)
    lv = np.asarray(levels, float)
    keep = np.isfinite(v)
    v, lv = v[keep], lv[keep]
    dl = np.sign(lv[:, None] - lv[None, :])
    dv = np.sign(v[:, None] - v[None, :])
    mask = dl > 0
    if not mask.any():
        return float("nan")
    return float(((dv[mask] > 0) + 0.5 * (dv[mask] == 0)).mean())


def self_preference(df, judge_col: str = "judge", gen_col: str = "generator", item_col: str = "au_id",
                    value_col: str = "value", cluster_col: str | None = "object", n_boot: int = 1000,
                    seed: int = 0) -> list[dict]:
    """Self-preference of each judge that is also a generator, free of use quality and judge leniency.

    For use ``a`` judged by ``j``: ``d_j(a) = value_j(a) - mean of the other judges' values on a`` (removes
    the use's quality); ``SP_j = mean d_j over j's own uses - mean d_j over the other generators' uses``
    (removes j's leniency). Positive = j favours its own uses. CI: percentile bootstrap over clusters
    (objects) when there are several, else over uses. Needs >= 2 judges and >= 2 generators; returns
    one row per judge ``{judge, sp, lo, hi, n_own, n_other, note, mc_lo, mc_hi}`` (the bounds' Monte-Carlo
    margins, :func:`~creval.measures.stats.resample.mc_margin`)."""
    import pandas as pd
    keys = [judge_col, gen_col, item_col] + ([cluster_col] if cluster_col else [])
    d = df[keys + [value_col]].dropna(subset=[value_col])
    d = d.groupby(keys, as_index=False)[value_col].mean()
    judges = sorted(d[judge_col].unique())
    gens = set(d[gen_col].unique())
    out = []
    for j in judges:
        row = {"judge": j, "sp": float("nan"), "lo": float("nan"), "hi": float("nan"), "n_own": 0, "n_other": 0,
               "note": "", "mc_lo": float("nan"), "mc_hi": float("nan")}
        if j not in gens or len(gens) < 2 or len(judges) < 2:
            row["note"] = "needs the judge among >= 2 generators and >= 2 judges"
            out.append(row)
            continue
        wide = d.pivot_table(index=[item_col, gen_col] + ([cluster_col] if cluster_col else []), columns=judge_col,
                             values=value_col)
        others = [k for k in judges if k != j]
        sub = wide.dropna(subset=[j]).copy()
        sub["other_mean"] = sub[others].mean(axis=1)
        sub = sub.dropna(subset=["other_mean"]).reset_index()
        sub["d"] = sub[j] - sub["other_mean"]
        sub["own"] = sub[gen_col] == j
        row["n_own"], row["n_other"] = int(sub["own"].sum()), int((~sub["own"]).sum())
        if row["n_own"] == 0 or row["n_other"] == 0:
            row["note"] = "no own or no other uses judged"
            out.append(row)
            continue

        def stat(frame):
            own, oth = frame.loc[frame["own"], "d"], frame.loc[~frame["own"], "d"]
            return float(own.mean() - oth.mean()) if len(own) and len(oth) else float("nan")

        row["sp"] = stat(sub)
        rng = boot_rng(seed)
        groups = [g for _, g in sub.groupby(cluster_col)] if cluster_col and sub[cluster_col].nunique() > 1 else None
        reps = []
        for _ in range(n_boot):
            if groups:
                pick = rng.integers(0, len(groups), len(groups))
                frame = pd.concat([groups[i] for i in pick])
            else:
                frame = sub.iloc[rng.integers(0, len(sub), len(sub))]
            v = stat(frame)
            if np.isfinite(v):
                reps.append(v)
        if len(reps) >= 10:
            row["lo"], row["hi"] = (float(q) for q in np.quantile(reps, [0.025, 0.975]))
            row["mc_lo"], row["mc_hi"] = mc_margin(reps, 0.025), mc_margin(reps, 0.975)
        out.append(row)
    return out


def position_bias(positions: Sequence[float], values: Sequence[float]) -> float:
    """Spearman(position shown, value given): 0 = no position effect; a judge that ranks in presentation
    order gives -1 (earlier = more creative), one that scores later items higher > 0. NaN if degenerate."""
    from scipy.stats import spearmanr
    p, v = np.asarray(positions, float), np.asarray(values, float)
    keep = np.isfinite(p) & np.isfinite(v)
    if keep.sum() < 3 or np.ptp(p[keep]) == 0 or np.ptp(v[keep]) == 0:
        return float("nan")
    return float(spearmanr(p[keep], v[keep]).statistic)


def rank_value(rank: float, n: int) -> float:
    """A rank (1 = most creative of ``n``) as a value in [0, 1], higher = more creative."""
    return 1.0 - (float(rank) - 1.0) / (n - 1) if n > 1 else 0.5


def krippendorff_interval(matrix) -> float:
    """Krippendorff's alpha for interval data; ``matrix``: raters x units with NaN for missing.

    alpha = 1 - D_o / D_e over pairable values (units with >= 2 values). NaN when fewer than 2 pairable
    units or no variation."""
    m = np.asarray(matrix, float)
    units = [m[:, u][np.isfinite(m[:, u])] for u in range(m.shape[1])]
    units = [u for u in units if u.size >= 2]
    if len(units) < 2:
        return float("nan")
    n = sum(u.size for u in units)
    do = sum(((u[:, None] - u[None, :]) ** 2).sum() / (u.size - 1) for u in units) / n
    allv = np.concatenate(units)
    de = ((allv[:, None] - allv[None, :]) ** 2).sum() / (n * (n - 1))
    return float(1 - do / de) if de > 0 else float("nan")
