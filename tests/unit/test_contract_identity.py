"""The run id of every study moves when an identity field changes, and only then: every field of every
Config is changed once (a field this test cannot change is a failure, not a skip)."""
import pytest

from creval.studies.registry import STUDIES

# fields whose generic change ("x" appended, n + 1, ...) is refused as invalid: a valid other value
VALID_OTHER = {"divergent_sweep_domain": "hypogen", "upstream_params": {"divergent_limit": 3}}


def other_value(field: str, v):
    """A different, valid value of a Config field."""
    if field in VALID_OTHER:
        return VALID_OTHER[field]
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "-x"
    if isinstance(v, tuple):
        return list(v[:-1]) if v else ["x"]
    raise AssertionError(f"{field}: no way to change a {type(v).__name__}; add it to VALID_OTHER")


@pytest.mark.parametrize("name", list(STUDIES))
def test_run_id_moves_exactly_with_identity(name):
    cls = STUDIES[name].config
    base = cls()
    assert cls.keys(), name
    for f in cls.keys():
        other = other_value(f, getattr(base, f))
        changed = cls.from_params({**base.to_params(), f: other})      # a refusal fails the test
        assert getattr(changed, f) != getattr(base, f), f
        if f in cls.identity_keys():
            assert changed.run_id != base.run_id, f
        else:
            assert changed.run_id == base.run_id, f
