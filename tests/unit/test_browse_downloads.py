"""Downloads and provenance (issue 43): each table as CSV and Parquet that read back equal to the records, a
data dictionary from the record types, and a provenance block and cost line that say "not recorded" for
whatever a manifest lacks."""
import json
import re
from dataclasses import dataclass

import pandas as pd
import pytest

from creval.book.browse import address
from creval.book.downloads import dictionary_rows, field_notes, write_downloads
from creval.book.provenance import NOT_RECORDED, cost_line, provenance, quantisation, table_sizes
from creval.core.records import Record, column, optional, spread


@dataclass
class Rated(Record):
    item: str                  # the item's id
    score: float
    text_len: int = column("text length", 0)
    note: str | None = optional()
    raters: dict = spread("rater")


ROWS = [{"item": "a", "score": 0.5, "text length": 3, "rounds": [{"r": 1, "ok": True}], "rater1": 2},
        {"item": "b", "score": None, "text length": 4, "rounds": [], "rater1": 3, "note": "x"}]


def test_the_dictionary_names_every_column_its_type_presence_and_comment():
    rows = {r["column"]: r for r in dictionary_rows("rated", Rated)}
    assert list(rows) == ["item", "score", "text length", "note", "rater<key>"]
    assert rows["item"]["meaning"] == "the item's id" and rows["item"]["presence"] == "every row"
    assert rows["note"]["presence"] == "optional" and rows["rater<key>"]["presence"] == "one column per key"
    assert rows["score"]["type"] == "float" and rows["text length"]["presence"] == "every row (default)"
    assert field_notes(Rated) == {"item": "the item's id"}
    assert dictionary_rows("free", dict)[0]["type"] == "untyped"


def test_csv_and_parquet_read_back_equal_to_the_records(tmp_path):
    written = write_downloads({"rated": (ROWS, Rated)}, tmp_path)
    assert written[0]["rows"] == 2 and written[0]["csv"] == "rated.csv"
    csv = pd.read_csv(tmp_path / "rated.csv")
    assert [json.loads(v) for v in csv["rounds"]] == [r["rounds"] for r in ROWS]
    assert csv["item"].tolist() == ["a", "b"] and csv["text length"].tolist() == [3, 4]
    assert csv["score"].isna().tolist() == [False, True]
    pytest.importorskip("pyarrow")
    pq = pd.read_parquet(tmp_path / written[0]["parquet"])
    assert [list(map(dict, v)) for v in pq["rounds"]] == [r["rounds"] for r in ROWS]
    assert pq["note"].tolist()[1] == "x" and pq["rater1"].tolist() == [2, 3]
    text = (tmp_path / "dictionary.md").read_text()
    assert "## rated (Rated)" in text
    assert "| text length | int | every row (default) | text length, as the run wrote it |" in text


def test_a_column_of_mixed_kinds_is_json_text_in_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    rows = [{"v": 1}, {"v": "two"}, {"v": [3]}]
    (w,) = write_downloads({"mixed": (rows, dict)}, tmp_path)
    assert w["json_in_parquet"] == ["v"]
    assert pd.read_parquet(tmp_path / "mixed.parquet")["v"].tolist() == ["1", "two", "[3]"]


MANIFEST = {"git_commit": "abc123", "creval_version": "0.9", "complete": True, "seconds": 150.0,
            "params": {"run_id": "r1", "judge_model": "smollm2-135m", "data_source": "sample:/x/y/z.jsonl"},
            "seeds": {"sampling": 0},
            "models": {"smollm2-135m": {"backend": "llamacpp", "source": {"file": "smollm2-135m-Q8_0.gguf"},
                                        "logprob_kind": "raw"}},
            "usage": {"total": {"calls_made": 12, "cache_hits": 3, "input_tokens": 1000, "output_tokens": 200,
                                "cost_usd": 0.0},
                      "by_kind_model": {"chat:smollm2-135m": {"calls_made": 12, "cache_hits": 3, "input_tokens": 1000,
                                                              "output_tokens": 200, "cost_usd": 0.0, "seconds": 9.5}}}}


def test_the_cost_line_reads_the_totals_and_says_what_is_missing():
    assert cost_line(MANIFEST) == ("**What this cost:** 12 calls made and 3 served from the cache; tokens in/out "
                                   "1,000/200; $0.0000; wall time 2.5 min (the study's run, `manifest.json`).")
    assert NOT_RECORDED in cost_line({}) and "nan" not in cost_line({"seconds": float("nan")})
    assert cost_line({"seconds": 3}).count(NOT_RECORDED) == 5


def test_the_provenance_block_shows_each_part_and_survives_an_empty_manifest():
    text = provenance(MANIFEST, "toy", source_rows=["data_source: line The real data"])
    assert "| smollm2-135m | llamacpp | not recorded | Q8_0 | raw |" in text
    assert "- judge_model: `smollm2-135m`" in text and "**Seeds**: sampling 0." in text
    assert "| chat:smollm2-135m | 12 | 3 | 1000/200 | $0.0000 | 10 s |" in text
    assert "commit `abc123`" in text and "/x/y" not in text           # the build machine's folders never shown
    empty = provenance({}, "toy")
    assert empty.count(NOT_RECORDED) >= 6 and "None" not in empty and not re.search(r"\bnan\b", empty, re.I)
    assert quantisation({"model": "org/Model-GGUF:q4_k_m"}) == "Q4_K_M" and quantisation({}) == NOT_RECORDED


def test_the_block_links_each_table_to_the_browser_with_its_rows(tmp_path):
    (tmp_path / "steps.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    (tmp_path / "calls.jsonl").write_text('{"k": 1}\n')
    assert table_sizes(tmp_path) == {"steps": 2}
    text = provenance({}, "divergent", tables=table_sizes(tmp_path))
    assert "[browse them](../browse/divergent.html) ([steps](../browse/divergent.html#t=steps) (2 rows))" in text
    assert address("aut", "judgments", {"state": "unparsed", "judge model": "m/1"}, 3) == (
        "../browse/aut.html#t=judgments&f.state=unparsed&f.judge%20model=m/1&i=3")


def test_every_column_has_a_meaning_and_the_dictionary_table_survives_a_pipe(tmp_path):
    from creval.book.downloads import column_meaning, dictionary_markdown
    rows = {r["column"]: r["meaning"] for r in dictionary_rows("rated", Rated)}
    assert rows["item"] == "the item's id"                                     # the field's own comment first
    assert rows["score"] == "the score the row gives"                           # then the shared vocabulary
    assert rows["note"] == "a remark written by the run"
    assert rows["text length"] == "text length, as the run wrote it"          # then its name (no docstring here)
    assert all(rows.values())
    assert column_meaning("n_verdicts") == "how many verdicts"
    assert column_meaning("mean_semantic_entropy") == "the mean of semantic entropy of the step's samples (nats)"
    assert column_meaning("verdict_strict") == "the judge's verdict, under the strict judge"
    assert column_meaning("diff lo").startswith("the low end of the 95% interval of diff")
    md = dictionary_markdown([{"table": "t", "column": "note", "type": "str | None", "presence": "optional",
                               "meaning": "a | b\nc"}], {})
    row = md.splitlines()[-1]
    assert row == "| note | str \\| None | optional | a \\| b c |"
    assert len(re.findall(r"(?<!\\)\|", row)) == 5                              # four cells, no more


def test_a_record_s_docstring_explains_a_column_nothing_else_names():
    from creval.book.downloads import described

    @dataclass
    class Odd(Record):
        """A row of the toy study.

        More words."""
        wibble: str

    assert described("wibble", Odd) == "wibble, as the run wrote it (Odd: A row of the toy study)"


def test_a_table_without_rows_is_its_header_and_never_an_empty_file(tmp_path):
    written = write_downloads({"rated": ([], Rated), "notes": ([], dict)}, tmp_path)
    assert [w["csv"] for w in written] == ["rated.csv", None] and not (tmp_path / "notes.csv").exists()
    back = pd.read_csv(tmp_path / "rated.csv")
    assert back.empty and list(back.columns) == ["item", "score", "text length", "note"]
