"""Stopping the local vLLM server: the whole process group goes, and as soon as it has gone (a child that exited is
reaped, not waited on as a zombie for the full 30 s)."""
import os
import subprocess
import sys
import time

from creval.models import vllm_local

# a leader that exits on SIGTERM and a worker in its group that ignores it (as an engine core may)
WORKER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
LEADER = f"""
import signal, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {WORKER!r}])
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
time.sleep(60)
"""


def test_stop_reaps_its_child_at_once_and_kills_what_is_left_of_the_group(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", LEADER], start_new_session=True)
    time.sleep(1.0)                                            # the worker has started
    server = vllm_local.LocalServer("http://127.0.0.1:1/v1", proc.pid, tmp_path / "log", started=True)
    t = time.perf_counter()
    server.stop()
    assert time.perf_counter() - t < 5
    time.sleep(0.2)
    assert _alive_in_group(proc.pid) == []                     # the worker that ignored SIGTERM went too


def _alive_in_group(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that still run (a zombie left for the machine's init to reap does not count)."""
    alive = []
    for d in os.listdir("/proc"):
        try:
            stat = open(f"/proc/{d}/stat").read()
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()           # state, ppid, pgrp, ...
        if d.isdigit() and int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(d))
    return alive
