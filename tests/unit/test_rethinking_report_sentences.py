"""Chapter 06's corrected sentences (issue 33), each read from small hand-written records: the L range and
the creativity index's verdict, the paper's template directions, each AUT measure's own n, the twist test's
Wilson interval, TTCW within each model, the example's missing perplexity, perplexity token-weighted."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from creval.measures.stats import correlation as corr
from creval.measures.stats import numbers as num
from creval.measures.stats import verdicts as V
from creval.studies.contract import Records
from creval.studies.rethinking import reading, report
from creval.studies.rethinking.config import RethinkingConfig

CFG = RethinkingConfig(run_root="/nonexistent", model="m1", judge_model="j", n_boot=200, rethink_ci_sweep_max=8)


def write(root, tables):
    for name, rows in tables.items():
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(root, CFG)


def ps_rows(uniq8):
    """Three unconventional, three conventional solutions; uniq_5..7 favour the unconventional side, uniq_8 as
    given (per side)."""
    rows = []
    for k, (kind, cis) in enumerate((("unconventional", [0.9, 0.8, 0.7]), ("conventional", [0.6, 0.75, 0.5]))):
        for i, ci in enumerate(cis):
            rows.append({"id": f"p{k}{i}", "group": f"p{k}{i}", "text": "t", "label": kind == "unconventional",
                         "kind": kind, "ci": ci, "uniq_5": ci, "uniq_6": ci, "uniq_7": ci,
                         "uniq_8": uniq8[kind] + 0.01 * i, "n_words": 10, "tpt": 0.1})
    return rows


SETS = [{"set": "ps", "texts": 6, "labelled": True, "why": ""},
        {"set": "ttcw", "texts": 0, "labelled": False, "why": "no TTCW here"}]


def test_the_creativity_index_verdict_and_the_l_range(tmp_path):
    (tmp_path / "a").mkdir()
    steady = write(tmp_path / "a", {"measures_ps": ps_rows({"unconventional": 0.9, "conventional": 0.6}),
                                    "sets": SETS})
    line = reading.l_range_sentence(steady)
    assert line.startswith("unconventional vs conventional AUROC 0.889-1.000 on [6 texts](../browse/rethinking.html"
                           "#t=measures_ps) over L ranges 5..7 to 5..8")
    assert "does not depend on the L range" in line
    (tmp_path / "b").mkdir()          # uniq_8 reverses the sides: the sum over 5..8 crosses chance
    flips = write(tmp_path / "b", {"measures_ps": ps_rows({"unconventional": -3.0, "conventional": 3.0}),
                                   "sets": SETS})
    from creval.studies.rethinking.figures import table_l_ranges
    a = table_l_ranges(flips)["AUROC"]
    assert a.max() > 0.5 > a.min()
    assert reading.l_range_sentence(flips).endswith("so the verdict depends on it.")


def test_the_papers_template_directions():
    # Table 2: CW 77.3% (human) < 96.7% (LLM); PS 38.7% (unconventional) > 31.9%; RI 54.6% (accepted) < 63.2%
    assert reading.paper_template_reading() == ("templates are rarer on the more creative side in creative writing "
                                                "and research ideation, not in problem solving")


def test_each_aut_measure_carries_its_own_n():
    checks = pd.DataFrame([
        {"check": "AUT human originality", "measure": "creativity index", "value": 0.05, "ci_low": 0.0,
         "ci_high": 0.1, "n": 1201},
        {"check": "AUT human originality", "measure": "perplexity", "value": -0.08, "ci_low": -0.4,
         "ci_high": 0.3, "n": 40},
        {"check": "AUT human originality", "measure": "bits per byte", "value": 0.02, "ci_low": -0.3,
         "ci_high": 0.3, "n": 40}])
    a = reading.aut_values(checks)
    assert a["ns"] == "n = 1201 for creativity index; n = 40 for perplexity, bits per byte"
    assert a["n"] == 40 and a["strongest"].startswith("perplexity -0.08")        # the strongest measure's own n


def test_the_twist_test_gets_a_wilson_interval(tmp_path):
    twist = [{"id": f"s{i}", "kind": "unconventional" if i % 2 else "conventional", "p_yes_conventional": 0.6,
              "p_yes_unconventional": 0.6, "says_unconventional": True, "says_conventional": True,
              "contradiction": True} for i in range(12)]
    recs = write(tmp_path, {"twist": twist, "sets": SETS, "measures_ps": ps_rows({"unconventional": 0.9,
                                                                                 "conventional": 0.6})})
    claim, here, v = reading.twist_claim(recs, reading.reading_values(recs))
    lo, hi = V.wilson(12, 12)
    assert here.startswith('100% [76, 100] (Wilson interval) of <a href="../browse/rethinking.html#t=twist">12 '
                           'solutions</a>') and round(lo * 100) == 76
    assert v.word == V.TESTABLE          # no judge that separates the labels here, and 12 solutions are too few
    assert reading.judge_values(recs, report.table_checks(recs))["contradictions_ci"] == "[76, 100]"


def test_ttcw_within_each_model(tmp_path):
    # two models: B's stories have a higher index and more passes, but within each model the two do not move together
    rows = []
    for m, base_ci, base_pass in (("A", 0.1, 5), ("B", 0.7, 25)):
        for i, (dc, dp) in enumerate([(0.0, 2), (0.1, 0), (0.2, 4), (0.3, 3), (0.4, 1)]):
            rows.append({"id": f"{m}{i}", "group": f"{m}{i}", "text": "t", "label": m, "kind": m,
                         "ci": base_ci + dc, "passes": base_pass + dp, "originality_passes": 1, "n_words": 100,
                         "tpt": 0.1})
    recs = write(tmp_path, {"measures_ttcw": rows, "sets": [{"set": "ttcw", "texts": 10, "labelled": True,
                                                             "why": ""}]})
    w = report.table_ttcw_within(recs).set_index("model")
    pooled = corr.spearman([r["ci"] for r in rows], [r["passes"] for r in rows])["rho"]
    within = corr.spearman([0, 1, 2, 3, 4] * 2, [2, 0, 4, 3, 1] * 2)["rho"]      # the same ranks in both models
    assert w.loc["all stories (pooled)", "rho"] == pytest.approx(pooled) and pooled > 0.6
    assert w.loc[report.WITHIN, "rho"] == pytest.approx(within) and abs(within) < 0.2
    assert w.loc["A only", "n"] == 5
    v = reading.ttcw_values(recs, report.table_checks(recs))
    assert v["models"] == 2 and v["within"].startswith(num.fmt_number(within))


def test_the_example_says_why_it_has_no_perplexity(tmp_path):
    ex = {"id": "p00", "group": "p00", "kind": "unconventional", "text": "t", "tokens": ["t"], "span_L": 5,
          "spans": [], "reference": {"docs": 1}, "pos_tokens": 1, "template_n": 5, "template_hits": []}
    recs = write(tmp_path, {"example": [ex], "sets": SETS, "perplexity": [],
                            "measures_ps": ps_rows({"unconventional": 0.9, "conventional": 0.6})})
    cells = report.table_example(recs).set_index("measure")["value"]
    cell = cells["perplexity / PPL given the problem / bits per byte"]
    assert cell == ("not scored: perplexity covers the first 20 texts of each group, and this solution is not among "
                    "them") and "nan" not in cell


def test_perplexity_is_read_token_weighted_beside_the_median(tmp_path):
    ps = ps_rows({"unconventional": 0.9, "conventional": 0.6})
    nll = [13.0, 14.0, 2.0, 3.0, 4.0, 5.0]
    toks = [1, 7, 2, 2, 2, 2]
    ppl = [{"set": "ps", "id": r["id"], "model": "m1", "ppl": math.exp(x / t), "bpb": 1.0, "n_tokens": t, "nll": x,
            "first_nll": x / t, "n_bytes": 4 * t} for r, x, t in zip(ps, nll, toks)]
    recs = write(tmp_path, {"measures_ps": ps, "perplexity": ppl, "sets": SETS})
    p = reading.ppl_values(recs, report.table_checks(recs))
    assert p["weighted"] == num.fmt_number(math.exp(sum(nll) / sum(toks)), 1) == "13.0"      # exp(41 / 16)
    assert p["median"] == num.fmt_number(np.median([math.exp(x / t) for x, t in zip(nll, toks)]), 1)
    first = sum(x / t for x, t in zip(nll, toks))
    assert p["first_share"] == num.fmt_number(first / sum(nll), 0, 100) + "%"
