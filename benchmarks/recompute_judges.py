"""Chapter 07c's numbers recomputed from the raw files without creval (issue 64): for HANNA Surprise and Complexity
and TTCW's tests passed, the people's ceiling and every released judge's agreement on the same held-out references
(each person with five or more texts held out in turn; on that person's texts, the person and each judge against
the mean of the other people; Spearman after ranking within each prompt, centred and divided by the prompt's
size; averaged over people, weighted by texts), each HANNA judge's flip rate across its four wordings, the people's
flip rate between two raters of the same pair and each judge's gap to it (the card's instability rows), and each
judge's author gap (per prompt, the judge's person-minus-model gap minus the people's; mean over prompts). It
compares them with a judges run folder's ``panels``, ``raters``, ``variants`` and ``bias`` tables.

    python benchmarks/recompute_judges.py RUN_DIR      # e.g. data/runs/default/judges/<run id>

Imports pandas, numpy and scipy only. Exit 1 when a value differs by more than 1e-9.
"""
from __future__ import annotations

import ast
import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ABBREV = {"SU": "surprise", "CX": "complexity"}


def centred_ranks(v: pd.Series, g: pd.Series) -> np.ndarray:
    out = np.empty(len(v))
    for _, idx in v.groupby(g.to_numpy()).groups.items():
        at = v.index.get_indexer(idx)
        out[at] = (rankdata(v.to_numpy()[at]) - (len(at) + 1) / 2) / len(at)
    return out


def rho(a: pd.Series, b: pd.Series, g: pd.Series) -> float:
    return float(spearmanr(centred_ranks(a, g), centred_ranks(b, g))[0])


def held_out(people: pd.DataFrame, raters: pd.DataFrame, prompt: pd.Series) -> dict:
    """``people``, ``raters``: texts x columns. Each rater's agreement, people's own included, and the ceiling."""
    sums, weights = {}, {}
    for p in people.columns:
        rows = people[p].notna()
        if rows.sum() < 5:
            continue
        ref = people.drop(columns=p)[rows].mean(axis=1)
        for col, x in [(p, people.loc[rows, p]), *((j, raters.loc[rows, j]) for j in raters.columns)]:
            ok = ref.notna() & x.notna()
            if ok.sum() < 5:
                continue
            r = rho(x[ok], ref[ok], prompt[rows][ok])
            if np.isfinite(r):
                sums[col] = sums.get(col, 0) + r * ok.sum()
                weights[col] = weights.get(col, 0) + ok.sum()
    value = {k: sums[k] / weights[k] for k in sums}
    mine = [(value[p], people[p].notna().sum()) for p in people.columns if p in value and people[p].notna().sum() >= 5]
    value["__ceiling__"] = sum(v * w for v, w in mine) / sum(w for _, w in mine)
    return value


def gap(judge: pd.Series, people: pd.Series, person: pd.Series, prompt: pd.Series) -> float:
    out = []
    for _, idx in judge.groupby(prompt.to_numpy()).groups.items():
        j, y, h = judge[idx], people[idx], person[idx]
        ok = j.notna() & y.notna()
        if (ok & h).any() and (ok & ~h).any():
            out.append((j[ok & h].mean() - j[ok & ~h].mean()) - (y[ok & h].mean() - y[ok & ~h].mean()))
    return float(np.mean(out))


def flips(m: pd.DataFrame, prompt: pd.Series) -> float:
    f = n = 0
    for _, idx in m.groupby(prompt.to_numpy()).groups.items():
        for a, b in itertools.combinations(idx, 2):
            d = np.sign(m.loc[a].to_numpy() - m.loc[b].to_numpy())
            d = d[np.isfinite(d) & (d != 0)]
            pos, neg = int((d > 0).sum()), int((d < 0).sum())
            n += (pos + neg) * (pos + neg - 1) // 2
            f += pos * neg
    return f / n


def hanna(root: Path) -> dict:
    raw = pd.read_csv(root / "hanna" / "hanna_stories_annotations.csv")
    raw["id"] = "hanna-" + raw["Story ID"].astype(str)
    texts = raw.drop_duplicates("id").set_index("id")
    order = {m: ["hanna-" + str(s) for s in sorted(g["Story ID"].unique())] for m, g in raw.groupby("Model")}
    llm = pd.read_csv(root / "hanna" / "hanna_metric_scores_llm.csv")
    scores = []
    for _, r in llm.iterrows():
        for col in llm.columns:
            parts = col.split()
            if len(parts) == 3 and parts[1] in ABBREV and parts[2].isdigit():
                for k, v in zip(order[r["Model"]], ast.literal_eval(r[col])):
                    scores.append((k, parts[0], int(parts[2]), ABBREV[parts[1]], v if v >= 1 else np.nan))
    judged = pd.DataFrame(scores, columns=["id", "judge", "variant", "criterion", "score"])
    out = {}
    for crit, col in (("surprise", "Surprise"), ("complexity", "Complexity")):
        people = raw.pivot(index="id", columns="Worker ID", values=col).reindex(texts.index)
        mine = judged[judged["criterion"] == crit]
        wide = {j: g.pivot(index="id", columns="variant", values="score").reindex(texts.index)
                for j, g in mine.groupby("judge")}
        means = pd.DataFrame({j: w.mean(axis=1) for j, w in wide.items()})
        prompt = texts["Prompt"]
        agree = held_out(people, means, prompt)
        person = texts["Model"] == "Human"
        out[("hanna", crit)] = {"agreement": agree, "people flip": flips(people, prompt),
                                "flip": {j: flips(w, prompt) for j, w in wide.items()},
                                "gap": {j: gap(means[j], people.mean(axis=1), person, prompt) for j in means}}
    return out


def ttcw(root: Path) -> dict:
    d = root / "ttcw_art_or_artifice"
    ann = pd.DataFrame(json.loads((d / "ttcw_annotations.json").read_text()))
    ann["yes"] = ann["binary_verdict"].str.strip().str.lower().eq("yes")
    people = ann.groupby(["story_id", "expert_idx"])["yes"].sum().unstack()
    stories = pd.DataFrame(json.loads((d / "ttcw_short_stories.json").read_text())).set_index("story_id")
    people = people.reindex(stories.index).astype(float)
    people.columns = [f"expert-{c}" for c in people.columns]
    judges = {}
    for f in sorted((d / "llm_judge_annotations").glob("annotations_*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        t = pd.DataFrame({"story_id": [r["id"].removeprefix("story_").rsplit("_test", 1)[0] for r in rows],
                          "yes": [str(r.get("response", "")).strip().lower().startswith("yes") for r in rows]})
        g = t.groupby("story_id")["yes"]
        judges[f.stem.removeprefix("annotations_")] = g.sum().where(g.size() == 14).reindex(stories.index)
    raters = pd.DataFrame(judges).astype(float)
    prompt = stories["story_idx"].astype(str)
    person = stories.index.str.endswith("NewYorker")
    person = pd.Series(person, index=stories.index)
    return {("ttcw", "tests_passed"): {"agreement": held_out(people, raters, prompt), "flip": {}, "people flip": None,
                                        "gap": {j: gap(raters[j], people.mean(axis=1), person, prompt)
                                                for j in raters}}}


def main() -> int:
    warnings.simplefilter("ignore")          # scipy warns on a constant column: its NaN is skipped, as creval does
    run = Path(sys.argv[1])
    tab = {t: pd.read_json(run / f"{t}.jsonl", lines=True) for t in ("panels", "raters", "variants", "bias")}
    mine = {**hanna(DATA), **ttcw(DATA)}
    worst, n = 0.0, 0
    for (s, c), got in mine.items():
        checks = [("ceiling", got["agreement"]["__ceiling__"],
                   tab["panels"].query("set == @s and criterion == @c")["ceiling"].iloc[0])]
        r = tab["raters"].query("set == @s and criterion == @c").set_index("rater")
        checks += [(f"agreement {k}", v, r.loc[k, "agreement"]) for k, v in got["agreement"].items()
                   if k != "__ceiling__"]
        v = tab["variants"].query("set == @s and criterion == @c").set_index("judge")
        checks += [(f"flip {k}", x, v.loc[k, "flip_rate"]) for k, x in got["flip"].items()]
        if got["people flip"] is not None:       # the people's flips between raters, and each judge's gap to them
            checks += [(f"people's flip beside {k}", got["people flip"], v.loc[k, "people_flip"]) for k in got["flip"]]
            checks += [(f"flip gap {k}", x - got["people flip"], v.loc[k, "gap"]) for k, x in got["flip"].items()]
        b = tab["bias"].query("set == @s and criterion == @c").set_index("judge")
        checks += [(f"author gap {k}", x, b.loc[k, "author_gap"]) for k, x in got["gap"].items()]
        for what, ours, theirs in checks:
            n += 1
            d = abs(float(ours) - float(theirs))
            worst = max(worst, d)
            if d > 1e-9:
                print(f"DIFFERS {s} {c} {what}: recomputed {ours:.12f}, chapter {theirs:.12f}")
        print(f"{s} {c}: ceiling {got['agreement']['__ceiling__']:.4f}; {len(checks)} values checked")
    print(f"{n} values, largest difference {worst:.2e}")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
