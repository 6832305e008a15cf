"""Findings first (issue 53): every chapter but the report card opens, right after its cost line, with the
"What this build found" table built from its reading's claims; the table keeps each claim's number and word
as the reading wrote them, the claims this build can test before those it cannot."""
import json
import re

import pandas as pd

from creval.book.findings import findings, findings_frame
from creval.core.paths import REPO
from creval.measures.verdicts import TESTABLE

OWN = ["01-apparatus", "02-divergent", "03-convergent", "04-validating-entropy", "05-neocoder",
       "06-rethinking-metrics", "07-aut-agreement", "09-compare"]

LIST = (f"- **{TESTABLE} (3 problem(s), fewer than the 10 a verdict needs)**: In the paper's Fig. 5a entropy grows "
        "with the classes. Here: Spearman 0.50 [0.10, 0.90] over [4 steps](../browse/divergent.html#t=steps) of 3 "
        "problems.\n"
        "- **inconclusive here, borderline (the interval holds both)**: The paper's Fig. 5b has entropy rising with "
        "temperature. Here (m, `3` problems): 0.2 [-0.1, 0.4].\n\n"
        "These verdicts rest on local models (m): a small local model tests the pipeline.")


def test_a_claims_list_becomes_rows_with_the_testable_claims_first():
    df, note = findings_frame(LIST)
    assert list(df.columns) == ["claim", "this build", "word", "why"]
    assert list(df["word"]) == ["inconclusive here, borderline", TESTABLE]
    assert list(df["why"]) == ["the interval holds both", "3 problem(s), fewer than the 10 a verdict needs"]
    assert df["claim"][1] == "In the paper's Fig. 5a entropy grows with the classes."
    assert df["this build"][1].startswith("Here: Spearman 0.50 [0.10, 0.90] over [4 steps](")
    assert note.startswith("These verdicts rest on local models")


def test_a_claims_table_keeps_its_values_and_renders_links_and_code():
    table = pd.DataFrame({"the paper's claim": ["a", "b"], "this build": ["x `k`", "[3 items](../browse/s.html)"],
                          "verdict": [TESTABLE, "contradicts the paper"], "reason": ["too few", ""]})
    df, note = findings_frame(table)
    assert list(df["claim"]) == ["b", "a"] and list(df["word"]) == ["contradicts the paper", TESTABLE] and not note
    html = findings(table)._repr_html_()
    assert '<a href="../browse/s.html">3 items</a>' in html and "<code>k</code>" in html
    assert html.index("contradicts the paper") < html.index(TESTABLE)
    assert 'download="what-this-build-found' in html                       # its CSV beside it


def test_every_chapter_opens_with_what_this_build_found():
    for name in OWN:
        cells = json.loads((REPO / f"chapters/{name}.ipynb").read_text())["cells"]
        text = ["".join(c["source"]) for c in cells]
        cost = next(i for i, t in enumerate(text) if "cost_text(cfg)" in t)
        assert text[cost + 1].startswith("## What this build found"), name
        assert re.fullmatch(r"findings\(\w+\.what_this_shows\(recs\)\)", text[cost + 2]), name
        assert not any(t.startswith("## What this shows") for t in text), name


def test_the_evidence_starts_at_the_first_sentence_that_reports_this_build():
    df, _ = findings_frame(f"- **{TESTABLE} (no setting)**: The paper reads self-preference (a judge favours "
                           "itself). No setting is left to compare.\n"
                           "- **supports the paper**: The paper's oracle assumes levels rise. Spearman of level "
                           "and distance per generator: 0.4 [0.1, 0.6].")
    assert list(df["claim"]) == ["The paper's oracle assumes levels rise.",
                                 "The paper reads self-preference (a judge favours itself)."]
    assert list(df["this build"]) == ["Spearman of level and distance per generator: 0.4 [0.1, 0.6].",
                                      "No setting is left to compare."]
