"""`creval aut score FILE`: the input file's problems are one clear error naming the file."""
import pytest

from creval.commands.aut import read_responses
from creval.core.errors import CrevalError


def test_read_responses_checks_columns_and_empty_cells(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("object,response\nfork, comb a doll's hair \nbrick,doorstop\n", encoding="utf-8")
    assert read_responses(f) == [{"object": "fork", "response": "comb a doll's hair"},
                                 {"object": "brick", "response": "doorstop"}]
    f.write_text("thing,use\nfork,comb\n", encoding="utf-8")
    with pytest.raises(CrevalError, match="columns 'object' and 'response'") as e:
        read_responses(f)
    assert str(f) in e.value.problem
    f.write_text("object,response\nfork,\n", encoding="utf-8")
    with pytest.raises(CrevalError, match="line 2"):
        read_responses(f)
    with pytest.raises(CrevalError, match="does not exist"):
        read_responses(tmp_path / "missing.csv")
