"""``creval grade`` on texts in prompts whose mean ratings differ, run as a researcher would (issue 63's estimand).

Each text answers one of G prompts. A prompt sets both the mean rating (2 to 4 across the prompts) and the
vocabulary its texts draw from (40 to 340 words, each of four characters, so length and word shape say nothing);
within a prompt a text's own variety ``u`` moves its vocabulary, and its rating moves by ``effect * u`` plus noise.
``distinct_1`` (the share of distinct words) therefore knows the prompt, and knows the rating within a prompt only
when ``effect`` > 0. Lengths vary (50-70 words) independently of everything. Printed: how often the card's rule
gives each word to ``distinct_1``, pooled (no ``--group``) and within prompts (``--group prompt_id``).

    python benchmarks/probe_grade_prompts.py --runs 20
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

WORDS = [f"w{i:03d}" for i in range(400)]
CASES = (("pooled", 4, 240, 0.0), ("within", 4, 240, 0.0), ("within", 40, 400, 0.0), ("within", 4, 240, 0.5),
         ("within", 40, 400, 0.5))


def write(path: Path, seed: int, prompts: int, n: int, effect: float) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "rating", "prompt_id"])
        for i in range(n):
            g = i % prompts
            share = g / max(prompts - 1, 1)
            u = rng.normal()
            v = int(np.clip((40 + 300 * share) * np.exp(0.35 * u), 10, 400))
            text = " ".join(rng.choice(WORDS[:v], int(rng.integers(50, 71))))
            w.writerow([f"t{i}", text, round(float(2 + 2 * share + effect * u + rng.normal()), 3), f"p{g}"])


def word(tmp: Path, case: tuple, seed: int) -> str:
    how, prompts, n, effect = case
    f, out = tmp / f"{how}{prompts}_{effect}_{seed}.csv", tmp / f"{how}{prompts}_{effect}_{seed}"
    write(f, seed, prompts, n, effect)
    cmd = [sys.executable, "-m", "creval", "grade", str(f), "--labels", "rating", "--measures", "lexical",
           "--n-boot", "400", "--seed", str(seed), "--out", str(out), "--quiet"]
    cmd += ["--group", "prompt_id"] if how == "within" else []
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr[-2000:])
    rows = [json.loads(x) for x in (out / "card.jsonl").read_text().splitlines() if x.strip()]
    return next(x for x in rows if x["measure"] == "distinct_1")["word"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    print("| estimand | prompts | texts | within-prompt effect | words of the rule for distinct_1 |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            got = collections.Counter(word(Path(tmp), case, seed) for seed in range(a.runs))
            print(f"| {case[0]} | {case[1]} | {case[2]} | {case[3]:g} | "
                  f"{', '.join(f'{k} {v}/{a.runs}' for k, v in got.most_common())} |", flush=True)


if __name__ == "__main__":
    main()
