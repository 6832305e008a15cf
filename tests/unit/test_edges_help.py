"""Help texts: user commands described, developer tools hidden but still callable."""
import pytest

from creval.cli import build_parser


def _help(argv):
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)


def test_sync_params_is_hidden_from_user_help_but_works(capsys):
    _help(["--help"])
    out = capsys.readouterr().out
    assert "sync-params" not in out and "models" in out and "book" in out
    args = build_parser().parse_args(["sync-params", "--check"])
    assert args.check is True and callable(args.func)


@pytest.mark.parametrize("cmd,words", [("book", "papermill"), ("batch", "For each MODEL"), ("models", "TCP connection"),
                                       ("sync-params", "Developer tool")])
def test_commands_have_descriptions(capsys, cmd, words):
    _help([cmd, "--help"])
    assert words in capsys.readouterr().out.replace("\n", " ")


def test_run_help_lists_each_parameter_with_its_default(capsys):
    from creval.studies.registry import STUDIES
    _help(["run", "divergent", "--help"])
    out = capsys.readouterr().out
    cfg = STUDIES["divergent"].config
    assert f"divergent_limit* = {cfg.defaults()['divergent_limit']}" in out and "# problems per domain" in out
    assert "run_root = runs/default" in out                        # not marked: it does not change the run id
