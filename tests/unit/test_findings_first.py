"""Findings first (issue 53): every chapter but the report card opens, right after its cost line, with the
"What this build found" table built from its reading's claims; the table keeps each claim's number and word
as the reading wrote them, the claims this build can test before those it cannot."""
import json
import re

import pandas as pd

from creval.book.findings import findings, findings_frame
from creval.core.paths import REPO
from creval.measures.stats.verdicts import TESTABLE

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


def test_the_findings_table_is_shown_however_many_of_its_cells_are_empty():
    """A chapter's answer is never folded away: a thin build's findings (most cells "-") still show on the first
    screen, where any other table that empty folds under one sentence."""
    from creval.book.plots import table
    thin = pd.DataFrame({"the paper's claim": list("abcd"), "this build": ["-"] * 4, "verdict": [TESTABLE] * 4,
                         "reason": ["-"] * 4})
    html = findings(thin)._repr_html_()
    assert "<details" not in html and "cells hold no value" not in html and html.count(TESTABLE) == 4
    assert "cells hold no value" in table(thin, "a table")._repr_html_()        # the same rows elsewhere fold


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


def _homogeneity(prompts: int, models=("m",), lift: float = 0.2) -> pd.DataFrame:
    """Cosines per prompt: people's answers spread around 0.3, each model's own (and two models') ``lift`` above."""
    import numpy as np
    rng = np.random.default_rng(1)
    rows = []
    for k in range(prompts):
        people = 0.3 + 0.05 * rng.normal()
        rows.append({"task": "AUT uses", "prompt": f"p{k}", "a": "people", "b": "people", "cosine": people})
        for a in models:
            for b in models:
                rows.append({"task": "AUT uses", "prompt": f"p{k}", "a": a, "b": b,
                             "cosine": people + lift + 0.02 * rng.normal()})
    return pd.DataFrame(rows)


class _Recs(dict):
    cfg = None


def test_chapter_09_findings_carry_n_an_interval_and_the_rules_word():
    from creval.measures.stats.verdicts import SUPPORTS
    from creval.studies.compare import reading
    values = pd.DataFrame({"measure": ["x", "x"], "model": ["m", "k"], "item": ["i", "i"], "value": [1.0, 2.0]})
    recs = _Recs(homogeneity=_homogeneity(30, ("m", "k")), values=values)
    df, _ = findings_frame(reading.what_this_shows(recs))
    assert list(df["word"]) == [SUPPORTS] * 3                     # m within, k within, m and k across
    within = df["this build"][0]
    m = re.match(r"AUT uses: cosine of m's answers minus people's, per prompt: (\S+) \[(\S+), (\S+)\] on "
                 r"\[30 prompts\]\(\.\./browse/compare\.html#t=homogeneity&f\.task=AUT%20uses\) \(n = 30; 95% "
                 r"interval: paired bootstrap over prompts\)\.$", within)
    value, lo, hi = (float(x) for x in m.groups())
    assert 0.15 < lo < value < hi < 0.25                          # the lift of 0.2 the records were made with
    assert "m's and k's answers" in df["this build"][2] and df["why"][0].startswith(f"{value:.3g} [")


def test_chapter_09_findings_say_what_one_model_or_few_prompts_cannot_test():
    from creval.studies.compare import reading
    values = pd.DataFrame({"measure": ["x"], "model": ["m"], "item": ["i"], "value": [1.0]})
    df, _ = findings_frame(reading.what_this_shows(_Recs(homogeneity=_homogeneity(3), values=values)))
    assert list(df["word"]) == [TESTABLE, TESTABLE]
    assert df["why"][0] == "3 prompt(s), fewer than the 30 a verdict needs"
    assert "(n = 3; no interval with fewer than 5 prompts)" in df["this build"][0]
    assert df["why"][1] == "this build measured 1 model(s): the claim needs two"
    none, _ = findings_frame(reading.what_this_shows(_Recs(homogeneity=pd.DataFrame(), values=values)))
    assert set(none["why"]) == {"no prompt of this build was also answered by people"} and len(none) == 2
