import json

import pytest

from creval.book.execute import book_structure, declared_parameters
from creval.book.params import load_params
from creval.cli import main
from creval.core.errors import CrevalError
from creval.core.paths import REPO


def test_load_params_and_overrides(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text("model: a\nlimit: 3\n")
    assert load_params(p, ["limit=5", "models=[x, y]"]) == {"model": "a", "limit": 5, "models": ["x", "y"]}
    p.write_text("model: a\n")
    with pytest.raises(CrevalError, match="does not exist"):
        load_params(tmp_path / "none.yaml")
    p.write_text("model: [a\n")
    with pytest.raises(CrevalError, match="not valid YAML"):
        load_params(p)
    p.write_text("- a\n- b\n")
    with pytest.raises(CrevalError, match="flat mapping"):
        load_params(p)
    p.write_text("model: a\n")
    with pytest.raises(CrevalError, match="key=value"):
        load_params(p, ["oops"])


def test_chapters_exist_clean_and_parameterised():
    chapters = [f for _, f in book_structure() if f.endswith(".ipynb")]
    assert chapters and chapters[0] == "chapters/01-apparatus.ipynb"
    load_params(REPO / "params/default.yaml")
    load_params(REPO / "params/smoke.yaml")
    for ch in chapters:
        nb = json.loads((REPO / ch).read_text())
        cells = nb["cells"]
        assert cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
        assert "parameters" in cells[1]["metadata"].get("tags", []), ch
        for c in cells:
            if c["cell_type"] == "code":
                assert not c.get("outputs") and c.get("execution_count") is None, f"{ch} is committed with outputs"
        # papermill reads the same parameters we do (a line it cannot parse makes it warn on every run)
        import papermill
        assert set(papermill.inspect_notebook(str(REPO / ch))) == declared_parameters(REPO / ch), ch


def test_cli_reports_user_mistakes_without_traceback(capsys):
    assert main(["book", "--params", "no/such/file.yaml"]) == 2
    err = capsys.readouterr().err
    assert "parameter file no/such/file.yaml does not exist" in err and "Traceback" not in err


def test_slowest_phases_rank_the_seconds_of_calls_made():
    from creval.book.studies import phases_lines, slowest_phases
    u = lambda s, n: {"seconds": s, "calls_made": n, "input_tokens": 10 * n, "output_tokens": n}
    rows = [{"study": "a", "by_kind_model": {"chat:m": u(5.0, 2), "nli:x": u(0.5, 9)}},
            {"study": "b", "by_kind_model": {"sample:m": u(12.0, 4)}}, {"study": "c", "by_kind_model": {}}]
    top = slowest_phases(rows, k=2)
    assert [(p["study"], p["phase"]) for p in top] == [("b", "sample:m"), ("a", "chat:m")]
    assert top[0]["calls"] == 4 and top[0]["tokens in/out"] == "40/4"
    assert phases_lines(rows, k=1) == ["slowest phase: b · sample:m: 12.0 s in 4 calls (tokens 40/4)"]
