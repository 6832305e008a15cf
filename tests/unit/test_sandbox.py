"""Hostile programs in the sandbox: each is stopped or contained, the record says what happened, and the host and
the next program are unaffected."""
from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")   # where no jail runs, the suite opts in (records say so)

from creval.core.cache import CallCache
from creval.sandbox import Limits, isolation, program_unit, run_units

FAST = Limits(wall_s=1.5, cpu_s=1.0, memory_mb=512, output_bytes=1 << 16, capture_bytes=1 << 12)


@pytest.fixture
def cache(tmp_path):
    return CallCache(tmp_path / "calls.sqlite")


def run1(code, cache, stdin="", limits=FAST):
    return run_units([program_unit(code, [stdin], limits)], cache=cache)[0]


def healthy(cache):
    """A normal program right after a hostile one runs fine."""
    r = run1(f"print(int(input()) * 2)  # {uuid.uuid4()}", cache, "21\n")
    assert r["cases"][0]["stdout"] == "42\n" and r["cases"][0]["rc"] == 0


def test_plain_program_and_empty_environment(cache, monkeypatch):
    monkeypatch.setenv("CREVAL_TEST_SECRET", "s3cret-value")
    r = run1("import os, sys\nprint(sorted(os.environ.items()))\nprint(sys.stdin.read().upper())", cache, "abc\n")
    c = r["cases"][0]
    assert c["rc"] == 0 and "ABC" in c["stdout"]
    assert "s3cret-value" not in c["stdout"] and c["stdout"].startswith("[]")


def test_secret_not_readable_through_proc(cache, monkeypatch):
    monkeypatch.setenv("CREVAL_TEST_SECRET", "s3cret-value")
    code = ("import os\nout=[]\nfor p in os.listdir('/proc'):\n"
            "    if p.isdigit():\n        try: out.append(open(f'/proc/{p}/environ','rb').read())\n"
            "        except Exception: pass\nprint(b's3cret-value' in b''.join(out))")
    r = run1(code, cache)
    assert r["cases"][0]["stdout"].strip() == "False"


def test_infinite_loop_is_stopped(cache):
    t0 = time.monotonic()
    r = run1("while True:\n    pass", cache)
    c = r["cases"][0]
    assert c["timed_out"] or c["signal"] in (9, 24)
    assert time.monotonic() - t0 < 120             # stopped (a hang guard; the limits stop it in seconds)
    healthy(cache)


def test_sleeping_program_hits_wall_clock(cache):
    r = run1("import time\ntime.sleep(30)", cache)
    assert r["cases"][0]["timed_out"]
    healthy(cache)


def test_fork_bomb_is_contained(cache):
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    t0 = time.monotonic()
    r = run1(code, cache)
    assert time.monotonic() - t0 < 120             # stopped (a hang guard; the limits stop it in seconds)
    assert r["cases"][0]["timed_out"] or r["cases"][0]["signal"]
    time.sleep(0.2)
    if isolation().root:      # nothing of the sandbox user survives
        left = [p for p in os.listdir("/proc") if p.isdigit() and _uid(p) == 65534]
        assert left == []
    healthy(cache)


def _uid(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def test_memory_hog_is_stopped(cache):
    r = run1("x = bytearray(3 * 1024 ** 3)\nprint(len(x))", cache)
    c = r["cases"][0]
    assert c["rc"] == 75 and "MemoryError" in c["stderr_tail"]
    healthy(cache)


def test_huge_output_is_capped(cache):
    r = run1("while True:\n    print('x' * 1000)", cache)
    c = r["cases"][0]
    assert c["signal"] == 25 or c["stdout_truncated"] or c["rc"] != 0      # SIGXFSZ at the file-size limit
    assert len(c["stdout"]) <= FAST.capture_bytes
    healthy(cache)


def test_network_is_unreachable(cache):
    code = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n    print('connected')\n"
            "except OSError as e:\n    print('blocked')")
    r = run1(code, cache)
    if r["env"]["network_isolated"]:
        assert r["cases"][0]["stdout"].strip() == "blocked"
    else:                      # no namespace here: the record must say so
        assert r["env"]["network_isolated"] is False


def test_writes_outside_the_working_folder_do_not_reach_the_host(cache):
    marker = f"creval-escape-{uuid.uuid4().hex}"
    code = (f"import os\nres=[]\nfor d in ('/tmp', '/var/tmp', '/dev/shm', {str(Path.cwd())!r}):\n"
            f"    try:\n        open(os.path.join(d, {marker!r}), 'w').write('x'); res.append('w')\n"
            f"    except OSError:\n        res.append('denied')\n"
            f"open('local.txt', 'w').write('fine')\nprint(res, os.getcwd())")
    r = run1(code, cache)
    assert r["cases"][0]["rc"] == 0
    for d in ("/tmp", "/var/tmp", "/dev/shm", str(Path.cwd())):
        assert not (Path(d) / marker).exists()


def test_detached_child_does_not_outlive_the_run(cache):
    tag = str(900000 + os.getpid() % 99999)
    code = ("import os\npid = os.fork()\nif pid == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            f"        os.execv('/bin/sleep', ['sleep', '{tag}'])\n    os._exit(0)\nprint('parent done')")
    r = run1(code, cache)
    assert r["cases"][0]["stdout"].strip() == "parent done"
    time.sleep(0.3)
    alive = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{p}/cmdline").read_bytes():
                    alive.append(p)
            except OSError:
                pass
    assert alive == [], f"detached child still running: {alive}"
    healthy(cache)


def test_results_are_cached_by_content(cache):
    u = program_unit("import random\nprint(random.random())", ["", ""], FAST)
    a = run_units([u], cache=cache)[0]
    b = run_units([u], cache=cache)[0]
    assert a["cases"][0]["stdout"] == b["cases"][0]["stdout"]
    assert a["cases"][0]["stdout"] != a["cases"][1]["stdout"]      # each case is a fresh process
    assert len(cache) == 1


def test_cases_are_fresh_processes_and_packed_units_isolated(cache):
    units = [program_unit("import builtins\nprint(hasattr(builtins, 'leak'))\nbuiltins.leak = 1\n"
                          "open('f', 'w').write('x')\nimport os\nprint(sorted(os.listdir('.')))", ["", ""], FAST,
                          group="g"),
             program_unit("import os\nprint(sorted(os.listdir('.')))", [""], FAST, group="g")]
    a, b = run_units(units, cache=cache)
    assert a["cases"][0]["stdout"].startswith("False") and a["cases"][1]["stdout"].startswith("False")
    assert "'f'" not in b["cases"][0]["stdout"]


def test_root_of_a_user_namespace_cannot_drop_to_nobody(tmp_path):
    from creval.sandbox.jail import namespace_maps
    f = tmp_path / "uid_map"
    f.write_text("         0          0          1\n")            # `unshare -r`: only root is mapped
    assert not namespace_maps(str(f), 65534) and namespace_maps(str(f), 0)
    f.write_text("         0          0 4294967295\n")            # the initial namespace
    assert namespace_maps(str(f), 65534)


@pytest.mark.skipif(os.geteuid() != 0 or not __import__("shutil").which("unshare"), reason="needs root and unshare")
def test_programs_still_run_as_root_of_a_user_namespace_and_the_record_says_so(tmp_path):
    import json
    import subprocess
    import sys
    script = ("import json; from creval.core.cache import CallCache; "
              "from creval.sandbox import program_unit, run_units;"
              f"r = run_units([program_unit('print(6*7)', [''])], cache=CallCache({str(tmp_path / 'c.sqlite')!r}))[0];"
              "print(json.dumps(r))")
    # the opted-in fallback: it cannot drop root there
    env = dict(os.environ, CREVAL_SANDBOX_BWRAP="0", CREVAL_SANDBOX_FALLBACK="1")
    out = subprocess.run(["unshare", "-rn", sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    assert rec["cases"][0]["stdout"].strip() == "42"
    assert rec["env"]["drops_root"] is False and rec["env"]["isolation"] == "fallback"
