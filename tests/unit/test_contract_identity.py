"""The run id of every study moves when an identity field changes, and only then."""
import pytest

from creval.core.errors import CrevalError
from creval.studies.registry import STUDIES


@pytest.mark.parametrize("name", list(STUDIES))
def test_run_id_moves_exactly_with_identity(name):
    cls = STUDIES[name].config
    base = cls()
    for f in cls.keys():
        v = getattr(base, f)
        if isinstance(v, bool):
            other = not v
        elif isinstance(v, (int, float)):
            other = v + 1
        elif isinstance(v, str):
            other = v + "-x"
        elif isinstance(v, tuple):
            other = v[:-1] if v else ("x",)
        else:
            continue
        try:
            changed = cls.from_params({**base.to_params(), f: list(other) if isinstance(other, tuple) else other})
            changed.run_id
        except CrevalError:          # e.g. an unknown domain name: refused before any run id is made
            continue
        if f in cls.identity_keys():
            assert changed.run_id != base.run_id, f
        else:
            assert changed.run_id == base.run_id, f
