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


# -- chapters 04, 07 and 09: the compared tables as dot plots, their degenerate lines linked to the items -------
def test_a_dot_figure_draws_each_row_with_its_interval_n_and_chance_line():
    from creval.studies.dots import dot_figure, dots_frame
    dots = dots_frame([
        {"panel": "rho", "label": "SemDis", "value": 0.4, "lo": 0.1, "hi": 0.6, "n": 40, "group": "subsample"},
        {"panel": "rho", "label": "judge", "value": 0.2, "lo": float("nan"), "hi": float("nan"), "n": 3,
         "group": "subsample"},
        {"panel": "AUC", "label": "distinct-2", "value": 0.7, "lo": 0.55, "hi": 0.8, "n": 12, "group": "all"},
        {"panel": "AUC", "label": "no value", "value": float("nan"), "lo": 0.1, "hi": 0.2, "n": 5, "group": "all"}])
    assert list(dots["label"]) == ["SemDis", "judge", "distinct-2"]            # a row without a value is left out
    fig = dot_figure(dots, "Against people", chance={"rho": 0.0, "AUC": 0.5}, x_titles={"rho": "Spearman rho"})
    sub, every = fig.data
    assert list(sub.y) == ["SemDis (n = 40)", "judge (n = 3)"] and list(sub.x) == [0.4, 0.2]
    assert list(sub.error_x.array) == pytest.approx([0.2, 0.0]) and list(sub.error_x.arrayminus) == pytest.approx(
        [0.3, 0.0])
    assert list(sub.marker.symbol) == ["circle", "circle-open"]               # no interval: an open dot, no bar
    assert list(every.y) == ["distinct-2 (n = 12)"] and list(every.error_x.array) == pytest.approx([0.1])
    assert [s.x0 for s in fig.layout.shapes] == [0.0, 0.5]                    # each panel's chance line
    assert fig.layout.xaxis.title.text == "Spearman rho" and fig.layout.xaxis2.title.text == "AUC"
    assert fig.layout.yaxis.title.text == "measure"
    empty = dot_figure(dots.iloc[0:0], "Against people")
    assert empty.layout.meta["missing"] and "not computed" in empty.layout.title.text


def test_chapter_04_draws_its_labelled_items_tables_with_their_chance_lines(tmp_path):
    from test_validation_report import _aut, recs_of

    from creval.studies.validation import figures
    mac = pd.DataFrame({"unconventional": [True, True, False, False], "novelty_score": [1.0, 2 / 3, 1 / 3, 0.0],
                        "semdis": [0.1, 0.2, 0.3, 0.4], "distinct_1": [1.0] * 4, "distinct_2": [0.5, 1.0, 0.5, 1.0],
                        "comparisons": 5, "ties": 5})
    fig = figures.fig_labelled_items(recs_of(tmp_path, aut_items=_aut(), macgyver_items=mac))
    rho, auc = (fig.data[0], fig.data[1])
    assert rho.name == auc.name == "the chapter's subsample"
    labels = [y.replace("<br>", " ") for y in rho.y]                          # long labels wrap onto lines
    assert all(len(line) <= 34 for y in rho.y for line in y.split("<br>"))
    judge = labels.index("novelty judge · ocsai1 main2_test (ocsai1) (n = 6)")
    assert rho.x[judge] == pytest.approx(1.0)                                 # the table's rho, unchanged
    aucs = {y.replace("<br>", " "): x for y, x in zip(auc.y, auc.x)}
    assert aucs["SemDis (problem-solution distance) · macgyver (n = 4)"] == pytest.approx(0.0)
    assert [s.x0 for s in fig.layout.shapes] == [0.0, 0.5]
    assert fig.layout.xaxis.title.text.startswith("Spearman rho") and fig.layout.xaxis2.title.text.startswith("AUC")


def test_chapter_07_draws_agreement_per_setting_with_an_interval_over_objects(tmp_path):
    from test_aut_report import _judgment, _records

    from creval.studies.aut import figures
    objects = [f"o{k}" for k in range(6)]
    rows = [_judgment(j, "g", lvl, code, float(code if j == "a" or k % 2 else 4 - code), obj=o)
            for k, o in enumerate(objects) for j in ("a", "b")
            for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3))]
    recs = _records(tmp_path, {"judgments": rows})
    fig = figures.fig_agreement(recs)
    src = [t for t in fig.data if t.xaxis == "x"]
    by_label = {y.replace("<br>", " "): (x, t) for t in src for y, x in zip(t.y, t.x)}
    assert set(by_label) == {"comprehensive score · O – a (n = 6)", "comprehensive score · O – b (n = 6)",
                             "comprehensive score · a – b (n = 6)"}
    x, trace = by_label["comprehensive score · O – b (n = 6)"]
    assert x == pytest.approx(0.0)                      # three objects agree (1), three reversed (-1)
    k = [y.replace("<br>", " ") for y in trace.y].index("comprehensive score · O – b (n = 6)")
    assert trace.error_x.array[k] > 0 and trace.error_x.arrayminus[k] > 0       # an interval over the objects
    assert by_label["comprehensive score · O – a (n = 6)"][0] == pytest.approx(1.0)
    assert [s.x0 for s in fig.layout.shapes] == [0.0, 0.0, 0.5]                    # pair_acc: chance is one half
    assert fig.layout.yaxis.title.text == "setting · pair" and "chance 0.5" in fig.layout.xaxis3.title.text
    assert figures.degenerate_md(recs) == ""                                       # no degenerate setting here


def test_chapter_07_names_a_degenerate_setting_in_one_line_linked_to_its_judgments(tmp_path):
    from test_aut_report import _judgment, _records

    from creval.studies.aut import figures
    rows = [_judgment("a", "g", lvl, code, 3.0, obj=o) for o in ("fork", "cup")
            for lvl, code in (("common", 1), ("creative", 2), ("highly_creative", 3))]
    recs = _records(tmp_path, {"judgments": rows})
    line = figures.degenerate_md(recs)
    assert line.startswith("**Degenerate settings") and "comprehensive score (" in line
    assert "[its 6 judgments](../browse/aut.html#t=judgments&f.setting=comprehensive&f.method=score)" in line
    assert {t.name for t in figures.fig_agreement(recs).data} == {figures.DEGENERATE}


def test_chapter_09_draws_the_released_models_one_panel_per_measure():
    from test_compare_released import Recs, known_values

    from creval.studies.compare import figures
    from creval.studies.compare.ranking import table_released
    recs = Recs(released=known_values(), pairwise=pd.DataFrame())
    fig = figures.fig_released(recs, "d")
    assert [t.xaxis for t in fig.data] == ["x", "x2"]                # the human label first, as in the table
    label, q = fig.data
    assert list(q.y) == list(table_released(recs, "d")["model"]) and list(q.y)[-1] == "low"   # the table's order
    means = known_values().query("measure == 'q'").groupby("model")["value"].mean()
    assert list(q.x) == pytest.approx([means[m] for m in q.y])               # the table's means, unchanged
    assert all(a > 0 for a in q.error_x.array) and list(q.marker.symbol) == ["circle"] * 3
    assert fig.layout.xaxis.title.text.startswith("people: correct (n = 12)")
    assert fig.layout.xaxis2.title.text == "q (n = 12)" and fig.layout.yaxis.title.text == "model"
    assert "n = 12" in q.hovertext[0] and not fig.layout.shapes              # no chance line for a raw mean
    assert figures.count_text([3, 5, float("nan")]) == "n = 3-5"


def test_a_degenerate_table_or_figure_said_in_one_line_links_to_its_items():
    import plotly.graph_objects as go

    from creval.book.plots import figure_sentence, show, table
    from creval.studies.links import address
    where = address("aut", "judgments")
    empty = pd.DataFrame({"model": ["a", "b", "c", "d"], "x": [None] * 4, "y": [float("nan")] * 4})
    html = table(empty, "Agreement", items=where)._repr_html_()
    assert "8 of 8 cells hold no value" in html and '<a href="../browse/aut.html#t=judgments">' in html
    missing = pd.DataFrame({"not computed": ["no rows"]})
    missing.attrs.update(missing="no rows", items=where)
    assert '<a href="../browse/aut.html#t=judgments">The items behind it.</a>' in table(missing, "T")._repr_html_()
    assert "The items behind it" not in table(pd.DataFrame({"a": [1.0] * 4}), "T")._repr_html_()
    fig = go.Figure(go.Scatter(x=[1.0], y=[2.0], name="one"))
    fig.update_layout(title="Agreement", meta={"items": where})
    assert figure_sentence(fig).endswith(f"too few to draw (one: 1.00 → 2.00).* [The items behind it]({where}).")
    other = go.Figure(go.Scatter(x=[1.0], y=[2.0]))
    show(other, items=where)                                        # show passes the link to the sentence
    assert other.layout.meta["items"] == where
