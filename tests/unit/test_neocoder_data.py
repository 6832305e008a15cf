"""The NeoCoder loader: the state rule, Table 1, flags, the fallback to the bundled sample."""
import pytest

from creval.core import paths
from creval.datasets import neocoder as neocoder_data


def test_state_rule_drops_duplicate_rounds():
    banned = [(), ("a",), ("a",), ("a", "b"), ("a", "b"), ("a", "b", "c")]
    assert neocoder_data.states(banned) == {0: 0, 1: 1, 2: 3, 3: 5}
    assert neocoder_data.states([(), ("x",)]) == {0: 0, 1: 1}


def test_sample_problems_load(monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.delenv("CREVAL_NEOCODER_DIR", raising=False)
    ps, src = neocoder_data.load()
    assert src.is_sample and len(ps) == 3
    p = {x.native: x for x in ps}
    assert p["S3A"].flags.single_test and not p["S1A"].flags.single_test
    assert p["S2A"].flags.yes_no
    assert neocoder_data.table1(ps) == {0: 3, 1: 3, 2: 3, 3: 2, 4: 2, 5: 0}
    c = p["S1A"].cases[0]
    assert c.stdin(with_count=True) == "1\n3\n1 2 4\n" and c.expected == ("6",)
    assert p["S1A"].rounds[0].banned == () and p["S1A"].rounds[1].banned == ("for loop",)


def test_statement_rendering_matches_the_stored_rounds(monkeypatch):
    from creval.studies.neocoder.run import constrained_statement
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    ps, _ = neocoder_data.load()
    p = ps[0]
    r = p.rounds[3]
    assert constrained_statement(p.statement, list(reversed(r.banned))) == r.statement


@pytest.mark.skipif(paths.shared_data_dir() is None or not (paths.shared_data_dir() / "neocoder").exists(),
                    reason="the staged NeoCoder data is not here")
def test_table1_on_the_real_data(monkeypatch):
    monkeypatch.delenv("CREVAL_NEOCODER_DIR", raising=False)
    ps, src = neocoder_data.load()
    assert src.kind == "shared" and len(ps) == 199
    assert neocoder_data.table1(ps) == {0: 199, 1: 199, 2: 198, 3: 194, 4: 176, 5: 97}
    flags = [p.flags for p in ps]
    assert sum(f.single_test for f in flags) == 3 and sum(f.padded_output for f in flags) == 5
    assert sum(f.no_humans for f in flags) == 1 and sum(f.verifiable for f in flags) == 152
