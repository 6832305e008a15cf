"""Big tables that compare measures become dot plots (issue 53): chapter 06's checks against people, each with
its interval, its chance line and a colour for where the interval lies; the table stays one click away."""
import pandas as pd
import pytest


def test_the_checks_against_people_draw_as_dots_with_intervals_and_chance_lines():
    from creval.studies.rethinking.figures import fig_checks
    checks = pd.DataFrame([
        {"check": "MacGyver crowd vs GPT-4", "measure": "creativity index", "statistic": "AUROC", "value": 0.81,
         "ci_low": 0.78, "ci_high": 0.84, "n": 200, "right direction": "yes", "CI excludes chance": "yes"},
        {"check": "MacGyver crowd vs GPT-4", "measure": "perplexity", "statistic": "AUROC", "value": 0.49,
         "ci_low": 0.45, "ci_high": 0.53, "n": 200, "right direction": "no", "CI excludes chance": "no"},
        {"check": "TTCW expert passes", "measure": "templates", "statistic": "Spearman rho", "value": -0.3,
         "ci_low": -0.5, "ci_high": -0.1, "n": 36, "right direction": "no", "CI excludes chance": "yes"},
        {"check": "AUT", "measure": "judge", "statistic": "Spearman rho", "value": float("nan"),
         "ci_low": float("nan"), "ci_high": float("nan"), "n": 0, "right direction": "", "CI excludes chance": "no"}])
    fig = fig_checks(checks)
    by_name = {t.name: t for t in fig.data}
    clear = by_name["interval clear of chance, the creative way"]
    assert list(clear.x) == [0.81] and list(clear.error_x.array) == pytest.approx([0.03])
    assert list(clear.error_x.arrayminus) == pytest.approx([0.03])
    assert list(by_name["interval holds chance"].y) == ["perplexity<br>MacGyver crowd vs GPT-4"]
    assert list(by_name["interval clear of chance, the other way"].x) == [-0.3]
    assert sum(len(t.x) for t in fig.data) == 3                                    # the row without a value is left out
    assert [s.x0 for s in fig.layout.shapes] == [0.5, 0.0]                         # each panel's chance line
    assert fig.layout.xaxis.title.text == "AUROC" and fig.layout.xaxis2.title.text == "Spearman rho"
    assert fig_checks(checks.iloc[3:]).layout.meta["missing"]


def test_a_folded_table_opens_on_a_click():
    from creval.book.plots import table
    html = table(pd.DataFrame({"a": [1.5]}), "Checks against people", folded=True)._repr_html_()
    assert html.startswith("<details class='creval-table'><summary>Show the table: Checks against people</summary>")
    assert ">1.500<" in html and html.endswith("</details>")
