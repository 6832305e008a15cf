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


@pytest.mark.parametrize("argv,successor", [
    (["aut", "run", "--params", "params/smoke.yaml", "-p", "aut_items=2"], "`creval aut table` (the agreement table)"),
    (["neocoder", "run", "-p", "model=x"], "`creval run neocoder`"),
    (["neocoder", "replay"], "`creval run neocoder`"),
])
def test_run_means_a_study_run_and_old_commands_name_their_successor(capsys, argv, successor):
    from creval.cli import main
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"creval: error: `creval {argv[0]} {argv[1]}` was retired: use {successor}")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_table_printer_is_aut_table_and_the_old_names_stay_out_of_the_help(capsys):
    from creval.cli import build_parser
    from creval.commands.aut import table
    args = build_parser().parse_args(["aut", "table", "-p", "aut_items=2"])
    assert args.func is table and args.overrides == ["aut_items=2"]
    for cmd, listed in (("aut", "{table,score}"), ("neocoder", "{table,humans}")):
        with pytest.raises(SystemExit):
            build_parser().parse_args([cmd, "--help"])
        out = capsys.readouterr().out
        assert listed in out and not [line for line in out.splitlines() if line.startswith(("    run", "    replay"))]


def test_the_neocoder_table_printer_is_neocoder_table_and_score_still_reaches_it(capsys, monkeypatch):
    from creval.cli import build_parser, main
    from creval.commands import neocoder
    args = build_parser().parse_args(["neocoder", "table", "-p", "neocoder_problems=2"])
    assert args.func is neocoder.table and args.overrides == ["neocoder_problems=2"]
    seen = []
    monkeypatch.setattr(neocoder, "table", lambda a: seen.append(a.overrides) or 0)
    assert main(["neocoder", "score", "-p", "neocoder_problems=3"]) == 0
    assert seen == [["neocoder_problems=3"]]
    assert "`creval neocoder score` is now `creval neocoder table`" in capsys.readouterr().err
