"""Recompute the report card's LAMP and Confederacy rows from the raw files, without creval (issue 54).

Reads the staged data (``--data``, default ``../shared/data``: ``lamp_preferences/`` and
``confederacy_of_models/``) with json and openpyxl, and from a built book's downloads (``SITE/downloads``) only the
per-text measure values (``rethinking/measures_lamp.csv``, ``measures_confed.csv``, ``perplexity.csv``,
``lamp_judge.csv``) and the card (``reportcard/card.csv``). The writers' preferences, the raters' scores, the joins
(by text, not by creval's ids), the AUROC (Mann-Whitney, ties half), Spearman's rho (scipy) and the length baseline
(whitespace words) are written here again. Prints one line per card row and exits 1 when a value differs.

    .venv/bin/python benchmarks/recompute_lamp_confederacy.py _build/default/site
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
from scipy.stats import rankdata, spearmanr

VERSION = {"AI-generated": "raw", "Human-edited": "writer_edit", "AI-edited": "ai_edit"}
PAIR_NAME = {"writer_edit": "LAMP: writer's edit", "ai_edit": "LAMP: AI edit"}
NAMES = {"ci": "creativity index", "tpt": "templates per token (negated)", "distinct_1": "distinct-1",
         "distinct_2": "distinct-2", "mattr": "MATTR", "ppl": "perplexity",
         "judge": "pairwise novelty judge (both orders)"}
SIGN = {"tpt": -1.0}


def norm(text: str) -> str:
    """A join key robust to encodings and typographic quotes: the text's ASCII letters and digits."""
    return re.sub(r"[^A-Za-z0-9]", "", str(text))


def auroc(x, y) -> float:
    """P(score of a positive > score of a negative), ties counted half (Mann-Whitney U / (n1 n0))."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    r = rankdata(x)
    n1, n0 = int((y == 1).sum()), int((y == 0).sum())
    return float((r[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def lamp_votes(root: Path) -> dict:
    """(batch folder, key of the raw paragraph as the writers saw it) -> {"votes": {edit: [1 when a writer
    ranked the edit above the raw paragraph, per writer]}}."""
    items = {}
    for bdir in sorted(root.glob("batch*")):
        for shown in sorted(bdir.glob("*.json")):
            if shown.name.endswith("_rankings.json") or shown.stem == bdir.name:
                continue
            ranks_file = bdir / f"{shown.stem}_rankings.json"
            if not ranks_file.exists():
                continue
            seen = json.loads(shown.read_text())
            ranked = json.loads(ranks_file.read_text())
            seen = seen if isinstance(seen, list) else list(seen.values())
            ranked = ranked if isinstance(ranked, list) else list(ranked.values())
            by_id = {str(r.get("instruction_id", r.get("id"))): r for r in ranked}
            for s in seen:
                key = str(s.get("instruction_id", s.get("id")))
                r = by_id.get(key)
                if r is None or not all(r.get(f"rank_{k}") for k in (1, 2, 3)):
                    continue
                position = {r[f"rank_{k}"]: k for k in (1, 2, 3)}
                rank = {VERSION[v]: position[resp] for resp, v in s["mapping"].items() if resp in position}
                shown_raw = next(k for k, v in s["mapping"].items() if v == "AI-generated")
                raw_text = s["responses"][int(shown_raw.split()[-1]) - 1]    # the paragraph this writer saw
                entry = items.setdefault((bdir.name, norm(raw_text)), {"votes": {"writer_edit": [], "ai_edit": []}})
                for edit in ("writer_edit", "ai_edit"):
                    if edit in rank and "raw" in rank:
                        entry["votes"][edit].append(int(rank[edit] < rank["raw"]))
    return items


def lamp_check(data: Path, dl: Path) -> list[tuple]:
    """Per LAMP comparison and measure: (name, measure, n mirrored rows, AUROC). Per item with a writers' majority
    two rows: D = v(edit) - v(raw) labelled by the majority, and -D labelled the other way (ties left out)."""
    m = pd.read_csv(dl / "rethinking" / "measures_lamp.csv")
    ppl = pd.read_csv(dl / "rethinking" / "perplexity.csv")
    ppl = dict(zip(ppl.loc[ppl["set"] == "lamp", "id"], ppl.loc[ppl["set"] == "lamp", "ppl"]))
    judge_file = dl / "rethinking" / "lamp_judge.csv"
    judge = pd.read_csv(judge_file) if judge_file.exists() else pd.DataFrame()
    votes = lamp_votes(data / "lamp_preferences")
    out = []
    raw = m[m["kind"] == "raw"].set_index("item")
    for edit in ("writer_edit", "ai_edit"):
        e = m[m["kind"] == edit].set_index("item")
        jp = {}
        if not judge.empty:
            jj = judge[judge["pair"] == edit]
            jp = dict(zip(jj["item"], jj["pref"].astype(float)))
        rows = []
        for item, er in e.iterrows():
            if item not in raw.index:
                continue
            rr = raw.loc[item]
            batch = "batch" + re.search(r"-b(\d+)-", str(item)).group(1)     # creval's item id: lamp-b<N>-<k>
            v = votes.get((batch, norm(rr["text"])), {}).get("votes", {}).get(edit, [])
            if not v or 2 * sum(v) == len(v):
                continue
            pref = 1.0 if 2 * sum(v) > len(v) else 0.0
            d = {c: SIGN.get(c, 1.0) * (float(er[c]) - float(rr[c])) for c in ("ci", "tpt", "distinct_1",
                                                                              "distinct_2", "mattr")}
            d["ppl"] = ppl.get(er["id"], math.nan) - ppl.get(rr["id"], math.nan)
            d["judge"] = jp.get(item, math.nan) - 0.5
            d["length"] = len(str(er["text"]).split()) - len(str(rr["text"]).split())
            d["rule"] = 1.0                                     # the constant rule: always the edit
            rows.append({"pref": pref, **d})
        df = pd.DataFrame(rows)
        for c in ("ci", "tpt", "distinct_1", "distinct_2", "mattr", "ppl", "judge", "length", "rule"):
            ok = df[np.isfinite(df[c].astype(float))]
            if ok.empty:
                continue
            x = np.concatenate([ok[c].to_numpy(float), -ok[c].to_numpy(float)])
            y = np.concatenate([ok["pref"].to_numpy(), 1 - ok["pref"].to_numpy()])
            a = auroc(x, y)
            out.append((f"{PAIR_NAME[edit]}", c, len(x), a))
    return out


def confed_scores(root: Path) -> dict:
    """anonymized id -> (mean Creativity, mean total) of the raters, from the xlsx."""
    ws = openpyxl.load_workbook(root / "rating" / "RatersSheet-WithResults.xlsx", data_only=True)[
        "Rater's Sheet Unsorted"]
    header = [c for c in next(r for r in ws.iter_rows(values_only=True) if r[3] == "Description")]
    crea = [i for i, h in enumerate(header) if h == "Creativity"]
    total = [i for i, h in enumerate(header) if h == "Total"]
    out = {}
    for r in ws.iter_rows(values_only=True):
        sid = r[0]
        if sid is None or sid in ("Story ID", "EXAMPLE") or r[1] is None:
            continue
        cr = [float(r[i]) for i in crea[:2] if isinstance(r[i], (int, float))]     # the two raters' blocks
        to = [float(r[i]) for i in total[:2] if isinstance(r[i], (int, float))]
        out[str(sid)] = (float(np.mean(cr)) if cr else math.nan, float(np.mean(to)) if to else math.nan, cr)
    return out


def confed_check(data: Path, dl: Path) -> list[tuple]:
    """Per Confederacy item (mean Creativity, mean total) and measure: (name, measure, n stories, Spearman rho);
    then the two raters' Spearman on Creativity (the card's ceiling)."""
    root = data / "confederacy_of_models"
    m = pd.read_csv(dl / "rethinking" / "measures_confed.csv")
    ppl = pd.read_csv(dl / "rethinking" / "perplexity.csv")
    ppl = dict(zip(ppl.loc[ppl["set"] == "confed", "id"], ppl.loc[ppl["set"] == "confed", "ppl"]))
    mapping = pd.read_csv(root / "anonymization" / "mapping-grouped.csv")
    story_text = {norm((root / "corpus-full" / o).read_bytes().decode("utf-8", "ignore")): a.split(".")[0]
                  for o, a in zip(mapping["Original"], mapping["Anonymized"]) if (root / "corpus-full" / o).exists()}
    scores = confed_scores(root)
    anon = [story_text.get(norm(t)) for t in m["text"]]
    if any(a is None for a in anon):
        print(f"confederacy: {sum(a is None for a in anon)} stories not matched by text")
    cre = np.array([scores[a][0] if a in scores else math.nan for a in anon])
    tot = np.array([scores[a][1] if a in scores else math.nan for a in anon])
    out = []
    for label, y in (("Creativity", cre), ("total", tot)):
        for c in ("ci", "tpt", "distinct_1", "distinct_2", "mattr", "ppl", "length"):
            x = (m["id"].map(ppl).to_numpy(float) if c == "ppl" else
                 np.array([len(str(t).split()) for t in m["text"]], float) if c == "length" else
                 SIGN.get(c, 1.0) * m[c].to_numpy(float))
            ok = np.isfinite(x) & np.isfinite(y)
            out.append((f"Confederacy: raters' mean {label}", c, int(ok.sum()), float(spearmanr(x[ok], y[ok])[0])))
    pairs = np.array([scores[a][2] for a in anon if a in scores and len(scores[a][2]) == 2])
    out.append(("Confederacy: raters' Creativity, rater 1 vs 2", "ceiling", len(pairs),
                float(spearmanr(pairs[:, 0], pairs[:, 1])[0])))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", type=Path, help="the book's site folder (holding downloads/)")
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    a = ap.parse_args(argv)
    dl = a.site / "downloads"
    card = pd.read_csv(dl / "reportcard" / "card.csv")
    bad = 0
    for data_name, c, n, mine in lamp_check(a.data, dl) + confed_check(a.data, dl):
        rows = card[card["human data"].astype(str).str.startswith(data_name)]
        if c == "rule":                 # the constant "prefer the edit": its AUROC is the share of edits that won
            book = rows.loc[rows["baseline"].astype(str).str.startswith("prefer the edit"), "baseline value"]
            book_v, what = (float(book.iloc[0]) if len(book) else math.nan), "baseline prefer the edit"
            mine_v = mine
        elif c == "length":
            book = rows.loc[rows["baseline"] == "length (words)", "baseline value"]
            if book.empty and data_name.startswith("LAMP"):
                print(f"n/a  {data_name:45s} baseline length (words){'':17s} n={n:4d} not the strongest baseline "
                      f"on the card's rows (the constant rule is); here={max(mine, 1 - mine): .6f}")
                continue
            book_v = float(book.iloc[0]) if len(book) else math.nan
            mine_v = max(mine, 1 - mine) if data_name.startswith("LAMP") else mine    # a baseline's better side
            what = "baseline length (words)"
        elif c == "ceiling":
            note = card.loc[card["human data"].astype(str).str.contains("Confederacy: raters' mean Creativity"),
                            "note"].astype(str)
            got = note.str.extract(r"Spearman (-?[0-9.]+) between the two raters")[0].dropna()
            book_v, mine_v, what = (float(got.iloc[0]) if len(got) else math.nan), round(mine, 2), "rater ceiling"
        else:
            r = rows[rows["measure"] == NAMES[c]]
            book_v = float(r["value"].iloc[0]) if len(r) else math.nan
            mine_v, what = mine, NAMES[c]
            if math.isnan(book_v) and len(r) and str(r["tracking"].iloc[0]) == "not testable here":
                print(f"n/a  {data_name:45s} {what:40s} n={n:4d} book withholds it ({r['reason'].iloc[0][:60]}...); "
                      f"here={mine_v: .6f}")
                continue
        same = (math.isnan(book_v) and math.isnan(mine_v)) or abs(book_v - mine_v) < 1e-9 or \
            (c == "ceiling" and abs(book_v - mine_v) < 0.006)
        bad += not same
        print(f"{'ok ' if same else 'DIFF'} {data_name:45s} {what:40s} n={n:4d} book={book_v: .6f} here={mine_v: .6f}")
    print(f"{bad} row(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
