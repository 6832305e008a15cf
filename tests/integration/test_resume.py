"""A run killed with SIGKILL and rerun completes, and repeats no model call finished before the kill."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.integration


def _made(ledger):
    if not ledger.exists():
        return []
    rows = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]
    return [r["key"] for r in rows if not r["cached"]]


def test_sigkill_then_resume_repeats_no_finished_call(tmp_path):
    env = {**os.environ, "CREVAL_CACHE": str(tmp_path / "calls.sqlite")}
    cmd = [sys.executable, "-m", "creval", "run", "divergent", "--params", "params/smoke.yaml",
           "-p", f"run_root={tmp_path / 'runs'}", "-p", "divergent_limit=2", "-p", "divergent_temperatures=[1.0]"]
    first = tmp_path / "first.jsonl"
    proc = subprocess.Popen(cmd, env={**env, "CREVAL_LEDGER_FILE": str(first)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline and len([k for k in _made(first)]) < 5 and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = set(_made(first))
    assert before, "nothing finished before the kill"
    second = tmp_path / "second.jsonl"
    r = subprocess.run(cmd, env={**env, "CREVAL_LEDGER_FILE": str(second)}, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not before & set(_made(second))                   # nothing finished before the kill is made again
    (out,) = (tmp_path / "runs" / "divergent").iterdir()
    problems = [json.loads(x) for x in (out / "problems.jsonl").read_text().splitlines() if x.strip()]
    assert len(problems) == 2 and len({p["problem_id"] for p in problems}) == 2
    assert json.loads((out / "manifest.json").read_text())["complete"]
