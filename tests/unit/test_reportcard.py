"""The report card from fixture records: statistics, the baseline on the same items, the paired verdict."""
import json

import numpy as np
import pytest

from creval.measures import stats as S
from creval.studies.aut.config import AutConfig
from creval.studies.contract import Records
from creval.studies.reportcard import report
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.registry import STUDIES, in_order


def _recs(root, cfg, tables):
    root.mkdir()
    for name, rows in tables.items():
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(root, cfg)


def test_the_card_reads_its_upstream_studies_and_shares_their_parameters():
    assert [s.name for s in in_order(["reportcard"])][-1] == "reportcard"
    assert set(STUDIES["reportcard"].reads) == {"convergent", "validation", "rethinking", "aut"}
    cfg = ReportCardConfig.from_params({"aut_items": 7, "judge_model": "x"})
    assert cfg.upstream()["aut"] == AutConfig.from_params({"aut_items": 7, "judge_model": "x"})
    assert ReportCardConfig.from_params({"aut_items": 7}).run_id != ReportCardConfig().run_id


def test_convergent_rows_grade_a_judge_against_the_majority_label(tmp_path):
    labels = [True] * 6 + [False] * 4                  # majority "yes": right on 6 of 10
    verdicts = labels[:9] + [None]                     # right on 9, one unparsed (counts as wrong)
    rows = [{"judge": "retrieval", "pair_id": f"p{i}", "criterion": "c", "label": lab, "verdict": v,
             "unparsed": v is None, "confidence": 0.9} for i, (lab, v) in enumerate(zip(labels, verdicts))]
    recs = _recs(tmp_path / "conv", None, {"human_verdicts": rows, "labels_source": [{"line": "Human labels: staged"}]})
    r = report.convergent_rows(recs, n_boot=300, seed=0)[0]
    assert r["value"] == pytest.approx(0.9) and r["baseline value"] == pytest.approx(0.6)
    assert r["difference"] == pytest.approx(0.3) and r["n"] == 10 and r["lo"] <= 0.9 <= r["hi"]


def test_aut_rows_keep_the_strongest_baseline_and_the_verdict(tmp_path):
    humans = list(range(1, 31))
    rng = np.random.default_rng(3)
    judge = [h + rng.normal(scale=3) for h in humans]
    sd = [h + rng.normal(scale=8) for h in humans]     # a weaker baseline
    length = [5.0] * 30                                 # a constant one: no correlation at all

    def rows(scorer, mode, vals):
        return [{"dataset": "ocsai1", "object": "brick", "item_id": f"i{k}", "human": h, "scorer": scorer,
                 "mode": mode, "group": 0, "position": 0, "value": v, "parse_path": "text"}
                for k, (v, h) in enumerate(zip(vals, humans))]
    recs = _recs(tmp_path / "aut", AutConfig(), {"human": rows("j", "pointwise", judge) +
                                                 rows("semantic distance", "baseline", sd) +
                                                 rows("length (words)", "baseline", length)})
    r = report.aut_rows(recs, n_boot=300, seed=0)[0]
    assert r["baseline"] == "semantic distance"
    assert r["value"] == pytest.approx(S.spearman(judge, humans)["rho"])
    assert r["baseline value"] == pytest.approx(S.spearman(sd, humans)["rho"])
    assert r["difference"] == pytest.approx(r["value"] - r["baseline value"])
    expect = "beats baseline" if r["diff lo"] > 0 else "indistinguishable" if r["diff hi"] >= 0 else "worse than baseline"
    assert r["verdict"] == expect


def test_card_table_and_figure_from_records(tmp_path):
    row = report.graded("P", "m", "d", [1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6], "length",
                        "spearman", 200, 0)
    assert row["value"] == pytest.approx(1) and row["baseline value"] == pytest.approx(-1)
    assert row["verdict"] == "beats baseline"
    recs = _recs(tmp_path / "card", ReportCardConfig(), {"card": [row], "sources": []})
    assert len(report.table_card(recs)) == 1 and len(report.fig_card(recs).data) == 2
