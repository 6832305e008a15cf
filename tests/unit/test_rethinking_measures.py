"""Chapter 06 pieces without a model: perplexity records from log-likelihoods (fake model), the CLI's
creativity index, the TTCW loader on its bundled sample, and the MacGyver loaders added for the chapter."""
import math
from types import SimpleNamespace

import pytest

from creval.cli import main
from creval.measures.perplexity import PPLRecord, perplexity_many


class FakeLL:
    name = "fake"

    def __init__(self):
        self.seen = []

    def loglikelihood_many(self, items, tags=None):
        self.seen += items
        return [SimpleNamespace(sum_logprob=-2.0 * len(t.split()), n_tokens=len(t.split()), n_bytes=len(t.encode()),
                                context_tokens=3 if c else 0, model="fake", quantisation="q4", windows=1)
                for t, c in items]


def test_perplexity_records():
    m = FakeLL()
    a, b = perplexity_many(m, ["a b c d", "xy"], [None, "problem"])
    assert a.ppl == pytest.approx(math.e ** 2) and a.n_tokens == 4 and a.context_tokens == 0
    assert a.bits_per_byte == pytest.approx(8.0 / math.log(2) / 7)
    assert b.context_tokens == 3 and m.seen == [("a b c d", None), ("xy", "problem\n")]    # joined by a new line
    assert PPLRecord.from_dict(a.to_dict()) == a
    with pytest.raises(ValueError):
        perplexity_many(m, ["a"], [None, None])


def test_cli_ci_pool(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text("tie the rope to the chair and pull\nuse the rope to the chair to climb\n"
                 "something else entirely new here\n")
    assert main(["metrics", "ci", str(f), "--L", "3", "3"]) == 0
    out = capsys.readouterr().out
    assert "[the rope to the chair]" in out            # reused from the other line
    assert "mean CI" in out


def test_cli_ci_bad_range(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text("a b c\n")
    assert main(["metrics", "ci", str(f), "--L", "4", "2"]) != 0


def test_ttcw_sample_has_stories_but_no_verdicts(monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.delenv("CREVAL_TTCW_DIR", raising=False)
    from creval.datasets import ttcw
    st = ttcw.load_stories()
    assert len(st) == 6 and st["text"].notna().all() and set(st["source"]) == {"Claude", "GPT4"}
    assert st["group"].nunique() == 3
    assert not ttcw.has_verdicts()
