"""The hostile suite of issue 17: programs written as an attacker would (read a host file, read the answers,
leave something behind, hurt a neighbour, exceed memory through children, escape the wall clock). Each test
asserts the host afterwards and the next program's verdict. Tests that only the bubblewrap jail (or a cgroup)
can pass are marked and skipped, with their reason, where it cannot run; the rest run everywhere."""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")   # where no jail runs, the suite opts in (records say so)

from creval.core.cache import CallCache
from creval.measures.neocoder import judges as nc
from creval.sandbox import Limits, isolation, program_unit, run_units
from creval.sandbox.limits import WALL_CAP

FAST = Limits(wall_s=1.5, cpu_s=1.0, memory_mb=512, output_bytes=1 << 16, capture_bytes=1 << 14)
REPO = Path(__file__).resolve().parents[2]
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run/shm", "/dev/mqueue")

bwrap_only = pytest.mark.skipif(isolation().kind != "bwrap", reason="needs the bubblewrap jail (isolation: bwrap)")
cgroup_only = pytest.mark.skipif(isolation().memory_scope != "cgroup", reason="needs a cgroup for the whole program")


@pytest.fixture
def cache(tmp_path):
    return CallCache(tmp_path / "calls.sqlite")


def run1(code, cache, stdin="", limits=FAST):
    return run_units([program_unit(code, [stdin], limits)], cache=cache)[0]


def healthy(cache):
    """The next program after a hostile one gets its normal verdict."""
    r = run1(f"print(int(input()) * 2)  # {uuid.uuid4()}", cache, "21\n")
    assert r["cases"][0]["stdout"] == "42\n" and r["cases"][0]["rc"] == 0 and not r.get("sandbox_error")


def ipc_objects() -> dict[str, int]:
    out = {}
    for kind in ("shm", "msg", "sem"):
        try:
            out[kind] = len(Path(f"/proc/sysvipc/{kind}").read_text().splitlines()) - 1
        except OSError:
            out[kind] = 0
    return out


def remove_ipc_of_nobody() -> None:
    """The fallback has no IPC namespace: remove what the sandbox user (nobody) created."""
    import subprocess
    for kind, flag in (("shm", "-m"), ("msg", "-q"), ("sem", "-s")):
        try:
            rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        col = {"shm": 7, "msg": 7, "sem": 4}[kind]
        for row in rows:
            f = row.split()
            if int(f[col]) == 65534:
                subprocess.run(["ipcrm", flag, f[1]], capture_output=True)


def tagged_processes(tag: str) -> list[str]:
    alive = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{p}/cmdline").read_bytes():
                    alive.append(p)
            except OSError:
                pass
    return alive


def files_named(marker: str) -> list[str]:
    found = []
    for d in WORLD_WRITABLE:
        for root, _, names in os.walk(d):
            found += [os.path.join(root, n) for n in names if marker in n]
    return found


@bwrap_only
def test_no_host_file_is_readable(cache):
    targets = [str(REPO / "README.md"), str(REPO / "data"), str(REPO.parent / "shared"), "/etc/passwd",
               "/root", "/home", str(Path(__file__))]
    code = ("import os\nfor t in %r:\n    try:\n        os.stat(t); print('SEEN', t)\n"
            "    except OSError:\n        print('absent', t)\nprint(sorted(os.listdir('/')))" % (targets,))
    r = run1(code, cache)
    out = r["cases"][0]["stdout"]
    assert r["cases"][0]["rc"] == 0 and "SEEN" not in out
    assert r["env"]["isolation"] == "bwrap" and r["env"]["private_tmp"]
    top = eval(out.strip().splitlines()[-1])                     # our own test output, a list of names
    assert not {"etc", "root", "home", "var", "srv", "opt", "run"} & set(top)
    healthy(cache)


@bwrap_only
def test_proc_shows_only_the_sandbox(cache):
    code = "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    r = run1(code, cache)
    pids = eval(r["cases"][0]["stdout"])
    assert max(pids) < 10 and os.getpid() not in pids[3:]       # only the runner and the program itself
    healthy(cache)


FRAME_CHEAT = """def solve():
    import gc, sys
    found = []
    f = sys._getframe()
    while f is not None:                      # every caller's locals and globals
        for space in (f.f_locals, f.f_globals):
            for k in ("expected", "answers", "exp"):
                if isinstance(space.get(k), list):
                    found = space[k]
        f = f.f_back
    if not found:                             # then everything the interpreter holds
        for o in gc.get_objects():
            if isinstance(o, list) and o and all(isinstance(x, str) for x in o) and len(o) < 50:
                found = o
    t = int(input())
    for i in range(t):
        print(found[i] if i < len(found) else "?")
"""

DISK_CHEAT = """import os
t = int(input())
hits = []
for root in ("/", "/work", "/tmp", "/sandbox"):
    for dirpath, _, names in os.walk(root):
        if dirpath.startswith("/proc") or dirpath.startswith("/usr"):
            continue
        hits += [os.path.join(dirpath, n) for n in names]
print("\\n".join(hits[:t]) if hits else "nothing")
"""


def test_the_answers_cannot_be_read_from_memory_or_disk(tmp_path, monkeypatch):
    import creval.datasets.neocoder as neocoder_data
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    ps, _ = neocoder_data.load()
    p = {q.native: q for q in ps}["S1A"]
    got = nc.judge_codes([(p, FRAME_CHEAT), (p, DISK_CHEAT)], judges=("repo", "strict"))
    for v in got:
        assert not v["repo"].correct and not v["strict"].correct
    unit = nc.repo_units(p, FRAME_CHEAT)                        # what goes in: code, inputs, the answers' kinds
    assert unit["code"].rstrip().endswith(f", {[isinstance(c.expected_raw, list) for c in p.cases]!r})")


def test_nothing_is_left_behind_on_the_host(cache):
    marker = f"creval-left-{uuid.uuid4().hex[:12]}"
    tag = str(800000 + os.getpid() % 99999)
    before = ipc_objects()
    code = f"""import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
for d in {WORLD_WRITABLE!r}:
    for i in range(3):
        try:
            open(os.path.join(d, "{marker}-%d" % i), "w").write("x")
        except OSError:
            pass
libc.shmget(0, 4096, 0o1666)             # IPC_PRIVATE | IPC_CREAT
libc.msgget(0, 0o1666)
libc.semget(0, 1, 0o1666)
try:
    s = socket.socket(socket.AF_UNIX); s.bind("/tmp/{marker}.sock"); s.listen(1)
except OSError:
    pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "{tag}"])
    os._exit(0)
print("done")
"""
    r = run1(code, cache)
    assert r["cases"][0]["stdout"].strip() == "done"
    time.sleep(0.3)
    assert tagged_processes(tag) == []
    left = files_named(marker)
    if isolation().kind == "bwrap":       # the jail: no host folder is writable, an IPC namespace of its own
        assert left == [] and ipc_objects() == before
    else:                                 # the fallback's known leak (world-writable host folders): tidy up
        for f in left:
            os.unlink(f)
        remove_ipc_of_nobody()
    healthy(cache)


NORMAL = [(f"a, b = map(int, input().split())\nprint(a + b)  # {i}", f"{i} {i * 3}\n", f"{4 * i}\n") for i in range(6)]


def measured_launch(cache) -> float:
    """Seconds one trivial program takes through the sandbox on this machine now (its load included)."""
    t0 = time.monotonic()
    r = run1(f"print(1)  # {uuid.uuid4()}", cache)
    assert r["cases"][0]["stdout"] == "1\n", r
    return time.monotonic() - t0


def test_hostile_neighbours_change_no_verdict(cache):
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    hog = "x = []\nwhile True:\n    x.append(bytearray(50 << 20))"
    # the normal programs' wall clock outlasts the neighbours (stopped by WALL_CAP x their 1.5 s at the latest)
    # plus ten times what a launch takes on this machine now: a loaded machine slows a launch (2.0 s once, where
    # 1.5 s was the limit), it does not change a verdict; the CPU limit (1 s, of which a sum uses little) stays
    patient = replace(FAST, wall_s=WALL_CAP * FAST.wall_s + 10 * measured_launch(cache))
    units = [program_unit(bomb, [""], FAST), program_unit(hog, [""], FAST)]
    units += [program_unit(code, [stdin], patient) for code, stdin, _ in NORMAL]
    units += [program_unit(bomb + f"  # {i}", [""], FAST) for i in range(2)]
    res = run_units(units, cache=cache, workers=4)
    for r, (_, _, want) in zip(res[2:8], NORMAL):
        assert not r.get("sandbox_error") and r["cases"][0]["stdout"] == want and r["cases"][0]["rc"] == 0
    healthy(cache)


@cgroup_only
def test_children_share_one_memory_limit(cache):
    code = """import os, time
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        x = b"a" * (400 << 20)             # touched: 3 x 400 MB > the 512 MB limit of the program
        time.sleep(0.4)
        os._exit(0)
    kids.append(pid)
print(sum(os.waitpid(k, 0)[1] == 0 for k in kids))
"""
    # three children touching 400 MB each take seconds of wall clock on a loaded machine (4.05 s with two busy
    # loops beside it, where 4 s was the limit): the wall clock is scaled from this machine's launch time now,
    # the memory limit, the thing tested, is not
    wall = 4.0 + 10 * measured_launch(cache)
    r = run1(code, cache, limits=Limits(wall_s=wall, cpu_s=3.0, memory_mb=512))
    assert r["env"]["memory_scope"] == "cgroup"
    assert r["cases"][0]["stdout"].strip() in ("0", "1"), r["cases"]   # at most one child held 400 MB
    healthy(cache)


def test_the_wall_clock_cannot_be_escaped(cache):
    tag = str(700000 + os.getpid() % 99999)
    code = f"""import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    os.execv("/bin/sleep", ["sleep", "{tag}"])
os.setpgid(0, 0) if False else None
time.sleep(60)
"""
    t0 = time.monotonic()
    r = run1(code, cache)
    assert time.monotonic() - t0 < 50              # stopped long before its 60 s sleep ends (at 1.5 s when quiet)
    c = r["cases"][0]
    assert c["timed_out"] and not c["wall_capped"] and not r.get("load_dependent")
    time.sleep(0.3)
    assert tagged_processes(tag) == []
    assert len(cache) == 1                                         # a sleeper's timeout is its own: cached
    healthy(cache)


def test_only_a_timeout_at_the_stretched_cap_is_load_dependent():
    from creval.sandbox import cacheable, load_dependent
    lim = {"cpu_s": 2.0}
    slept = {"limits": lim, "cases": [{"timed_out": True, "wall_capped": False, "cpu_s": 0.01}]}
    starved = {"limits": lim, "cases": [{"timed_out": True, "wall_capped": True, "cpu_s": 0.7}]}
    spun = {"limits": lim, "cases": [{"timed_out": True, "wall_capped": True, "cpu_s": 1.99}]}
    assert not load_dependent(slept) and load_dependent(starved) and not load_dependent(spun)
    assert cacheable(slept) and not cacheable({**starved, "load_dependent": True})
    assert not cacheable({"sandbox_error": "runner died", "cases": []})


def test_an_infrastructure_failure_is_not_cached(cache, monkeypatch):
    import creval.sandbox.batches as sb
    real = sb.launch
    monkeypatch.setattr(sb, "launch", lambda units: [{"sandbox_error": "boom", "cases": []} for _ in units])
    r = run1("print(1)", cache)
    assert r["sandbox_error"] and len(cache) == 0
    monkeypatch.setattr(sb, "launch", real)
    r = run1("print(1)", cache)
    assert r["cases"][0]["stdout"] == "1\n" and len(cache) == 1
