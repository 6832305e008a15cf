"""Chapter 02's report from fixture records: the held-out entailment table, the entropy levels against the
paper's, and the closing list of claims."""
import json
import math

import pytest

from creval.studies.contract import Records
from creval.studies.divergent import reading as rdg
from creval.studies.divergent import report as rd
from creval.studies.divergent.config import DivergentConfig
from creval.studies.links import dead_in


def _records(tmp_path, tables):
    for name, rows in tables.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(tmp_path, DivergentConfig())


def _problem(pid, se, dup=False, t=1.0, n=10, clusters=3.0):
    return {"problem_id": pid, "domain": "macgyver", "model": "m", "mean_semantic_entropy": se, "n": n,
            "duplicate_filtered": dup, "temperature": t, "mean_n_clusters": clusters, "data_source": "shared"}


def test_nli_comparison_renames_data_columns_and_adds_the_gain(tmp_path):
    rows = [{"backend": "minilm-sick", "ran": "minilm-cosine", "dataset": "sick", "pairs": 4, "accuracy": 0.75,
             "macro_f1": 0.5, "baseline": "always neutral", "baseline_accuracy": 0.5, "seconds": 0.1},
            {"backend": "llm:m", "ran": "llm:m", "dataset": "sick", "pairs": 4, "accuracy": 0.25, "macro_f1": 0.2,
             "baseline": "always neutral", "baseline_accuracy": 0.5, "seconds": 1.0}]
    recs = _records(tmp_path, {"nli_eval": rows, "entailment": [{"requested": "minilm-sick", "ran": "minilm-cosine",
                                                                 "why": "fallback"}]})
    t = rd.nli_comparison(recs)
    assert t["gain over baseline"].tolist() == [0.25, -0.25] and t["clustered the samples"].tolist() == [True, False]
    assert "macro F1" in t and "seconds" not in t and t.attrs["caption"].startswith("Entailment backends")
    assert rd.nli_gains(recs) == [{"dataset": "sick", "pairs": 4, "accuracy": 0.75, "baseline": 0.5}]


def test_entropy_levels_leave_out_flagged_solutions_and_compare_shares_of_the_ceiling(tmp_path):
    problems = [_problem("a", 2.0), _problem("b", 1.8), _problem("c", 0.1, dup=True)]
    recs = _records(tmp_path, {"problems": problems})
    [lv] = rd.entropy_levels(recs)
    assert lv["problems"] == 3 and lv["kept"] == 2 and lv["se"] == pytest.approx(1.9)
    assert lv["share"] == pytest.approx(1.9 / math.log(10)) and (lv["paper_lo"], lv["paper_hi"]) == (1.96, 2.19)


def test_what_this_shows_gives_a_verdict_per_claim(tmp_path):
    steps = [{"model": "m", "domain": "macgyver", "is_stop": False, "n_clusters": k, "semantic_entropy": 0.3 * k,
              "step_index": 0, "n": 10, "problem_id": f"p{k}"} for k in (1, 2, 3, 4)]
    sweep = [_problem("a", 0.5, t=0.3), _problem("a", 1.5, t=1.0), _problem("a", 1.2, t=1.5)]
    recs = _records(tmp_path, {"problems": [_problem("a", 2.1)], "steps": steps, "sweep": sweep})
    md = rdg.what_this_shows(recs).split("\n")
    # the problem is the unit of the entropy claims, the step of Fig. 5a's: one problem, four steps are too few
    assert md[0].startswith("- **not testable here (1 problem(s), fewer than the 30") and "(91% of it)" in md[0]
    assert md[1].startswith("- **not testable here (1 problem(s)")
    assert "0.50 at T = 0.3, 1.50 at T = 1, 1.20 at T = 1.5" in md[1]
    assert md[2].startswith("- **not testable here (4 problem(s), fewer than the 30")
    assert "over [4 steps](../browse/divergent.html#t=steps&f.is_stop=false) of 4" in md[2]
    assert md[3].startswith("- **not testable here**") and "1 model(s)" in md[3]
    from creval.measures.stats.verdicts import CONTRADICTS, SUPPORTS, claim_verdict
    assert claim_verdict(0.3, 0.1, 0.5, 40, claimed="+").word == SUPPORTS
    assert claim_verdict(0.3, float("nan"), 0.5, 40, claimed="+").word == "not testable here"
    v = claim_verdict(-0.3, -0.5, -0.1, 40, claimed="+", sample=True)
    assert v.word == CONTRADICTS and v.reason.endswith("bundled sample data")


def test_no_merge_makes_the_entropy_claims_not_testable(tmp_path):
    """Every sample its own class on every step: semantic entropy is naive entropy, whatever its level."""
    steps = [{"model": "m", "domain": "macgyver", "is_stop": False, "n_clusters": 10, "semantic_entropy": 2.2,
              "step_index": i, "n": 10, "problem_id": f"p{i}"} for i in range(40)]
    problems = [_problem(f"p{i}", 2.1, clusters=10.0) for i in range(40)]
    recs = _records(tmp_path, {"problems": problems, "steps": steps})
    assert rd.no_merge(recs).startswith("no merge: the entailment model put every sample in its own class on all 40")
    md = rdg.what_this_shows(recs).split("\n")
    assert md[0].startswith("- **not testable here (no merge:") and "40 inside that share" not in md[0]
    assert md[1].startswith("- **not testable here (no merge:")
    merged = [dict(s, n_clusters=9) if s["step_index"] == 0 else s for s in steps]
    recs = _records(tmp_path, {"problems": problems, "steps": merged})
    assert rd.no_merge(recs) is None
    # 40 problems at 91% of the ceiling, inside the paper's 85-95%: the interval lies in the range
    assert rdg.what_this_shows(recs).startswith("- **supports the paper**: The paper's semantic entropies")


def test_entropy_rising_with_temperature_is_read_on_the_same_problems(tmp_path):
    # 40 problems, each 0.5 nats higher at T = 1.5 than at T = 0.3 (give or take 0.1): the rise's interval is above 0
    sweep = [_problem(f"p{i}", base + (0.5 + 0.1 * (-1) ** i) * (t == 1.5), t=t)
             for i, base in enumerate(0.5 + 0.01 * k for k in range(40)) for t in (0.3, 1.5)]
    md = rdg.what_this_shows(_records(tmp_path, {"sweep": sweep})).split("\n")
    assert md[0].startswith("- **supports the paper**: The paper's Fig. 5b")
    assert "highest minus lowest temperature on the same problems 0.50 [" in md[0]
    flat = [dict(r, mean_semantic_entropy=1.0 + 0.01 * (i % 7) - 0.03) for i, r in enumerate(sweep)]
    md = rdg.what_this_shows(_records(tmp_path, {"sweep": flat})).split("\n")
    assert md[0].startswith("- **inconclusive here**") or md[0].startswith("- **contradicts the paper**")


def test_the_sweep_leaves_out_duplicate_filtered_solutions_as_the_tables_do(tmp_path):
    sweep = [_problem("a", 0.2, t=0.3, dup=True), _problem("b", 0.9, t=0.3), _problem("a", 1.5, t=1.0),
             _problem("b", 1.1, t=1.0)]
    recs = _records(tmp_path, {"sweep": sweep})
    assert rd.sweep_means(recs) == {"m": [(0.3, 0.9), (1.0, pytest.approx(1.3))]}
    assert "1 duplicate-filtered solution(s) left out" in rd.fig_temperature(recs).layout.title.text
    md = rdg.what_this_shows(recs)
    assert "1 duplicate-filtered solution(s) left out, as in the tables): 0.90 at T = 0.3, 1.30 at T = 1" in md


def test_steps_that_echo_the_problem_are_counted_in_what_was_measured(tmp_path):
    text = "You have a broken ladder, some rope and a plank. How do you reach the roof of the shed?"
    def step(pid, i, chosen):
        return {"problem_id": pid, "domain": "macgyver", "model": "m", "step_index": i, "n": 2, "is_stop": False,
                "samples": [{"text": chosen, "clean": chosen}, {"text": "other", "clean": "other"}],
                "cluster_ids": [0, 1], "n_clusters": 2, "chosen_index": 0, "semantic_entropy": 0.5}
    steps = [step("a", 0, "You have a broken ladder, some rope and a plank."),     # the statement handed back
             step("a", 1, "Tie the plank to the ladder with the rope."),
             step("b", 0, "then you reach the roof")]                             # four words: not an echo
    problems = [{**_problem(p, 1.0), "problem_text": text, "n_steps": 2, "stopped_by": "budget"} for p in "ab"]
    t = rd.records_summary(_records(tmp_path, {"steps": steps, "problems": problems}))
    assert t["steps echoing the problem"].tolist() == [1] and "6 or more consecutive words" in t.attrs["caption"]


def test_samples_without_a_log_prob_are_counted_from_the_stored_samples(tmp_path):
    # an empty reply's mean_logprob is stored as NaN (json writes NaN); a null is counted the same way
    def s(lp):
        return {"text": "", "clean": "", "mean_logprob": lp}
    steps = [{"problem_id": "a", "domain": "macgyver", "model": "m", "step_index": 0, "n": 3, "is_stop": False,
              "samples": [s(-1.2), s(math.nan), s(-0.7)], "cluster_ids": [0, 1, 0], "n_clusters": 2,
              "chosen_index": 0, "semantic_entropy": 0.5},
             {"problem_id": "a", "domain": "macgyver", "model": "m", "step_index": 1, "n": 3, "is_stop": True,
              "samples": [s(None), s(math.nan), s(-2.0)], "cluster_ids": [0, 0, 1], "n_clusters": 2,
              "chosen_index": None, "semantic_entropy": 0.4}]
    problems = [{**_problem("a", 1.0), "problem_text": "Reach the roof.", "n_steps": 1, "stopped_by": "vote"}]
    t = rd.records_summary(_records(tmp_path, {"steps": steps, "problems": problems}))
    assert t["samples without a log-prob"].tolist() == [3]
    assert "left out of its step's semantic-entropy weights" in t.attrs["caption"]


def test_fig5a_is_resampled_by_problem(tmp_path):
    # 40 problems of two steps each, entropy rising with the classes: the problem is the unit, 40 of them
    steps = [{"model": "m", "domain": "macgyver", "is_stop": False, "n_clusters": k,
              "semantic_entropy": 0.3 * k + 0.01 * i, "step_index": j, "n": 10, "problem_id": f"p{i}"}
             for i in range(40) for j, k in enumerate((2 + i % 3, 6))]
    md = rdg.what_this_shows(_records(tmp_path, {"steps": steps})).split("\n")
    assert md[0].startswith("- **supports the paper**: In the paper's Fig. 5a")
    assert "over [80 steps](../browse/divergent.html#t=steps&f.is_stop=false) of 40 problems (bootstrap over" in md[0]


def test_every_count_links_to_rows_the_browser_holds(tmp_path):
    steps = [{"model": "m", "domain": "macgyver", "is_stop": False, "n_clusters": k, "semantic_entropy": 0.3 * k,
              "step_index": 0, "n": 10, "problem_id": f"p{k}"} for k in (1, 2, 3, 4)]
    sweep = [_problem("a", 0.5, t=0.3), _problem("a", 1.5, t=1.0)]
    nli = [{"backend": "minilm-sick", "ran": "minilm-sick", "dataset": "sick", "pairs": 4, "accuracy": 0.75,
            "macro_f1": 0.5, "baseline": "always neutral", "baseline_accuracy": 0.5, "seconds": 0.1}]
    recs = _records(tmp_path, {"problems": [_problem("a", 2.1), _problem("b", 1.0, dup=True)], "steps": steps,
                               "sweep": sweep, "nli_eval": nli,
                               "entailment": [{"requested": "minilm-sick", "ran": "minilm-sick", "why": ""}]})
    md = rdg.what_this_shows(recs)
    assert ("2.10 over [1 problem(s)](../browse/divergent.html#t=problems&f.model=m&f.domain=macgyver"
            "&f.duplicate_filtered=false) of a ceiling") in md
    assert "over [4 steps](../browse/divergent.html#t=steps&f.is_stop=false) of 4 problems" in md
    assert "(m, [1 problem(s)](../browse/divergent.html#t=sweep&f.model=m) per temperature" in md
    caveats = rd.build_caveats(recs)
    assert "on [2 macgyver](../browse/divergent.html#t=problems&f.model=m&f.domain=macgyver) (shared)" in caveats
    assert "majority label on [4 pairs](../browse/divergent.html#t=nli_eval&f.dataset=sick)" in caveats
    assert dead_in(md + caveats, recs) == []
