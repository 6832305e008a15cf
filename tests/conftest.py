"""Test isolation: each test session gets its own empty call cache, so integration tests really call
models. Trained artifacts (the NLI cross-encoder) stay in data/artifacts and are reused."""
import os
import tempfile

import pytest

_tmp = tempfile.mkdtemp(prefix="creval-test-cache-")
os.environ["CREVAL_CACHE"] = os.path.join(_tmp, "calls.sqlite")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Where no bubblewrap jail can run, the suite opts in to the weaker fallback (its records say isolation:
# fallback); where the jail runs, this changes nothing. The refusal without it has its own test.
os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A private, empty call cache for one test."""
    path = tmp_path / "calls.sqlite"
    monkeypatch.setenv("CREVAL_CACHE", str(path))
    return path
