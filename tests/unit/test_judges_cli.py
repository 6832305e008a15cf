"""``creval judges`` (issue 64): a long file of people and judges, severities of known order recovered on one
scale with intervals that hold the truth, agreement with the other people, and one sentence for each bad input."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from creval.cli import main
from creval.measures.stats import irt


def simulated(path, seed: int = 0, n: int = 240, rows=None):
    """``n`` texts on 24 prompts, 3 people of middling severity and 2 judges: one lenient and sharp, one strict and
    blunt, all scoring 1-5 from the texts' latent quality."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    raters = {"p1": ("person", 1.5, 0.0), "p2": ("person", 1.5, 0.1), "p3": ("person", 1.5, -0.1),
              "lenient": ("judge", 2.5, -1.0), "strict": ("judge", 0.8, 1.2)}
    cuts = np.array([-1.5, -0.5, 0.5, 1.5])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "prompt", "rater", "kind", "score"])
        for r, (kind, a, sev) in raters.items():
            p = 1 / (1 + np.exp(-a * (theta[None, :] - (cuts[:, None] + sev))))
            s = 1 + (rng.random(n)[None, :] < p).sum(axis=0)
            for i in range(n):
                w.writerow([f"t{i}", f"q{i % 24}", r, kind, int(s[i])])
        for row in rows or []:
            w.writerow(row)
    return {r: v for r, v in raters.items()}


def test_severities_come_back_in_their_true_order_with_the_people_inside(tmp_path, capsys):
    f = tmp_path / "ratings.csv"
    truth = simulated(f)
    assert main(["judges", str(f), "--rater", "rater", "--score", "score", "--kind", "kind", "--group", "prompt",
                 "--n-boot", "100", "--irt-boot", "10", "--out", str(tmp_path / "out")]) == 0
    rows = {r["rater"]: r for r in csv.DictReader(open(tmp_path / "out" / "raters.csv"))}
    sev = {k: float(v["severity"]) for k, v in rows.items()}
    assert sev["lenient"] < min(sev["p1"], sev["p2"], sev["p3"]) < max(sev["p1"], sev["p2"], sev["p3"]) < sev["strict"]
    assert float(rows["lenient"]["discrimination"]) > float(rows["strict"]["discrimination"])
    # the alternative annotator test is run for the judges only, at the crowd's margin
    assert rows["p1"]["alt_passes"] == "" and rows["strict"]["epsilon"] == "0.2"
    assert rows["lenient"]["alt_winning_rate"] != "" and float(rows["strict"]["alt_winning_rate"]) <= 0.5
    for k, v in rows.items():
        assert float(v["agreement_lo"]) < float(v["agreement"]) < float(v["agreement_hi"]), k
    assert truth and (tmp_path / "out" / "judges.html").read_text().count("plotly") > 0
    assert len(list(csv.DictReader(open(tmp_path / "out" / "texts.csv")))) == 240
    assert "people's ceiling" in capsys.readouterr().out


def test_the_response_model_recovers_known_raters_at_about_the_nominal_rate():
    hits = total = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        theta, a, sev = rng.normal(size=300), rng.uniform(0.8, 2.0, 5), rng.normal(0, 0.5, 5)
        cuts = np.array([-1.5, -0.5, 0.5, 1.5])
        m = np.array([1 + (rng.random(300)[None, :] < 1 / (1 + np.exp(-a[j] * (theta[None, :] - (cuts[:, None]
                     + sev[j]))))).sum(axis=0) for j in range(5)], float)
        m[rng.random(m.shape) < 0.3] = np.nan                      # each text seen by some raters only
        got = irt.fit_with_intervals(m, n_boot=30, seed=seed)
        hits += ((got["discrimination_lo"] <= a) & (a <= got["discrimination_hi"])).sum()
        hits += ((got["severity_lo"] <= sev + cuts.mean()) & (sev + cuts.mean() <= got["severity_hi"])).sum()
        total += 10
    assert hits / total >= 0.8                   # nominal 95%, 30 refits: allow the Monte-Carlo spread


@pytest.mark.parametrize("extra,kind,message", [
    ([["t0", "q0", "solo", "judge", 3]], "kind", "rater 'solo' has one score"),
    ([["t999", "q0", "p1", "person", 3]], "kind", "text 't999' has one rater"),
    ([["t1", "q1", "p9", "person", "high"], ["t2", "q2", "p9", "person", 2]], "kind", "'high' is not a number"),
    ([], "sort", "no column 'sort'"),
])
def test_bad_input_is_one_sentence(tmp_path, capsys, extra, kind, message):
    f = tmp_path / "ratings.csv"
    simulated(f, n=48, rows=extra)
    assert main(["judges", str(f), "--rater", "rater", "--score", "score", "--kind", kind, "--n-boot", "100",
                 "--irt-boot", "5", "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


def test_author_gives_each_judge_its_gap_beyond_the_people(tmp_path):
    # the strict judge is told who wrote each text and adds a point to the models' texts: its gap is about -1, the
    # people have none (a person's row), and a judge that follows the truth holds 0
    f = tmp_path / "ratings.csv"
    simulated(f)
    rows = list(csv.DictReader(open(f)))
    for r in rows:
        r["author"] = "human" if int(r["id"][1:]) // 24 % 3 == 0 else "gpt"    # every prompt has both
        if r["rater"] == "strict" and r["author"] == "gpt":
            r["score"] = str(min(5, int(r["score"]) + 1))
    with open(f, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert main(["judges", str(f), "--rater", "rater", "--score", "score", "--kind", "kind", "--group", "prompt",
                 "--author", "author", "--n-boot", "200", "--irt-boot", "3", "--out", str(tmp_path / "out")]) == 0
    got = {r["rater"]: r for r in csv.DictReader(open(tmp_path / "out" / "raters.csv"))}
    assert float(got["strict"]["author_gap_hi"]) < -0.3 and got["p1"]["author_gap"] in ("", "nan")
    assert float(got["lenient"]["author_gap_lo"]) < 0 < float(got["lenient"]["author_gap_hi"])
