"""Chapter 02's distinct@k table: classes among the first k samples, STOP rows left out."""
import json

from creval.studies.contract import Records
from creval.studies.divergent import report as rd


def _records(tmp_path, tables):
    for name, rows in tables.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Records(tmp_path)


def test_distinct_table_counts_classes_per_step_and_skips_stop_rows(tmp_path):
    steps = [
        {"model": "m", "domain": "d", "n": 3, "is_stop": False, "cluster_ids": [0, 0, 1], "semantic_entropy": 0.5},
        {"model": "m", "domain": "d", "n": 3, "is_stop": False, "cluster_ids": [0, 1, 2], "semantic_entropy": 1.0},
        {"model": "m", "domain": "d", "n": 3, "is_stop": True, "cluster_ids": [0, 0, 0], "semantic_entropy": 0.0}]
    t = rd.distinct_table(_records(tmp_path, {"steps": steps})).iloc[0]
    assert t["steps"] == 2 and t["distinct@2"] == 1.5 and t["distinct@3"] == 2.5 and t["semantic entropy"] == 0.75
    assert "distinct@5" not in t          # no k above the samples there are
