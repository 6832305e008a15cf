"""Servers that misbehave (issue 52): a port nobody listens on, a host that does not resolve, a server that never
answers, one that answers a web page, plain text or JSON of another API. ``creval check`` says so in one sentence
(the URL and what came back) and exits non-zero with no ``can:`` block; a call of a study ends in the same one
sentence (a failed unit keeps it); ``--out`` given a folder writes inside it. These are plain local sockets and
HTTP servers imitating no provider: they stand for a wrong ``base_url`` (a web app, a proxy's page, another API).
"""
from __future__ import annotations

import http.server
import json
import re
import socket
import threading
import time

import pytest

from creval.core.errors import CrevalError
from creval.models.http_replies import BadReply
from creval.models.openai_compat import OpenAIBackend
from creval.models.requests import ChatRequest, LoglikelihoodRequest, SampleRequest
from creval.models.spec import ModelSpec

HI = ({"role": "user", "content": "Name one use of a brick."},)
PAGE = b"<!doctype html><html><head><title>Welcome</title></head><body>It works!</body></html>"
REPLIES = {   # what the server answers to every GET and POST: (content type, body)
    "html": ("text/html; charset=utf-8", PAGE),
    "text": ("text/plain", b"OK: service running"),
    "other-json": ("application/json", json.dumps({"status": "ok", "result": "a brick"}).encode()),
}


class Fixed:
    """A local HTTP server that answers every request with the same 200 (or, ``silent``, never answers);
    counts the requests it got."""

    def __init__(self, kind: str):
        self.kind, self.requests, self.release = kind, 0, threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                outer.requests += 1
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                if outer.kind == "silent":
                    outer.release.wait(30)
                    return
                ctype, body = REPLIES[outer.kind]
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def dead_url() -> str:
    """The URL of a port on this machine that nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


DNS_URL = "http://creval-no-such-host.invalid/v1"     # .invalid never resolves (RFC 2606)


def spec_file(tmp_path, url: str, name: str, **extra) -> str:
    p = tmp_path / f"{name}.yaml"
    lines = [f"name: {name}", "backend: openai", "model: m", f"base_url: {url}",
             "request: {timeout: %s}" % extra.pop("timeout", 5), "extra: {max_retries: 2, retry_backoff: 0.01}"]
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def backend(url: str, name: str = "bad", timeout: float = 5) -> OpenAIBackend:
    return OpenAIBackend(ModelSpec(name=name, backend="openai", model="m", base_url=url, request={"timeout": timeout},
                                   extra={"max_retries": 2, "retry_backoff": 0.01}))


def check(tmp_path, url: str, name: str, capsys, **extra) -> tuple[int, str, str]:
    from creval.cli import main
    code = main(["check", spec_file(tmp_path, url, name, **extra)])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_sentence(err: str) -> str:
    """The error line of ``creval: error: ...`` (its fix on the next line); fails on a traceback or two errors."""
    assert "Traceback" not in err and err.count("creval: error:") == 1, err
    return next(x for x in err.splitlines() if x.startswith("creval: error:"))


@pytest.mark.parametrize("kind, said", [
    ("html", [r"HTTP 200", r"content type text/html", r"first bytes '<!doctype html>"]),
    ("text", [r"not JSON", r"HTTP 200", r"content type text/plain", r"first bytes 'OK: service"]),
    ("other-json", [r"/chat/completions answered JSON that is not an OpenAI-style reply \(no `choices` list",
                    r"HTTP 200", r"content type application/json",
                    r"first bytes '\{\"status\": \"ok\""]),
])
def test_check_refuses_a_server_that_answers_something_else(tmp_path, capsys, kind, said):
    with Fixed(kind) as srv:
        code, out, err = check(tmp_path, srv.url, f"chk-{kind}", capsys)
    line = one_sentence(err)
    assert code != 0 and srv.url in line, err
    for s in said:
        assert re.search(s, line), (s, line)
    assert "can:" not in out and "add to the spec" not in out and "yes" not in out, out


@pytest.mark.parametrize("where, said", [
    ("dead", r"unreachable: nothing answered there \(connection refused"),
    ("dns", r"unreachable: its host creval-no-such-host.invalid does not resolve"),
])
def test_check_refuses_a_server_that_is_not_there(tmp_path, capsys, where, said):
    url = dead_url() if where == "dead" else DNS_URL
    code, out, err = check(tmp_path, url, f"chk-{where}", capsys)
    line = one_sentence(err)
    assert code != 0 and url in line and re.search(said, line), line
    assert "can:" not in out and "yes" not in out, out


def test_check_refuses_a_server_that_never_answers(tmp_path, capsys):
    with Fixed("silent") as srv:
        code, out, err = check(tmp_path, srv.url, "chk-silent", capsys, timeout=1)
    line = one_sentence(err)
    assert code != 0 and f"{srv.url}/models sent no reply within 1 s" in line, line
    assert "can:" not in out and "yes" not in out


@pytest.mark.parametrize("said", ["", "can: {completions: true, echo: true, logprobs: raw}\n"])
def test_yes_only_for_a_phase_whose_probe_request_succeeded(tmp_path, capsys, said):
    """A working server whose /completions fails with a 500 every time: the chat phases yes, perplexity not,
    whether the spec is silent or says the server echoes (the spec's word alone made it "yes" before); the
    failed request is listed and the check exits 1."""
    from creval.cli import main
    from creval.models.standin import StandIn
    with StandIn(latency=0, fail="The cat sat on the mat") as s:     # the probe's /completions prompt
        p = tmp_path / "half.yaml"
        p.write_text(s.spec_yaml("half", 4, max_retries=0) + said)
        code = main(["check", str(p)])
    out = capsys.readouterr().out
    assert code == 1, out
    perplexity = re.search(r"perplexity \(as model\)\s+(\S+)\s+(.*)", out)
    assert perplexity.group(1) == "?", out
    if said:
        assert perplexity.group(2) == "log-likelihoods (perplexity): the probe's request did not succeed", out
    assert re.search(r"step samples \(as model\)\s+yes", out), out
    assert re.search(r"probe requests that failed.*\n  http://127.0.0.1:\d+/v1/completions answered 500: stand-in", out)


def test_a_study_call_to_a_web_page_is_one_sentence_not_retried(tmp_path):
    with Fixed("html") as srv:
        be = backend(srv.url)
        for call in (lambda: be.chat([ChatRequest(HI)]), lambda: be.sample(SampleRequest(HI), [0]),
                     lambda: be.loglikelihood([LoglikelihoodRequest("a brick")])):
            before = srv.requests
            with pytest.raises(BadReply) as e:
                call()
            assert srv.requests - before == 1                    # a page will be a page again: not asked twice
            msg = str(e.value)
            assert srv.url in msg and "HTTP 200, content type text/html, first bytes '<!doctype" in msg, msg
            assert "JSONDecodeError" not in msg and "does not support echoed" not in msg


def test_a_study_call_to_other_json_or_nobody_is_one_sentence(tmp_path):
    with Fixed("other-json") as srv:
        with pytest.raises(BadReply, match=r"not an OpenAI-style reply \(no `choices` list of completions; HTTP 200, "
                                           r"content type application/json"):
            backend(srv.url).chat([ChatRequest(HI)])
    with pytest.raises(CrevalError, match=r"unreachable: its host creval-no-such-host.invalid does not resolve"):
        backend(DNS_URL).chat([ChatRequest(HI)])
    with pytest.raises(CrevalError, match=r"unreachable: nothing answered there"):
        backend(dead_url()).chat([ChatRequest(HI)])


def test_a_failed_unit_carries_the_sentence(tmp_path):
    from creval.core.io import read_jsonl
    from creval.core.units import Unit, UnitsFailed, run_units
    with Fixed("text") as srv:
        be = backend(srv.url, "unit-text")
        with pytest.raises(UnitsFailed, match="2 of 2 units"):
            run_units(tmp_path, "ask", [Unit("a", 0), Unit("b", 1)],
                      lambda u: {"t": [{"r": be.chat([ChatRequest(HI, seed=u.item)])[0].text}]}, width=2,
                      progress=False)
    errors = [r["error"] for r in read_jsonl(tmp_path / "units" / "ask.failed.jsonl")]
    assert len(errors) == 2
    for e in errors:
        assert e.startswith("BadReply: model unit-text: ") and srv.url in e and "content type text/plain" in e, e


def test_metrics_ppl_against_a_web_page_is_one_sentence(tmp_path, capsys):
    from creval.cli import main
    texts = tmp_path / "texts.txt"
    texts.write_text("A brick can hold a door open.\nA brick can warm a bed.\n")
    with Fixed("html") as srv:
        code = main(["metrics", "ppl", str(texts), "--ppl-model", spec_file(tmp_path, srv.url, "ppl-html"), "--quiet"])
    err = capsys.readouterr().err
    line = one_sentence(err)
    assert code == 2 and srv.url in line and "content type text/html" in line, err


def test_metrics_out_into_an_existing_folder(tmp_path, capsys):
    from creval.cli import main
    texts = tmp_path / "stories.txt"
    texts.write_text("the cat sat on the mat today\nthe dog sat on the mat today\na bird flew over the sea\n")
    folder = tmp_path / "scores"
    folder.mkdir()
    assert main(["metrics", "ci", str(texts), "--out", str(folder), "--L", "2", "3"]) == 0
    err = capsys.readouterr().err
    written = folder / "stories-ci.csv"
    assert f"the rows go to {written}" in err and f"wrote 3 rows to {written}" in err, err
    assert written.read_text().splitlines()[0].startswith("id,") and len(written.read_text().splitlines()) == 4
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["metrics", "ci", str(texts), "--out", str(blocker / "x.csv"), "--L", "2", "3"]) == 2
    assert f"{blocker} is a file, so nothing can be written under it" in one_sentence(capsys.readouterr().err)


def test_a_failed_study_summary_keeps_the_fix_sentence_apart(tmp_path):
    from creval.book.studies import summary_line
    from creval.core.errors import CrevalError as E
    err = E("bad sizes: divergent_n_samples=0, divergent_limit=2, divergent_max_steps=5",
            "use divergent_n_samples >= 1, divergent_limit >= 0, divergent_max_steps >= 1")
    usage = {"calls_made": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    text = summary_line({"study": "divergent", "state": "new", "error": f"CrevalError: {err}", "seconds": 0.1,
                         "usage": usage, "run_dir": str(tmp_path)})
    lines = text.splitlines()
    assert lines[0].startswith("divergent: FAILED in 0.1 s; calls 0 made") and lines[0].endswith(str(tmp_path))
    assert lines[-1].strip() == "fix: use divergent_n_samples >= 1, divergent_limit >= 0, divergent_max_steps >= 1"


def test_the_size_message_names_the_new_keys(tmp_path):
    from creval.studies.divergent.config import DivergentConfig
    from creval.studies.divergent.run import problem_units
    cfg = DivergentConfig(run_root=str(tmp_path), divergent_n_samples=0)
    with pytest.raises(CrevalError) as e:
        problem_units(cfg, "smollm2-135m", "macgyver")
    assert "divergent_n_samples=0" in e.value.problem and e.value.fix.startswith("use divergent_n_samples >= 1")
    assert "use n_samples" not in str(e.value)


def test_the_book_says_what_it_will_do_and_the_time_left():
    from creval.book.build import BookPlan
    from creval.studies.estimate import Range
    plan = BookPlan([{"study": "a", "calls": Range(10, 10), "tokens": Range(1000, 1200), "wall": Range(600, 900),
                      "why": ""},
                     {"study": "b", "calls": Range(5, 5), "tokens": Range(500, 500), "wall": Range(1200, 1200),
                      "why": ""}], [])
    start = plan.start().splitlines()
    assert start[1] == "  a: 10 calls, 1,000..1,200 tokens, 10..15 min"
    assert start[-1].startswith("book: 15 calls, 1,500..1,700 tokens; expected 30..35 min for the studies")
    plan.t0 = time.time() - 60
    after = plan.after({"study": "a", "error": None})
    assert after.startswith("book: 1 of 2 studies done (a ok) in 1.0 min; about 20 min left by the estimate"), after
    unknown = BookPlan([{"study": "c", "calls": Range(1, 1), "tokens": Range(9, 9), "wall": None, "why": ""}], ["srv"])
    assert "time unknown (no measured speed for srv" in unknown.start()


def test_check_refuses_a_server_where_no_probe_request_succeeds(tmp_path, capsys):
    """A redirect (http to https, say) on every path: nothing answered as asked, so one sentence and no table."""
    class Moved(Fixed):
        def __init__(self):
            super().__init__("html")
            outer = self

            class Handler(http.server.BaseHTTPRequestHandler):
                def _answer(self):
                    outer.requests += 1
                    self.send_response(301)
                    self.send_header("location", "https://example.invalid/v1")
                    self.send_header("content-length", "0")
                    self.end_headers()
                do_GET = do_POST = _answer

                def log_message(self, *a):
                    pass
            self.httpd.RequestHandlerClass = Handler
    with Moved() as srv:
        code, out, err = check(tmp_path, srv.url, "chk-moved", capsys)
    line = one_sentence(err)
    assert code == 2 and f"no probe request to {srv.url} succeeded" in line, err
    assert "HTTP 301" in line and "redirected to https://example.invalid/v1 (not followed)" in line, line
    assert out == ""


def test_long_books_are_told_in_hours():
    from creval.book.build import BookPlan
    from creval.studies.estimate import Range
    plan = BookPlan([{"study": "a", "calls": Range(9, 9), "tokens": Range(9, 9), "wall": Range(16080, 62640),
                      "why": ""}], [])
    assert plan.start().splitlines()[-1].endswith("expected 4.5..17.4 h for the studies at this machine's measured "
                                                  "speed, then the chapters")


def test_a_speed_measured_on_a_busy_machine_is_said_with_its_load(monkeypatch):
    """The book's times rest on the stored speed; measured at a load above the cores, the start says so and how to
    measure again; measured on a quiet machine (or with no load on record) it adds nothing."""
    from creval.book.build import BookPlan, busy_note
    from creval.studies.estimate import Range
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    busy = {"prefill_tps": 22.3, "decode_tps": 24.1, "measured": "2026-11-29 13:07:36", "load": 7.52}
    rows = [{"study": "a", "calls": Range(9, 9), "tokens": Range(9, 9), "wall": Range(600, 900), "why": ""}]
    last = BookPlan(rows, [], {"m": busy}).start().splitlines()[-1]
    assert last == ("note: m's speed (22.3 prompt and 24.1 reply tokens/s) was measured 2026-11-29 13:07:36 at load "
                    "7.52 on 2 cores, a busy machine: on a quieter one the book runs faster than said (`creval "
                    "throughput m --force` measures again)")
    assert busy_note("m", {**busy, "load": 1.5}) == "" and busy_note("m", {"prefill_tps": 1}) == ""
    assert BookPlan(rows, [], {"m": {**busy, "load": 1.5}}).start().splitlines()[-1].startswith("book: ")
