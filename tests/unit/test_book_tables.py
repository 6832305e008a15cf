"""How a chapter's table reads (issue 53): counts as integers, measured values rounded, nested values as text
rather than Python reprs, text left-aligned, and a CSV of the full values beside every table."""
import csv
import io
import json
import re
from urllib.parse import unquote

import numpy as np
import pandas as pd

from creval.book.plots import csv_name, table, whole_column
from creval.studies.tables import readable


def cells(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", html, re.S)]


def test_nested_values_read_as_text_without_brackets_or_quotes():
    assert readable({"seed": 0, "data_seed": 42}) == "seed: 0, data_seed: 42"
    assert readable({"m": {"backend": "llamacpp", "kind": "raw"}}) == "m: (backend: llamacpp, kind: raw)"
    assert readable([1, [2, 3], "x"]) == "1, (2, 3), x" and readable({}) == "none" and readable(2.5) == "2.5"


def test_a_count_column_is_whole_and_a_share_stays_a_decimal_even_at_zero_or_one():
    assert whole_column("calls_made", pd.Series([3292.0, np.nan]))
    assert whole_column("tokens in", pd.Series([12.0, 40.0])) and whole_column("value", pd.Series([0.0, 17.0]))
    assert not whole_column("auroc", pd.Series([1.0, 0.0])) and not whole_column("n", pd.Series([2.5, 3.0]))
    assert not whole_column("n", pd.Series([np.nan]))


def test_the_page_shows_counts_as_integers_rounded_values_and_no_python_repr():
    df = pd.DataFrame({"what": ["a", "b"], "calls_made": [3292.0, np.nan], "auroc": [1.0, 0.0],
                       "share": [0.51234, 0.2], "models": [{"m": {"backend": "hf"}}, ["x", "y"]]})
    df.attrs["caption"] = "Table 3: calls | cost"
    html = table(df)._repr_html_()
    shown = cells(html.split("</table>")[0])
    assert shown == ["a", "3292", "1.000", "0.512", "m: (backend: hf)", "b", "–", "0.000", "0.200", "x, y"]
    assert "{" not in "".join(shown) and "[" not in "".join(shown)
    assert "text-align: left" in html and "<caption>Table 3: calls | cost</caption>" in html
    assert list(df["calls_made"].isna()) == [False, True]            # the caller's frame is left as it was


def test_every_table_carries_its_full_values_as_csv():
    df = pd.DataFrame({"model": ["a", "b"], "auroc": [0.81449, 0.5], "seeds": [{"seed": 0}, [1, 2]]})
    html = table(df, "Table 3: pass@1 (both judges)")._repr_html_()
    link = re.search(r'<a download="([^"]+)" href="data:text/csv;charset=utf-8,([^"]+)"', html)
    assert link and link.group(1) == "table-3-pass-1-both-judges.csv"
    rows = list(csv.DictReader(io.StringIO(unquote(link.group(2)))))
    assert [r["model"] for r in rows] == ["a", "b"] and float(rows[0]["auroc"]) == 0.81449   # not the rounded 0.814
    assert json.loads(rows[0]["seeds"]) == {"seed": 0} and json.loads(rows[1]["seeds"]) == [1, 2]
    assert csv_name("") == "table.csv"


def test_a_long_figure_title_wraps_onto_lines_that_fit():
    import plotly.graph_objects as go

    from creval.book.plots import readable_titles, wrapped
    long = "Agreement (src), mean over objects (degenerate: a constant score or a copied order, named in the table)"
    assert max(len(line) for line in wrapped(long, 40).split("<br>")) <= 40
    assert wrapped("short<br>kept", 40) == "short<br>kept"
    fig = readable_titles(go.Figure().update_layout(title=long))
    assert fig.layout.title.text.replace("<br>", " ") == long and fig.layout.margin.t >= 40 + 22 * 2
    assert readable_titles(go.Figure().update_layout(title="Short")).layout.title.text == "Short"


def test_a_figure_of_fewer_than_three_points_is_said_in_a_sentence():
    import plotly.graph_objects as go

    from creval.book.plots import figure_sentence
    from creval.studies.tables import missing_figure
    two = go.Figure(go.Scatter(x=[0.5, 1.0], y=[1.25, 1.5], name="smollm2")).update_layout(title="Entropy (Fig. 5b)")
    assert figure_sentence(two) == ("*Entropy (Fig. 5b): 2 points in these records, too few to draw "
                                    "(smollm2: 0.50 → 1.25; smollm2: 1.00 → 1.50).*")
    three = go.Figure(go.Bar(x=["a", "b", "c"], y=[1, 2, 3]))
    assert figure_sentence(three) is None
    heat = go.Figure(go.Heatmap(z=[[1]]))
    assert figure_sentence(heat) is None                                      # only point traces are counted
    gone = missing_figure("Fig. 12", "no threshold was swept")
    assert figure_sentence(gone) == "*Fig. 12: not computed from these records (no threshold was swept)*"


def test_a_mostly_empty_table_is_folded_under_a_sentence_and_a_missing_one_is_a_sentence():
    from creval.studies.tables import missing_table
    sparse = pd.DataFrame({"measure": list("abcde"), "rho": [0.5, np.nan, np.nan, np.nan, np.nan],
                           "interval": ["[0.1, 0.9]", "–", "–", "–", "–"]})
    html = table(sparse, "Table 8: entropy vs diversity")._repr_html_()
    assert html.startswith("<p><em>Table 8: entropy vs diversity: 8 of 10 cells hold no value in these records, "
                           "so the table is folded.</em></p><details")
    assert ">0.500<" in html and "download=" in html                     # the table and its CSV, one click away
    full = sparse.fillna(0.25).replace("–", "[0, 1]")
    assert not table(full, "t")._repr_html_().startswith("<p>")
    gone = table(missing_table("Fig. 12 table", "no threshold was swept"))._repr_html_()
    assert gone == "<p><em>Fig. 12 table: not computed from these records (no threshold was swept).</em></p>"


def test_text_columns_are_left_aligned_whatever_the_pandas_string_type():
    df = pd.DataFrame({"model": ["a", "b"], "note": pd.Series(["x", "y"], dtype="string"), "v": [0.5, 0.25]})
    html = table(df, "t")._repr_html_()
    css = html.split("</style>")[0]
    styled = re.findall(r"([^{}]+)\{\s*text-align: left", css)
    assert "col0" in "".join(styled) and "col1" in "".join(styled) and "col2" not in "".join(styled), css


def test_the_shown_table_is_still_the_styler_for_a_chapter_that_embeds_it():
    shown = table(pd.DataFrame({"a": [1.5]}), "x")
    assert ">1.500<" in shown.to_html() and "download=" not in shown.to_html() and shown.data["a"][0] == 1.5
