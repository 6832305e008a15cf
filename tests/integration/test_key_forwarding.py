"""A key goes only to the host it belongs to. A real local HTTP server (stdlib, in a thread) records every
request's headers; a planted OPENAI_API_KEY must reach neither it nor any file the run writes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from creval.core.errors import CrevalError
from creval.models.spec import ModelSpec

pytestmark = pytest.mark.integration

PLANTED = "sk-PLANTED-openai-key-0123456789"
OWN = "own-server-key-9876543210"


class Recorder(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):                                          # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        Recorder.seen.append({"path": self.path, "headers": dict(self.headers.items()), "body": body.decode()})
        n = json.loads(body).get("n", 1) or 1
        reply = {"choices": [{"index": i, "message": {"role": "assistant", "content": "Verdict: yes"},
                              "finish_reason": "stop"} for i in range(n)],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture
def server():
    Recorder.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def _spec(tmp_path: Path, base_url: str, name: str = "local-test", **extra) -> Path:
    p = tmp_path / f"{name}.yaml"
    lines = ["backend: openai", "model: served-model", f"base_url: {base_url}", "concurrency: 2"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    p.write_text("\n".join(lines) + "\n")
    return p


def _headers_text() -> str:
    return json.dumps(Recorder.seen)


def test_default_key_never_goes_to_a_custom_server(server, tmp_path, monkeypatch):
    """No api_key_env and a custom base_url: the request carries no Authorization at all; the CLI run's
    verdicts, transcripts, manifest and cache hold no trace of the key."""
    spec = _spec(tmp_path, server)
    (tmp_path / "pairs.jsonl").write_text(json.dumps({"problem": "Open a jar without tools.",
                                                      "solution": "Tap the lid with a spoon."}) + "\n")
    env = {**os.environ, "OPENAI_API_KEY": PLANTED, "CREVAL_CACHE": str(tmp_path / "cache.sqlite"),
           "CREVAL_HOME": str(tmp_path / "home")}
    r = subprocess.run([sys.executable, "-m", "creval", "judge", str(tmp_path / "pairs.jsonl"), "--out",
                        str(tmp_path / "out"), "--method", "zero-shot", "--model", str(spec)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert Recorder.seen, "the server received no request"
    assert all("authorization" not in {k.lower() for k in s["headers"]} for s in Recorder.seen)
    assert PLANTED not in _headers_text()
    assert PLANTED not in r.stdout + r.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "verdicts.jsonl" for p in files) and any(p.name == "cache.sqlite" for p in files)
    leaked = [str(p) for p in files if PLANTED.encode() in p.read_bytes()]
    assert leaked == []


def test_own_key_goes_only_to_its_own_server(server, tmp_path, monkeypatch):
    """A spec's own api_key_env is sent to its base_url, and the OpenAI key is not."""
    from creval.models.registry import load_model
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("MY_SERVER_KEY", OWN)
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "cache.sqlite"))
    m = load_model(str(_spec(tmp_path, server, name="own-key", api_key_env="MY_SERVER_KEY")))
    assert m.chat([{"role": "user", "content": "hello"}]).text == "Verdict: yes"
    auth = [v for s in Recorder.seen for k, v in s["headers"].items() if k.lower() == "authorization"]
    assert auth == [f"Bearer {OWN}"]
    assert PLANTED not in _headers_text()
    assert PLANTED.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_openai_key_named_for_another_host_is_refused(server, tmp_path, monkeypatch):
    """A spec that names OPENAI_API_KEY for a server that is not OpenAI's is an error before any request."""
    from creval.models.openai_compat import OpenAIBackend
    from creval.models.reach import api_key_for
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    spec = ModelSpec(name="x", backend="openai", model="m", base_url=server, api_key_env="OPENAI_API_KEY")
    with pytest.raises(CrevalError, match="would send OPENAI_API_KEY to 127.0.0.1"):
        OpenAIBackend(spec)
    assert Recorder.seen == []
    # the official endpoint, with or without a base_url, does get the OpenAI key
    assert api_key_for(ModelSpec(name="o", backend="openai", model="m")) == PLANTED
    assert api_key_for(ModelSpec(name="o", backend="openai", model="m",
                                 base_url="https://api.openai.com/v1")) == PLANTED
