"""Raters of known severity and discrimination through ``creval judges``, as a researcher would run it (issue 64).

Each run writes a long file: 300 texts on 30 prompts, latent quality N(0, 1); four people (severity 0, 0.4, -0.4,
0.2; discrimination 1.5, 1.2, 1.8, 1.0; two of them rate 70% of the texts) and two judges, one lenient and sharp
(-1.0, 2.5), one strict and blunt (1.0, 0.7), all scoring 1-5 by Samejima's graded model with thresholds -1.5, -0.5,
0.5, 1.5 shifted by the rater's severity. Then ``creval judges`` is run on the file and its ``raters.csv`` read: is
the severities' order the true one, and how often each interval holds the true value (nominal 95%).

    python benchmarks/probe_raters.py --runs 20 --irt-boot 100
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CUTS = np.array([-1.5, -0.5, 0.5, 1.5])
RATERS = {"p1": ("person", 1.5, 0.0), "p2": ("person", 1.2, 0.4), "p3": ("person", 1.8, -0.4),
          "p4": ("person", 1.0, 0.2), "lenient": ("judge", 2.5, -1.0), "strict": ("judge", 0.7, 1.0)}
PARTIAL = ("p3", "p4")


def write(path: Path, seed: int, n: int = 300, prompts: int = 30) -> None:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "prompt", "rater", "kind", "score"])
        for r, (kind, a, sev) in RATERS.items():
            p = 1 / (1 + np.exp(-a * (theta[None, :] - (CUTS[:, None] + sev))))
            s = 1 + (rng.random(n)[None, :] < p).sum(axis=0)
            seen = rng.random(n) < (0.7 if r in PARTIAL else 1.0)
            w.writerows([f"t{i}", f"q{i % prompts}", r, kind, int(s[i])] for i in range(n) if seen[i])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--irt-boot", type=int, default=100)
    a = ap.parse_args()
    ordered, held = 0, {r: [0, 0] for r in RATERS}
    truth = sorted(RATERS, key=lambda r: RATERS[r][2])
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(a.runs):
            f, out = Path(tmp) / f"r{seed}.csv", Path(tmp) / f"r{seed}"
            write(f, seed)
            r = subprocess.run([sys.executable, "-m", "creval", "judges", str(f), "--rater", "rater", "--score",
                                "score", "--kind", "kind", "--group", "prompt", "--n-boot", "200", "--irt-boot",
                                str(a.irt_boot), "--seed", str(seed), "--out", str(out)],
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit(r.stderr[-2000:])
            rows = {x["rater"]: x for x in csv.DictReader(open(out / "raters.csv"))}
            got = sorted(rows, key=lambda k: float(rows[k]["severity"]))
            ordered += got == truth
            for k, (_, disc, sev) in RATERS.items():
                v = rows[k]
                held[k][0] += float(v["severity_lo"]) <= sev <= float(v["severity_hi"])
                held[k][1] += float(v["discrimination_lo"]) <= disc <= float(v["discrimination_hi"])
            print(f"run {seed}: order {'as true' if got == truth else got}", flush=True)
    print(f"severities in their true order in {ordered} of {a.runs} runs")
    print("| rater | kind | severity | discrimination | severity held | discrimination held |")
    print("|---|---|---|---|---|---|")
    for k, (kind, disc, sev) in RATERS.items():
        print(f"| {k} | {kind} | {sev:g} | {disc:g} | {held[k][0]}/{a.runs} | {held[k][1]}/{a.runs} |")
    n = a.runs * len(RATERS)
    print(f"all: severity held {sum(h[0] for h in held.values())}/{n}, "
          f"discrimination {sum(h[1] for h in held.values())}/{n}")


if __name__ == "__main__":
    main()
