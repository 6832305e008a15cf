"""Test isolation: each test session gets its own empty call cache, so integration tests really call
models. Trained artifacts (the NLI cross-encoder) stay in data/artifacts and are reused."""
import http.server
import os
import tempfile
import threading
from functools import partial

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


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over tmp_path/www (downloads without a network); yields (folder, base url)."""
    www = tmp_path / "www"
    www.mkdir(exist_ok=True)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield www, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
