"""The bad-input probe (tests/probe_bad_inputs.py) as one test, plus the cache's environment errors."""
import importlib.util
import sqlite3
from pathlib import Path

import pytest

from creval.core.cache import CallCache
from creval.core.errors import CrevalError

_spec = importlib.util.spec_from_file_location("probe", Path(__file__).parents[1] / "probe_bad_inputs.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_every_bad_input_gives_one_message_and_exit_2(tmp_path):
    failures = []
    for name, argv, env, frag in probe.probes(tmp_path):
        why = probe.check(probe.run_probe(argv, env), frag)
        if why:
            failures.append(f"{name}: {why}")
    assert failures == []


def test_garbage_file_as_cache_is_one_sentence(tmp_path):
    bad = tmp_path / "calls.sqlite"
    bad.write_text("not a database\n" * 50)
    with pytest.raises(CrevalError, match="not a usable SQLite database"):
        CallCache(bad)


def test_unwritable_cache_folder_is_one_sentence(tmp_path):
    ro = tmp_path / "ro"
    ro.write_text("a file where a folder should be")
    with pytest.raises(CrevalError, match="cannot create the call cache"):
        CallCache(ro / "sub" / "calls.sqlite")
    assert sqlite3.sqlite_version


def test_book_finds_its_profile_from_another_folder(tmp_path, monkeypatch):
    from creval.commands.book import params_path
    from creval.core.paths import REPO
    monkeypatch.chdir(tmp_path)
    assert params_path(None) == REPO / "params/default.yaml"
    assert params_path("params/smoke.yaml") == REPO / "params/smoke.yaml"
    (tmp_path / "params").mkdir()
    (tmp_path / "params/smoke.yaml").write_text("seed: 1\n")          # a profile of the user's own wins
    assert params_path("params/smoke.yaml") == Path("params/smoke.yaml")


def _main_raising(monkeypatch, exc):
    """Run ``cli.main`` with a command whose work raises ``exc`` (what a full disk or a read-only data home
    raise mid-run) and return (exit code, stderr lines)."""
    import argparse

    from creval import cli

    def parser():
        p = argparse.ArgumentParser(prog="creval")
        p.set_defaults(func=lambda args: (_ for _ in ()).throw(exc))
        return p
    monkeypatch.setattr(cli, "build_parser", parser)
    return cli.main([])


@pytest.mark.parametrize("exc, fix", [
    (OSError(28, "No space left on device", "/data/runs/default/aut/x/records.jsonl"), "free some disk space"),
    (OSError(30, "Read-only file system", "/data/cache/calls.sqlite"), "CREVAL_HOME"),
    (sqlite3.OperationalError("database or disk is full"), "free disk space"),
])
def test_full_disk_or_read_only_home_is_one_sentence(monkeypatch, capsys, exc, fix):
    assert _main_raising(monkeypatch, exc) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines[0].startswith("creval: error: ") and "Traceback" not in err
    assert fix in err and "rerun" in err
    if isinstance(exc, OSError):
        assert exc.filename in lines[0]          # the message names the file


def test_other_os_errors_are_not_swallowed(monkeypatch):
    with pytest.raises(OSError):
        _main_raising(monkeypatch, OSError(5, "Input/output error", "/x"))


def test_the_old_perplexity_flag_still_works_and_says_its_new_name(tmp_path, capsys):
    # grade's and metrics ppl's --model meant the perplexity model; it is --ppl-model now, and the old name says so
    from creval.cli import build_parser
    p = build_parser()
    new = p.parse_args(["metrics", "ppl", "x.csv", "--ppl-model", "m1"])
    old = p.parse_args(["metrics", "ppl", "x.csv", "--model", "m1"])
    assert new.model == old.model == "m1" and "--model is now --ppl-model" in capsys.readouterr().err
    assert p.parse_args(["grade", "x.csv", "--labels", "y", "--model", "m2"]).model == "m2"
    assert "--model is now --ppl-model" in capsys.readouterr().err
