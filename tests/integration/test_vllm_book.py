"""`creval book --engine vllm`: the embedded model's chapters run through the local vLLM server (the session's,
reused), the manifest names the engine, and a warm rebuild makes no call."""
import json
import os
import subprocess
import sys

import pytest

from creval.core.paths import REPO
from creval.models import vllm_local

pytestmark = pytest.mark.integration


def _book(out, root, cache):
    cmd = [sys.executable, "-m", "creval", "book", "--params", "params/smoke.yaml", "--engine", "vllm",
           "--chapters", "01", "--render", "none", "--out", str(out), "-p", f"run_root={root}"]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "CREVAL_CACHE": str(cache)}, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    return json.loads((out / "book-manifest.json").read_text()), r.stderr


def test_book_on_the_vllm_engine_then_warm(vllm_server, tmp_path):
    cold, err = _book(tmp_path / "cold", tmp_path / "runs", tmp_path / "calls.sqlite")
    engine = cold["engine"]
    assert engine["engine"] == "vllm" and engine["url"] == vllm_server.url and engine["reused"] is True
    assert "engine: vllm" in err and "reusing the local server" in err
    assert cold["params"]["model"] == vllm_local.SERVED and cold["params"]["judge_model"] == vllm_local.SERVED
    assert all(c["error"] is None for c in cold["chapters"]) and cold["studies"][0]["error"] is None
    assert any(k.endswith(f":{vllm_local.SERVED}") and v["calls_made"] > 0
               for k, v in cold["usage"]["by_kind_model"].items())
    warm, _ = _book(tmp_path / "warm", tmp_path / "runs", tmp_path / "calls.sqlite")
    assert warm["usage"]["total"]["calls_made"] == 0 and warm["engine"]["engine"] == "vllm"
    assert vllm_local.running() is not None                # a server the book did not start is left running
