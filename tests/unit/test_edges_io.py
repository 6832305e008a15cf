"""Messages about a broken dataset name the file's real line."""
import json

import pytest

from creval.core.errors import CrevalError
from creval.core.io import read_json_rows


def test_broken_second_jsonl_line_is_reported_as_line_2(tmp_path):
    p = tmp_path / "data.jsonl"
    p.write_text(json.dumps({"a": 1}) + "\n\n{broken\n" + json.dumps({"b": 2}) + "\n")
    with pytest.raises(CrevalError, match=r"line 3 is not valid JSON"):
        read_json_rows(p)


def test_good_jsonl_reads_every_row(tmp_path):
    p = tmp_path / "data.jsonl"
    p.write_text(json.dumps({"a": 1}) + "\n" + json.dumps({"b": 2}) + "\n")
    assert read_json_rows(p) == [{"a": 1}, {"b": 2}]
