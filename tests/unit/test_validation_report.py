"""Chapter 04's report on small hand-written validation records: real values out, nothing computed but
statistics (the run wrote the measures, the report only reads them)."""
import math

import pandas as pd
import pytest

from creval.studies.contract import Records
from creval.studies.links import dead_in
from creval.studies.validation import reading, report
from creval.studies.validation.config import ValidationConfig


def recs_of(path, **tables):
    """A run folder holding ``tables`` (name -> DataFrame), read back as the chapter reads it (50 resamples)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        (path / f"{name}.jsonl").write_text(df.to_json(orient="records", lines=True) if len(df) else "")
    return Records(path, ValidationConfig(n_boot=50, validation_draws=50))


def test_data_sources_joins_the_lines(tmp_path):
    df = pd.DataFrame([{"dataset": "aut", "line": "AUT: from shared"},
                       {"dataset": "macgyver", "line": "MacGyver: sample"}])
    assert report.data_sources(recs_of(tmp_path / "a", data_sources=df)) == "AUT: from shared\nMacGyver: sample"
    assert report.data_sources(recs_of(tmp_path / "b")) == ""


def _steps() -> pd.DataFrame:
    # five one-step solutions of model m on macgyver: more entropy, less similar samples, more distinct n-grams
    rows = [{"model": "m", "domain": "macgyver", "problem_id": f"p{i}", "step_index": 0,
             "semantic_entropy": 0.1 * (i + 1), "naive_entropy": 1.0, "discrete_entropy": 0.0, "n_clusters": i + 1,
             "cosine": 0.9 - 0.1 * i, "self_bleu": 0.5 - 0.05 * i, "distinct_1": 0.2 + 0.1 * i,
             "distinct_2": 0.3 + 0.1 * i} for i in range(5)]
    rows.append({**rows[0], "domain": "hypogen", "problem_id": "h0"})
    return pd.DataFrame(rows)


def _novelty() -> pd.DataFrame:
    ses = [0.5, 1.0, 1.5, 2.0, 2.5]
    return pd.DataFrame([{"model": "m", "domain": "macgyver", "problem_id": f"p{i}", "novelty_rank": 5 - i,
                          "novelty_score": i / 4, "comparisons": 7, "ties": 2, "mean_semantic_entropy": se,
                          "min_semantic_entropy": 3.0 - se, "max_semantic_entropy": se, "mean_naive_entropy": se,
                          "mean_discrete_entropy": 1.0, "duplicate_filtered": i == 1}
                         for i, se in enumerate(ses)])


def test_run_summary_counts_problems_and_steps(tmp_path):
    t = report.run_summary(recs_of(tmp_path, step_diversity=_steps(), solution_novelty=_novelty()))
    assert t.to_dict("records") == [{"model": "m", "domain": "macgyver", "problems": 5, "steps": 5,
                                     "mean semantic entropy": 1.5, "duplicate-filtered solutions": 1}]
    assert t.attrs["caption"] == "Divergent runs used in this chapter"


def test_entropy_vs_diversity_signs(tmp_path):
    t = report.table_entropy_vs_diversity(recs_of(tmp_path, step_diversity=_steps()))
    mac = t[t["domain"] == "macgyver"].set_index(["level", "metric"])
    for level in ("step", "solution"):
        assert mac.loc[(level, "Average cosine similarity"), "rho"] == pytest.approx(-1.0)
        assert mac.loc[(level, "Self-BLEU"), "rho"] == pytest.approx(-1.0)
        assert mac.loc[(level, "Distinct-1"), "rho"] == pytest.approx(1.0)
        assert mac.loc[(level, "Distinct-2"), "n"] == 5
    assert mac.loc[("step", "Self-BLEU"), "p"] < 0.01
    hyp = t[t["domain"] == "hypogen"]
    assert hyp["rho"].isna().all() and (hyp["n"] == 1).all() and hyp["note"].str.contains("not meaningful").all()


def test_novelty_tables(tmp_path):
    recs = recs_of(tmp_path, solution_novelty=_novelty())
    t = report.table_novelty_vs_entropy(recs)
    assert t["domain"].tolist() == ["macgyver"] and t["rho"].tolist() == pytest.approx([1.0])
    assert t["comparisons"].tolist() == [7] and t["ties"].tolist() == [2]
    assert t["note"].tolist() == ["2/7 comparisons tied"]
    agg = report.table_aggregation(recs).iloc[0]
    assert agg["min rho"] == pytest.approx(-1.0) and agg["max rho"] == pytest.approx(1.0)
    assert agg["mean rho"] == pytest.approx(1.0) and agg["n"] == 5
    t13 = report.table_naive_vs_semantic(recs).iloc[0]
    assert t13["naive rho"] == pytest.approx(1.0) and math.isnan(t13["discrete rho"])   # constant: undefined


def test_sample_size_table_and_caption(tmp_path):
    df = pd.DataFrame([
        {"problem_id": "p", "step_index": 0, "n": 3, "n_clusters": 2, "semantic_entropy": 0.6},
        {"problem_id": "p", "step_index": 1, "n": 3, "n_clusters": 3, "semantic_entropy": 1.0},
        {"problem_id": "p", "step_index": 0, "n": 5, "n_clusters": 3, "semantic_entropy": 0.9},
        {"problem_id": "p", "step_index": 1, "n": 5, "n_clusters": 3, "semantic_entropy": 1.1},
    ])
    recs = recs_of(tmp_path, sample_size=df)
    t = report.table_sample_size(recs)
    assert t["n_clusters"].tolist() == ["2", "3", "mean SE (all steps)", "mean SE (step 1 only)"]
    assert t["steps at n=3"].tolist() == pytest.approx([1, 1, 0.8, 0.6])
    assert t["steps at n=5"].tolist() == pytest.approx([0, 2, 1.0, 0.9])
    assert t.attrs["caption"].endswith("n=3 vs n=5")
    fig = report.fig_sample_size(recs)
    assert [tr.name for tr in fig.data] == ["n=3", "n=5"] and list(fig.data[1].y) == [2]


def _aut(n=6) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"a{i}", "source": "ocsai1", "prompt": "brick" if i < 3 else "box",
                          "response": f"use {i}", "score": 1.0 + 0.5 * i, "novelty_score": i / 5,
                          "group_comparisons": 3, "group_ties": 1, "cosine_to_others": 0.9 - 0.1 * i,
                          "bleu_to_others": 0.2, "distinct_1": 1.0, "distinct_2": 1.0, "semdis": 0.1 * (5 - i)}
                         for i in range(n)])


def test_aut_validation_reads_measures_and_cambridge(tmp_path):
    t = report.table_aut_validation(recs_of(tmp_path / "a", aut_items=_aut())).set_index("measure")
    assert t.loc["novelty judge", "rho"] == pytest.approx(1.0)
    assert t.loc["novelty judge", "note"] == "2/6 comparisons tied"          # two objects, 3 comparisons each
    assert t.loc["cosine distance to others", "rho"] == pytest.approx(1.0)  # similarity sign-flipped
    assert t.loc["SemDis (prompt-response distance)", "rho"] == pytest.approx(-1.0)
    assert t.loc["novelty judge", "kendall tau"] == pytest.approx(1.0)
    assert math.isnan(t.loc["BLEU distance to others", "rho"]) and set(t["dataset"]) == {"ocsai1 main2_test (ocsai1)"}
    camb = _aut(6).drop(columns=["novelty_score"]).assign(source="cambridge")
    both = report.table_aut_validation(recs_of(tmp_path / "b", aut_items=_aut(), cambridge=camb))
    c = both[both["dataset"] == "cambridge_aut (no judge)"]
    assert len(c) == 5 and "novelty judge" not in set(c["measure"])
    assert "judge: 6 comparisons, 2 ties" in both.attrs["caption"]


def test_macgyver_auc(tmp_path):
    df = pd.DataFrame({"unconventional": [True, True, False, False], "novelty_score": [1.0, 2 / 3, 1 / 3, 0.0],
                       "semdis": [0.1, 0.2, 0.3, 0.4], "distinct_1": [1.0] * 4, "distinct_2": [0.5, 1.0, 0.5, 1.0],
                       "comparisons": 5, "ties": 5})
    t = report.table_macgyver_unconventional(recs_of(tmp_path, macgyver_items=df)).set_index("measure")
    assert t.loc["novelty judge", "AUC"] == pytest.approx(1.0)
    assert t.loc["SemDis (problem-solution distance)", "AUC"] == pytest.approx(0.0)
    assert t.loc["distinct-1", "AUC"] == pytest.approx(0.5) and t.loc["distinct-2", "AUC"] == pytest.approx(0.5)
    assert (t["n"] == 4).all() and (t["unconventional"] == 2).all()
    assert "all 5 comparisons tied" in t.loc["novelty judge", "note"]


def test_human_reference_means_per_solver(tmp_path):
    df = pd.DataFrame([{"problem_id": p, "solver": s, "cosine": c, "self_bleu": 0.1, "distinct_1": 0.5,
                        "distinct_2": 0.75, "n": 3}
                       for p, s, c in (("a", "humans (crowd)", 0.4), ("a", "m", 0.8), ("b", "humans (crowd)", 0.6),
                                       ("b", "m", 0.6))])
    t = report.table_human_reference(recs_of(tmp_path / "a", human_reference=df))
    assert t["solver"].tolist() == ["humans (crowd)", "m"] and t["problems"].tolist() == [2, 2]
    assert t["cosine"].tolist() == pytest.approx([0.5, 0.7])
    empty = report.table_human_reference(recs_of(tmp_path / "b"))
    assert empty["note"].tolist() == ["no problem with >= 3 crowd solutions"]


def _full():
    """40 rated AUT responses over two objects (SemDis ranks them perfectly, distinct-1 inversely) and 20 MacGyver
    solutions (SemDis separates the classes perfectly); 10 + 4 of them are the chapter's draw."""
    n = 40
    aut = pd.DataFrame({"dataset": "ocsai1 main2_test", "item_id": [f"o{i}" for i in range(n)],
                        "stratum": ["brick", "box"] * (n // 2), "target": [float(i) for i in range(n)],
                        "in_draw": [i < 10 for i in range(n)], "semdis": [i / n for i in range(n)],
                        "cosine_to_others": [0.5] * n, "distinct_1": [1 - i / n for i in range(n)],
                        "distinct_2": [float("nan")] * n})
    mg = pd.DataFrame({"dataset": "macgyver", "item_id": [str(i) for i in range(20)],
                       "stratum": ["True"] * 10 + ["False"] * 10, "target": [1.0] * 10 + [0.0] * 10,
                       "in_draw": [i % 10 < 2 for i in range(20)], "semdis": [1.0] * 10 + [0.0] * 10,
                       "distinct_1": [float(i % 2) for i in range(20)]})
    return pd.concat([aut, mg], ignore_index=True)


def test_full_data_table_puts_the_draw_among_draws_of_its_shape(tmp_path):
    t = report.table_full_data(recs_of(tmp_path / "a", human_full=_full()))
    s = t.set_index(["dataset", "measure"])
    semdis = s.loc[("ocsai1 main2_test", "SemDis (prompt-response distance)")]
    assert semdis["all items"] == pytest.approx(1.0) and semdis["n"] == 40 and semdis["n drawn"] == 10
    assert semdis["chapter's draw"] == pytest.approx(1.0) and semdis["draws 5%"] == pytest.approx(1.0)
    assert s.loc[("ocsai1 main2_test", "distinct-1 (within response)"), "all items"] == pytest.approx(-1.0)
    assert ("ocsai1 main2_test", "distinct-2 (within response)") not in s.index      # all NaN: no row
    assert math.isnan(s.loc[("ocsai1 main2_test", "cosine distance to others"), "all items"])   # constant
    mg = s.loc[("macgyver", "SemDis (prompt-response distance)")]
    assert mg["statistic"] == "AUC" and mg["all items"] == pytest.approx(1.0) and mg["n drawn"] == 4
    d1 = s.loc[("macgyver", "distinct-1 (within response)")]
    assert d1["all items"] == pytest.approx(0.5)
    assert d1["draws 5%"] < 0.5 < d1["draws 95%"]            # 2 + 2 items: one draw can land far from the truth
    assert "200" not in t.attrs["caption"] and "50 random draws" in t.attrs["caption"]
    assert report.table_full_data(recs_of(tmp_path / "b")).empty


def test_what_this_shows_checks_the_papers_signs(tmp_path):
    steps = _steps()
    sample = pd.DataFrame([{"problem_id": "p", "step_index": i, "n": n, "n_clusters": c, "semantic_entropy": 0.5}
                           for i, (n, c) in enumerate([(10, 5), (20, 10)])])
    recs = recs_of(tmp_path, step_diversity=steps, solution_novelty=_novelty(), sample_size=sample)
    md = reading.what_this_shows(recs).split("\n")
    assert md[0].startswith("- **not testable here (5 problem(s), fewer than the 30")   # problems are the units
    assert "4 of 4 step-level correlations" in md[0] and "Average cosine similarity -1.00" in md[0]
    assert md[1].startswith("- **not testable here (5 problem(s)")
    assert "m on macgyver 1.00 (n = 5; 2/7 comparisons tied)" in md[1]
    # the fixture's naive entropy is its semantic entropy: Table 13's tie is the missing clustering, not a finding
    assert md[2].startswith("- **not testable here (no merge: semantic entropy equals naive entropy")
    assert "semantic beats naive in 0 of 1" in md[2]
    assert md[3].startswith("- **not testable here (2 step(s), fewer than the 60")
    assert "5.00 classes per step at n = 10" in md[3]
    assert "on 5 solution(s) with 6 step(s)" in reading.build_caveats(recs)


def test_novelty_is_read_against_the_papers_range_not_its_sign():
    row = {"rho": 0.10, "ci_low": 0.02, "ci_high": 0.18}
    assert not reading.novelty_agrees(row)                                  # above zero, below 0.3-0.47
    assert reading.novelty_agrees({"rho": 0.35, "ci_low": 0.12, "ci_high": 0.55})
    assert not reading.novelty_agrees({"rho": 0.35, "ci_low": -0.1, "ci_high": 0.6})      # holds zero
    assert not reading.novelty_agrees({"rho": 0.40, "ci_low": float("nan"), "ci_high": float("nan")})  # no point
    assert reading.novelty_agrees({"rho": 0.80, "ci_low": 0.6, "ci_high": 0.95})          # stronger than the paper
    assert not reading.novelty_agrees({"rho": 0.10, "ci_low": float("nan"), "ci_high": float("nan")})


def test_all_comparisons_tied_makes_the_novelty_claims_not_testable(tmp_path):
    """rho 0.10 over a ranking that is the seeded shuffle (every comparison tied) is no evidence either way."""
    n = 40
    se = [0.05 * i for i in range(n)]
    novelty = pd.DataFrame([{"model": "m", "domain": "macgyver", "problem_id": f"p{i}", "novelty_rank": i + 1,
                             "novelty_score": ((i * 7) % n) / (n - 1), "comparisons": 3, "ties": 3,
                             "mean_semantic_entropy": se[i], "min_semantic_entropy": se[i],
                             "max_semantic_entropy": se[i], "mean_naive_entropy": se[i] + 0.1 * (i % 3),
                             "mean_discrete_entropy": 1.0, "duplicate_filtered": False} for i in range(n)])
    recs = recs_of(tmp_path, solution_novelty=novelty)
    assert reading.all_ties(recs).startswith("all ties: all 3 comparisons of the judge tied")
    assert reading.no_merge(recs) is None
    md = reading.what_this_shows(recs).split("\n")
    assert md[1].startswith("- **not testable here (all ties: all 3 comparisons") and "reach the paper's range" in md[1]
    assert md[2].startswith("- **not testable here (all ties")
    untied = recs_of(tmp_path / "b", solution_novelty=novelty.assign(ties=0))
    assert reading.all_ties(untied) is None
    # rho 0.17 whose interval holds both zero and the paper's range: inconclusive, with the detectable effect
    line = reading.what_this_shows(untied).split("\n")[1]
    # (50 resamples: the bounds' Monte-Carlo margin is wide enough to mark it borderline)
    assert line.startswith("- **inconclusive here, borderline (over 1 rows: 1 inconclusive here)**")


def test_table13_compares_the_two_rhos_paired_over_problems_and_links_its_solutions(tmp_path):
    """Semantic entropy that tracks judged novelty where naive entropy is noise: the paired interval of the
    difference lies above 0 and the claim is supported; each row's solutions are one link away."""
    n = 40
    nov = [i / (n - 1) for i in range(n)]
    naive = [((i * 17) % n) / n for i in range(n)]
    rows = [{"model": "m", "domain": "macgyver", "problem_id": f"p{i}", "novelty_rank": n - i, "novelty_score": nov[i],
             "comparisons": 9, "ties": 0, "mean_semantic_entropy": nov[i] + 0.01 * (i % 2),
             "min_semantic_entropy": 0.0, "max_semantic_entropy": 1.0, "mean_naive_entropy": naive[i],
             "mean_discrete_entropy": 1.0, "duplicate_filtered": False} for i in range(n)]
    recs = Records(tmp_path, ValidationConfig(n_boot=400))
    (tmp_path / "solution_novelty.jsonl").write_text(pd.DataFrame(rows).to_json(orient="records", lines=True))
    t = report.table_naive_vs_semantic(recs).iloc[0]
    assert "mc_lo" not in t and t["units"] == 40
    assert t["semantic - naive"] == pytest.approx(t["semantic rho"] - t["naive rho"]) and t["diff lo"] > 0.5
    line = reading.what_this_shows(recs).split("\n")[2]
    assert line.startswith("- **supports the paper (over 1 rows: 1 supports the paper)**: The paper's Table 13")
    assert "semantic minus naive rho, paired over the same problems: m on macgyver" in line
    assert "[40 solutions](../browse/validation.html#t=solution_novelty&f.model=m&f.domain=macgyver)" in line
    assert dead_in(line, recs) == []
