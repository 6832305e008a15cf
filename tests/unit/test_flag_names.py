"""One name per parameter on the command line: the judge model is ``--judge-model`` (the parameter
``judge_model``) on every command that takes one; the old flags still work and say the new name."""
import pytest

from creval.cli import build_parser


@pytest.mark.parametrize("argv,old", [(["judge", "pairs.jsonl", "--out", "o"], "--model"),
                                      (["aut", "score", "uses.csv"], "--judge")])
def test_the_judge_model_flag_has_one_name_and_the_old_one_says_it(argv, old, capsys):
    parser = build_parser()
    assert parser.parse_args([*argv, "--judge-model", "m1"]).judge_model == "m1"
    assert capsys.readouterr().err == ""
    assert parser.parse_args([*argv, old, "m2"]).judge_model == "m2"
    assert f"{old} is now --judge-model" in capsys.readouterr().err


def test_the_old_flags_are_not_in_the_help(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["aut", "score", "--help"])
    out = capsys.readouterr().out
    assert "--judge-model" in out and "--judge " not in out


def test_judge_means_the_judge_model_everywhere_and_the_method_is_method(capsys):
    """`creval judge` picked its judging method with --judge, which everywhere else names the judge's model: the
    method is --method now, and --judge there still works and says the new name."""
    parser = build_parser()
    assert parser.parse_args(["judge", "p.jsonl", "--out", "o", "--method", "chateval"]).method == "chateval"
    assert parser.parse_args(["judge", "p.jsonl", "--out", "o", "--judge", "zero-shot"]).method == "zero-shot"
    assert "--judge is now --method" in capsys.readouterr().err
