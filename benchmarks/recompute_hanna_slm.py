"""Chapter 07b's HANNA and SLM rows recomputed from the raw files without creval (issue 63): the raters' mean per
text, length in whitespace words, the within-prompt Spearman of length with each creative criterion (ranks within
each prompt, centred and divided by the prompt's size, then scipy's Spearman), and the raters' ceiling (each rater
with five or more texts held out against the mean of the others, within prompts where it rated two texts of a
prompt, else pooled; weighted by its texts). It compares them with a humansets run's card rows.

    python benchmarks/recompute_hanna_slm.py ROWS.json    # chapter 07b's card rows (grading.card_rows), as JSON

Imports pandas, numpy and scipy only. Exit 1 when a value differs by more than 1e-9 (the ceiling: 1e-9 too).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def hanna(root: Path) -> pd.DataFrame:
    raw = pd.read_csv(root / "hanna" / "hanna_stories_annotations.csv")
    return pd.DataFrame({"id": "hanna-" + raw["Story ID"].astype(str), "prompt": raw["Prompt"], "text": raw["Story"],
                         "rater": raw["Worker ID"], "surprise": raw["Surprise"], "complexity": raw["Complexity"]})


def slm(root: Path) -> pd.DataFrame:
    ans = pd.read_csv(root / "slm_synopses" / "ranked_answers.csv")
    txt = pd.read_csv(root / "slm_synopses" / "slm_synopses.csv")
    kind = {"human": "h", "bot": "m", "machine": "m"}
    texts = {(t, kind[a]): x for t, a, x in zip(txt["Title"], txt["author"], txt["text"])}
    keys = list(zip(ans["title"], ans["writer"].map(kind)))
    return pd.DataFrame({"id": [f"{t}|{k}" for t, k in keys], "prompt": ans["title"], "text": [texts[k] for k in keys],
                         "rater": ans["user"], "creativity": ans["creatividad"]})


def centred(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    out = np.zeros(len(v))
    for key in pd.unique(g):
        at = g == key
        out[at] = (rankdata(v[at]) - (at.sum() + 1) / 2) / at.sum()
    return out


def within(x, y, g) -> float:
    return float(spearmanr(centred(np.asarray(x, float), g), centred(np.asarray(y, float), g))[0])


def ceiling(long: pd.DataFrame, crit: str) -> float:
    m = long.pivot_table(index="id", columns="rater", values=crit, aggfunc="mean")
    g = long.drop_duplicates("id").set_index("id")["prompt"].reindex(m.index).to_numpy()
    rhos, ws, pooled, pws = [], [], [], []
    for r in m.columns:
        rest = m.drop(columns=r).mean(axis=1)
        ok = m[r].notna() & rest.notna()
        if ok.sum() < 5:
            continue
        a, b, gg = m[r][ok].to_numpy(), rest[ok].to_numpy(), g[ok.to_numpy()]
        w = spearmanr(centred(a, gg), centred(b, gg))[0]
        p = spearmanr(a, b)[0]
        if np.isfinite(w):
            rhos.append(w)
            ws.append(ok.sum())
        if np.isfinite(p):
            pooled.append(p)
            pws.append(ok.sum())
    return float(np.average(rhos, weights=ws)) if rhos else float(np.average(pooled, weights=pws))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("card", type=Path, help="a JSON file of chapter 07b's card rows (list of dicts)")
    ap.add_argument("--data", type=Path, default=DATA)
    a = ap.parse_args()
    warnings.simplefilter("ignore")            # a rater constant within every prompt has no rho: left out, as here
    rows = json.loads(a.card.read_text())
    bad = 0
    for name, long, crits in (("HANNA", hanna(a.data), ("surprise", "complexity")),
                              ("SLM synopses", slm(a.data), ("creativity",))):
        texts = long.drop_duplicates("id").set_index("id")
        words = texts["text"].astype(str).str.split().str.len().to_numpy(float)
        g = texts["prompt"].to_numpy()
        for c in crits:
            y = long.groupby("id")[c].mean().reindex(texts.index).to_numpy()
            mine_len, mine_ceil = abs(within(words, y, g)), ceiling(long, c)
            for r in rows:
                if r["human data"].lower().startswith(f"{name.lower()}: {c}") and r["baseline"] == "words":
                    for what, book, here in (("length baseline", r["baseline value"], mine_len),
                                             ("raters' ceiling", r["ceiling"], mine_ceil)):
                        same = abs(book - here) < 1e-9
                        bad += not same
                        print(f"{'ok  ' if same else 'DIFF'} {name} {c:10s} {what:16s} book={book:.9f} here={here:.9f}")
                    break
    print(f"{bad} value(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
