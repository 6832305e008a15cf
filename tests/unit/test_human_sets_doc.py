"""docs/human-sets.md's table of the LAMP and Confederacy rows is written from a card (issue 66): the generator
renders card rows, and the doc holds its markers (never a hand-written table between them)."""
import importlib.util

from creval.core.paths import REPO


def _doc():
    spec = importlib.util.spec_from_file_location("human_sets_doc", REPO / "benchmarks" / "human_sets_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_table_is_rendered_from_card_rows_between_the_markers():
    D = _doc()
    rows = [{"human data": "LAMP: writer's edit vs raw", "measure": "MATTR", "paper": "this book's own question",
             "statistic": "AUROC", "value": 0.45, "lo": 0.372, "hi": 0.528, "baseline": "prefer the edit",
             "baseline value": 0.811, "difference": -0.361, "diff lo": -0.469, "diff hi": -0.251,
             "tracking": "does not track people", "verdict": "no paper's claim", "borderline": True},
            {"human data": "TTCW", "measure": "x"}]
    t = D.table(rows)
    assert t.count("\n") == 2 and "| 0.450 [0.372, 0.528]" not in t
    assert "AUROC 0.450 [0.372, 0.528]" in t and "-0.361 [-0.469, -0.251]" in t
    assert "does not track people, borderline | no paper's claim |" in t and "TTCW" not in t
    doc = D.DOC.read_text()
    assert doc.count(D.BEGIN) == 1 and doc.count(D.END) == 1
    assert D.rewrite(D.rewrite(doc, rows), rows) == D.rewrite(doc, rows)          # rewriting is idempotent
