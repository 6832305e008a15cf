"""``creval grade --rater`` (issue 63): a long file of (text, rater, score) graded against each text's mean, the
raters named, each held out against the others, kinds split, and one sentence for each bad input."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from creval.core.errors import CrevalError
from creval.grade import raters as R
from creval.grade.grading import GradeOptions, grade_file


def long_file(tmp_path, n: int = 40, seed: int = 0, rows=None):
    """``n`` texts whose length carries their quality, scored by 2 experts (close to it) and 2 lay readers
    (noisier); returns the path."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=n)
    f = tmp_path / "long.csv"
    with open(f, "w", newline="") as h:
        w = csv.writer(h)
        w.writerow(["id", "text", "rater", "kind", "score"])
        for i in range(n):
            text = " ".join(["word"] * int(20 + 5 * (q[i] + 3))) + f" story {i}"
            for r, kind, noise in (("e1", "expert", 0.3), ("e2", "expert", 0.3), ("l1", "lay", 1.0),
                                   ("l2", "lay", 1.0)):
                w.writerow([f"t{i}", text, r, kind, round(float(q[i] + noise * rng.normal()), 3)])
        for row in rows or []:
            w.writerow(row)
    return f


def test_a_long_file_is_graded_against_each_texts_mean_with_the_raters_named(tmp_path):
    f = long_file(tmp_path)
    got = grade_file(f, GradeOptions(labels="score", measures=["lexical"], rater="rater", rater_kind="kind",
                                     n_boot=200))
    assert len(got["table"]) == 40 and {c["rater"] for c in got["raters"]} == {"e1", "e2", "l1", "l2"}
    agree = {c["rater"]: c["agreement"] for c in got["raters"]}
    assert min(agree["e1"], agree["e2"]) > max(agree["l1"], agree["l2"])      # the noisier kind agrees less
    pooled = [r for r in got["card"] if not r.get("kind")]
    assert all(r["raters"] == "4 raters (2 expert, 2 lay)" for r in pooled)
    assert all("held-out raters" in r["held out"] or "no held-out rater" in r["held out"] for r in pooled)
    by_kind = {r["kind"] for r in got["card"] if r.get("kind")}
    assert by_kind == {"expert", "lay"} and "expert and lay raters' means agree at Spearman" in got["kinds"]
    # the means by hand
    m = R.fold(__import__("creval.core.table", fromlist=["read_table"]).read_table(f, repeated=True),
               "score", "rater", "kind")
    assert np.allclose(m.mean(), m.matrix.mean(axis=1)) and m.matrix.shape == (40, 4)


def test_a_measure_that_is_the_truth_beats_the_noisy_held_out_raters():
    rng = np.random.default_rng(1)
    q = rng.normal(size=60)
    m = np.column_stack([q + s * rng.normal(size=60) for s in (0.2, 1.5, 1.5)])
    r = R.Ratings(None, m, ["a", "b", "c"], None)
    h = R.against_raters(r, q)
    assert h["of"] == 3 and h["beats"] >= 2 and h["measure_vs_others"] > h["ceiling"]
    noise = R.against_raters(r, rng.normal(size=60))
    assert noise["beats"] == 0


@pytest.mark.parametrize("extra,message", [
    ([["t99", "lonely story", "e1", "expert", 2.0], ["t99", "lonely story", "z9", "expert", 1.0]],
     "rater 'z9' has one score"),
    ([["t98", "a story read once", "e1", "expert", 2.0]], "text 't98' has one rater"),
    ([["t0", "another text entirely", "e1", "expert", 2.0]], "text id 't0' has two different texts"),
])
def test_bad_long_inputs_are_one_sentence(tmp_path, extra, message):
    f = long_file(tmp_path, rows=extra)
    with pytest.raises(CrevalError) as e:
        grade_file(f, GradeOptions(labels="score", measures=["lexical"], rater="rater", n_boot=200))
    assert str(f) in str(e.value) and message in str(e.value)


def test_a_score_that_is_not_a_number_or_a_missing_column_is_named(tmp_path):
    f = long_file(tmp_path, rows=[["t0", None, "l3", "lay", "great"]])
    f.write_text(f.read_text().replace(",,l3", ",same,l3"))
    with pytest.raises(CrevalError) as e:
        grade_file(f, GradeOptions(labels="score", measures=["lexical"], rater="rater", n_boot=200))
    assert "'great' is not a number" in str(e.value)
    with pytest.raises(CrevalError) as e:
        grade_file(long_file(tmp_path), GradeOptions(labels="score", measures=["lexical"], rater="reader"))
    assert "no column 'reader'" in str(e.value)
