"""``creval judge FILE``: a user's own problem-solution pairs, read from .jsonl or .csv, with the study's defaults."""
import json

import pytest

from creval.commands.judge import read_pairs
from creval.core.errors import CrevalError
from creval.studies.convergent.config import ConvergentConfig


def test_reads_jsonl_and_csv_rows_and_numbers_unnamed_pairs(tmp_path):
    j = tmp_path / "mine.jsonl"
    j.write_text(json.dumps({"problem": "Open a jar.", "solution": "Use a rubber band."}) + "\n" +
                 json.dumps({"pair_id": "x", "text": "Reach a shelf.", "solution": "Stand on a crate."}) + "\n")
    from creval.judges import pair_of
    assert [pair_of(r) for r in read_pairs(j)] == [("1", "Open a jar.", "Use a rubber band."),
                                                   ("x", "Reach a shelf.", "Stand on a crate.")]
    c = tmp_path / "mine.csv"
    c.write_text("problem_id,model,problem_text,solution\np7,m,Fix a leak.,Wrap it in tape.\n")
    assert [pair_of(r) for r in read_pairs(c)] == [("p7::m", "Fix a leak.", "Wrap it in tape.")]


@pytest.mark.parametrize("name,text,message", [
    ("a.jsonl", '{"problem": "P"}\n', "a.jsonl: pair 1 has no problem text or solution"),
    ("a.csv", "solution\nS\n", "a.csv: pair 1 has no problem text or solution"),
    ("a.jsonl", "", "a.jsonl: contains no pairs"),
    ("a.txt", "P S\n", "a.txt: unsupported file type .txt"),
    ("a.jsonl", '{"problem": "P"\n{"problem": "Q", "solution": "S"}\n', "a.jsonl: line 1 is not valid JSON"),
    ("a.csv", "pair_id,problem,solution\nx,P,S\nx,Q,T\n", "a.csv: pair x appears twice")])
def test_bad_files_give_one_error_naming_the_file(tmp_path, name, text, message):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(CrevalError, match=message):
        read_pairs(f)
    with pytest.raises(CrevalError, match="no such file"):
        read_pairs(tmp_path / "missing.jsonl")


def test_the_command_takes_its_defaults_from_the_config():
    from creval.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    d = {a.dest: a.default for a in sub["judge"]._actions}
    c = ConvergentConfig()
    assert (d["method"], d["judge_model"], d["threshold"], d["k"], d["j"], d["l"], d["max_rounds"], d["word_limit"],
            d["retries"], d["verdict_via"], d["seed"]) == (
        c.convergent_bench_judge, c.judge_model, c.convergent_judge_threshold, c.convergent_judge_k,
        c.convergent_judge_j, c.convergent_judge_l, c.convergent_judge_max_rounds,
        c.convergent_judge_word_limit, c.convergent_judge_retries, c.convergent_judge_verdict_via, c.seed)
