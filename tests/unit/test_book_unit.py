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
    assert load_params(p, ["divergent_limit=5", "models=[x, y]"]) == {"model": "a", "divergent_limit": 5,
                                                                      "models": ["x", "y"]}
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
        assert all(c.get("id") for c in cells), f"{ch} has cells without an id (nbformat 4.5 wants one)"
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


def test_rendered_pages_share_one_plotly_js(tmp_path):
    import plotly.graph_objects as go

    from creval.book.plots import figure_html
    from creval.book.render import PLOTLY_FILE, share_plotly
    site = tmp_path / "site"
    (site / "chapters").mkdir(parents=True)
    fig = figure_html(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), include_js=True)
    for page in (site / "chapters/a.html", site / "chapters/b.html", site / "top.html"):
        page.write_text(f"<html><body>{fig}</body></html>")
    (site / "index.html").write_text("<html><body>no figure</body></html>")
    before = sum(p.stat().st_size for p in site.rglob("*.html"))
    assert share_plotly(site) == 3
    js = (site / PLOTLY_FILE).read_text()
    assert len(js) > 1_000_000                                                   # the library, once
    assert 'src="../plotly.min.js"' in (site / "chapters/a.html").read_text()
    assert 'src="plotly.min.js"' in (site / "top.html").read_text()
    after = sum(p.stat().st_size for p in site.rglob("*.html")) + len(js)
    assert after < before - 1.9 * len(js)                                        # three copies became one
    assert share_plotly(site) == 0                                               # idempotent


def test_study_summary_says_whether_a_run_was_new_resumed_or_read_back(tmp_path):
    from creval.book.studies import start_state, summary_line
    run = tmp_path / "run"
    assert start_state(run) == "new"
    run.mkdir()
    (run / "steps.jsonl").write_text('{"a": 1}\n')
    assert start_state(run) == "resumed"
    (run / "manifest.json").write_text(json.dumps({"complete": True, "params": {"run_id": "x"}}))
    assert start_state(run) == "finished"
    usage = {"calls_made": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    line = summary_line({"study": "divergent", "state": "resumed", "error": None, "seconds": 1.0, "usage": usage,
                         "run_dir": str(run)})
    assert "resumed an interrupted run" in line and "calls 0 made, 0 from cache" in line


def test_the_ledger_streams_only_where_it_is_told(tmp_path, monkeypatch):
    from creval.core.ledger import CallRecord, Ledger
    monkeypatch.setenv("CREVAL_LEDGER_FILE", str(tmp_path / "env.jsonl"))
    ledger = Ledger()
    ledger.add(CallRecord("chat", "m", cached=False))
    assert not (tmp_path / "env.jsonl").exists()                     # the environment is not read
    ledger.stream_to(tmp_path / "a.jsonl")
    ledger.add(CallRecord("chat", "m", cached=True, input_tokens=2))
    ledger.stream_to(None)
    ledger.add(CallRecord("chat", "m", cached=False))
    rows = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert [(r["cached"], r["input_tokens"]) for r in rows] == [(True, 2)]
    assert ledger.totals.total["calls_made"] == 2 and ledger.totals.total["cache_hits"] == 1


def test_the_command_line_streams_a_command_s_calls_to_its_ledger_file(tmp_path, monkeypatch):
    import argparse

    from creval import cli
    from creval.core.ledger import LEDGER, CallRecord

    def parser():
        p = argparse.ArgumentParser()
        p.add_argument("--ledger-file", default=None)
        p.set_defaults(func=lambda args: LEDGER.add(CallRecord("embed", "e", cached=False, input_tokens=5)) or 0)
        return p
    monkeypatch.setattr(cli, "build_parser", parser)
    assert cli.main(["--ledger-file", str(tmp_path / "calls.jsonl")]) == 0
    assert [json.loads(x)["input_tokens"] for x in (tmp_path / "calls.jsonl").read_text().splitlines()] == [5]
    assert LEDGER.stream is None                                     # the next command in this process: no file
    monkeypatch.undo()                                                # the real parser: the variable is its default
    monkeypatch.setenv("CREVAL_LEDGER_FILE", str(tmp_path / "env.jsonl"))
    assert cli.build_parser().parse_args(["models"]).ledger_file == str(tmp_path / "env.jsonl")


def test_plotly_js_is_inlined_once_per_page_and_reset_starts_a_new_page():
    import plotly.graph_objects as go

    from creval.book import plots
    page, fig = plots.PlotlyPage(), go.Figure(go.Bar(x=[1], y=[2]))
    first, second = page.html(fig), page.html(fig)
    assert "window._crevalDefine" in first and "window._crevalDefine" not in second
    assert len(first) > len(second) + 1_000_000                        # plotly.js itself, once
    page.reset()
    assert "window._crevalDefine" in page.html(fig)
    assert plots.PAGE is not page and not hasattr(plots, "_embedded")
