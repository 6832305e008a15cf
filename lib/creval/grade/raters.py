"""Per-rater input for ``creval grade`` (issue 63): a long file, one row per text and rater, with ``--rater COL``
(and optionally ``--rater-kind COL``: expert, lay, crowd). The texts are graded against the mean of their raters,
and every row says whose judgment that is; each rater is held out in turn and read against the mean of the
others (the leave-one-rater-out ceiling), so a reader sees how far one more person would agree, and whether a
measure agrees with the others better than a held-out rater does.

Pure: rows in, arrays and dicts out; every problem is one :class:`CrevalError` naming the file and the row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

from creval.core.errors import CrevalError
from creval.core.table import TextTable
from creval.measures.stats import correlation as corr
from creval.measures.stats.prompts import within_ranks


@dataclass
class Ratings:
    """A long file folded per text: ``texts`` (one row per text, its first row's fields), ``matrix`` (texts x
    raters, NaN where a rater did not score a text), ``raters`` and each one's ``kinds`` (None when not given)."""
    texts: TextTable
    matrix: np.ndarray
    raters: list[str]
    kinds: dict[str, str] | None

    def mean(self, kind: str | None = None) -> np.ndarray:
        """Each text's mean score over its raters (of ``kind`` only, NaN where none of that kind rated it)."""
        cols = [j for j, r in enumerate(self.raters) if kind is None or (self.kinds or {}).get(r) == kind]
        with np.errstate(all="ignore"):
            return np.nanmean(self.matrix[:, cols], axis=1) if cols else np.full(len(self.matrix), np.nan)

    def who(self, kind: str | None = None) -> str:
        """Whose judgment: "3 raters (2 expert, 1 lay)" (of ``kind`` only when given)."""
        rs = [r for r in self.raters if kind is None or (self.kinds or {}).get(r) == kind]
        if not self.kinds:
            return f"{len(rs)} raters (kind not given)"
        counts: dict[str, int] = {}
        for r in rs:
            counts[self.kinds[r]] = counts.get(self.kinds[r], 0) + 1
        return f"{len(rs)} raters (" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + ")"


def fold(table: TextTable, score: str, rater: str, kind: str | None = None) -> Ratings:
    """The long ``table`` (its ids repeat, one row per rater) folded per text. Errors, each one sentence naming the
    file: a missing column, a score that is not a finite number, a text id with two different texts, a rater with
    a second score for one text, a rater with one score, a text with one rater, a rater with two kinds."""
    scores, names = table.numbers(score), [str(r) for r in table.column(rater)]
    kinds_col = [str(k) for k in table.column(kind)] if kind else None
    p = table.path
    order: dict[str, int] = {}
    first_row: list[int] = []
    for i, (k, t) in enumerate(zip(table.ids, table.texts)):
        if k not in order:
            order[k] = len(order)
            first_row.append(i)
        elif t != table.texts[first_row[order[k]]]:
            raise CrevalError(f"{p}: text id {k!r} has two different texts (rows {first_row[order[k]] + 1} and "
                              f"{i + 1})", "give each text one id, the same text on every row of its raters")
    raters = list(dict.fromkeys(names))
    col = {r: j for j, r in enumerate(raters)}
    m = np.full((len(order), len(raters)), np.nan)
    kinds: dict[str, str] = {}
    for i, (k, r, s) in enumerate(zip(table.ids, names, scores)):
        if not math.isnan(m[order[k], col[r]]):
            raise CrevalError(f"{p}: rater {r!r} scores text {k!r} twice (row {i + 1})",
                              "keep one score per text and rater")
        m[order[k], col[r]] = s
        if kinds_col is not None:
            if kinds.setdefault(r, kinds_col[i]) != kinds_col[i]:
                raise CrevalError(f"{p}: rater {r!r} is {kinds[r]!r} and {kinds_col[i]!r} (row {i + 1})",
                                  f"give each rater one kind in column {kind!r}")
    per_rater = np.isfinite(m).sum(axis=0)
    if (per_rater < 2).any():
        r = raters[int(np.argmin(per_rater))]
        raise CrevalError(f"{p}: rater {r!r} has one score: held out, one score agrees with nothing",
                          "drop that rater's row, or give each rater two or more texts")
    per_text = np.isfinite(m).sum(axis=1)
    if (per_text < 2).any():
        k = list(order)[int(np.argmin(per_text))]
        raise CrevalError(f"{p}: text {k!r} has one rater: the leave-one-rater-out ceiling needs two per text",
                          "give every text two or more raters, or grade the mean in one column without --rater")
    texts = TextTable(p, list(order), [table.texts[i] for i in first_row], [table.rows[i] for i in first_row],
                      table.text_column, table.id_column)
    return Ratings(texts, m, raters, kinds if kind else None)


def held_out(m: np.ndarray, j: int, x: np.ndarray | None = None) -> dict:
    """Rater ``j`` held out: Spearman of its scores with the mean of the other raters on the texts it scored
    (``rater``), and, given a measure ``x``, the measure's Spearman with that same mean on the same texts
    (``measure``); ``n`` texts."""
    with np.errstate(all="ignore"):
        rest = np.nanmean(np.delete(m, j, axis=1), axis=1)
    ok = np.isfinite(m[:, j]) & np.isfinite(rest) & (np.ones(len(m), bool) if x is None else np.isfinite(x))
    out = {"n": int(ok.sum()), "rater": corr.spearman(m[ok, j], rest[ok])["rho"] if ok.sum() >= 3 else math.nan}
    if x is not None:
        out["measure"] = corr.spearman(x[ok], rest[ok])["rho"] if ok.sum() >= 3 else math.nan
    return out


def ceiling(r: Ratings) -> list[dict]:
    """One row per rater: ``rater, kind, n, agreement`` (held out, against the mean of the others)."""
    out = []
    for j, name in enumerate(r.raters):
        h = held_out(r.matrix, j)
        out.append({"rater": name, "kind": (r.kinds or {}).get(name), "n": h["n"], "agreement": h["rater"]})
    return out


def against_raters(r: Ratings, x) -> dict:
    """How a measure ``x`` (one value per text) stands to the held-out raters: for each rater, its Spearman with
    the mean of the others beside that rater's own; ``beats`` how many held-out raters it equals or passes, of
    ``of`` raters with both values, and the mean ceiling (``ceiling``)."""
    x = np.asarray(x, float)
    rows = [held_out(r.matrix, j, x) for j in range(len(r.raters))]
    both = [h for h in rows if math.isfinite(h["rater"]) and math.isfinite(h["measure"])]
    return {"beats": sum(h["measure"] >= h["rater"] for h in both), "of": len(both),
            "ceiling": float(np.mean([h["rater"] for h in both])) if both else math.nan,
            "measure_vs_others": float(np.mean([h["measure"] for h in both])) if both else math.nan}


MIN_TEXTS = corr.MIN_N
"""A person counts in the held-out agreement only on this many texts or more (fewer give no Spearman)."""


def _rho(x: np.ndarray, ref: np.ndarray, g) -> np.ndarray:
    """Spearman of each column of ``x`` with ``ref`` (within prompts when ``g`` is given): ranks, then Pearson."""
    if g is not None:
        x = np.column_stack([within_ranks(x[:, c], g) for c in range(x.shape[1])])
        ref = within_ranks(ref, g)
    r = st.rankdata(np.column_stack([x, ref]), axis=0)
    with np.errstate(all="ignore"):
        c = np.corrcoef(r, rowvar=False)[-1, :-1]
    return np.where(np.isfinite(c), c, np.nan)


def matched(m: np.ndarray, people: list[int], group=None, idx: np.ndarray | None = None,
            min_texts: int = MIN_TEXTS) -> np.ndarray:
    """Every rater's agreement with the people on one footing, each person held out in turn: on the texts person
    p scored, every rater (p itself, every judge, the other people) against the mean of the people other than p
    (and other than the rater itself when it is a person); then the mean over p, weighted by p's texts. For a
    person it is the usual held-out agreement; a judge is read against the very same references, so its value
    and the people's ceiling (:func:`ceiling_of`) compare pair for pair. ``idx``: the rows of a resample."""
    m = m if idx is None else m[idx]
    g = None if group is None else np.asarray(group, dtype=object)
    g = g if g is None or idx is None else g[idx]
    sums, weights = np.zeros(m.shape[1]), np.zeros(m.shape[1])
    for p in people:
        rows = np.isfinite(m[:, p])
        if rows.sum() < min_texts:
            continue
        others = [q for q in people if q != p]
        with np.errstate(all="ignore"):
            ref = np.nanmean(m[np.ix_(rows, others)], axis=1) if others else np.full(rows.sum(), np.nan)
        cols = [j for j in range(m.shape[1]) if j == p or j not in people]      # p itself and every judge
        block, gp = m[np.ix_(rows, cols)], None if g is None else g[rows]
        has = np.isfinite(ref)
        ok = has & np.isfinite(block).all(axis=1)
        if ok.sum() == has.sum():                        # every rater scored every text: one pass
            parts = [(cols, ok, _rho(block[ok], ref[ok], None if gp is None else gp[ok]))] if ok.sum() >= min_texts \
                else []
        else:                                            # a judge left some texts unscored: each on its own texts
            parts = []
            for c, j in enumerate(cols):
                okc = has & np.isfinite(block[:, c])
                if okc.sum() >= min_texts:
                    parts.append(([j], okc, _rho(block[okc][:, [c]], ref[okc], None if gp is None else gp[okc])))
        for js, used, rho in parts:
            for j, v in zip(js, rho):
                if np.isfinite(v):
                    sums[j] += v * used.sum()
                    weights[j] += used.sum()
    with np.errstate(all="ignore"):
        return np.where(weights > 0, sums / weights, np.nan)


def ceiling_of(values: np.ndarray, m: np.ndarray, people: list[int], min_texts: int = MIN_TEXTS) -> float:
    """The people's ceiling: their matched agreements (:func:`matched`) averaged, weighted by their texts."""
    w = np.array([np.isfinite(m[:, p]).sum() for p in people], float)
    v = np.asarray(values, float)[people]
    ok = np.isfinite(v) & (w >= min_texts)
    return float(np.average(v[ok], weights=w[ok])) if ok.any() else math.nan


def ceiling_within(m: np.ndarray, group=None, min_texts: int = corr.MIN_N) -> dict:
    """The raters' own agreement on one criterion (every column of ``m`` a person): each rater held out against the
    mean of the others on the texts it rated, Spearman's rho within prompts (``group``; pooled when None), averaged
    over raters with at least ``min_texts`` texts, weighted by their texts (:func:`matched`, :func:`ceiling_of`):
    what one more rater scores against the rest, on the card's own estimand. ``{agreement, n_raters}``."""
    people = list(range(m.shape[1]))
    values = matched(m, people, group, min_texts=min_texts)
    counted = [p for p in people if math.isfinite(values[p]) and np.isfinite(m[:, p]).sum() >= min_texts]
    return {"agreement": ceiling_of(values, m, people, min_texts), "n_raters": len(counted)}
