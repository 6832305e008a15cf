"""The hostile suite of issue 25: a judged program must not forge, copy or poison a verdict. Each attack is
written as an attacker would, through the public API (``run_units``/``program_unit``, ``judge_codes``); each
test asserts a correct neighbour's verdict and that nothing wrong is cached, and the last one reruns every
attack with the same cache and compares with a fresh cache. Tests that only the jail, a uid of its own or a
cgroup can pass are skipped, with their reason, where the machine does not offer it."""
from __future__ import annotations

import json
import os
import uuid

import pytest

os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")   # where no jail runs, the suite opts in (records say so)

from creval.core.cache import CallCache
from creval.measures.neocoder import judges as nc
from creval.sandbox import Limits, isolation, program_unit, run_units

FAST = Limits(wall_s=2.0, cpu_s=1.0, memory_mb=512, output_bytes=1 << 16, capture_bytes=1 << 14)

bwrap_only = pytest.mark.skipif(isolation().kind != "bwrap", reason="needs the bubblewrap jail (isolation: bwrap)")
cgroup_only = pytest.mark.skipif(isolation().memory_scope != "cgroup", reason="needs a cgroup for the whole program")
own_uid = pytest.mark.skipif(isolation().program_uid not in ("separate", "host-user"),
                             reason="needs programs under a uid that is not host root (program_uid: separate)")


@pytest.fixture
def cache(tmp_path):
    return CallCache(tmp_path / "calls.sqlite")


@pytest.fixture
def problem(tmp_path, monkeypatch):
    """The sample problem S1A (multi-test: the sum of the even numbers) and a correct code for it."""
    import creval.datasets.neocoder as neocoder_data
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "judge-calls.sqlite"))
    ps, _ = neocoder_data.load()
    return {q.native: q for q in ps}["S1A"]


CORRECT = """def solve():
    t = int(input())
    for _ in range(t):
        input()
        print(sum(x for x in map(int, input().split()) if x % 2 == 0))
solve()
"""
CORRECT_REPO = CORRECT.replace("\nsolve()\n", "\n")


def neighbour_ok(r, stdin_pairs):
    for c, (_, want) in zip(r["cases"], stdin_pairs):
        assert c["rc"] == 0 and c["stdout"] == want and not r.get("sandbox_error")


# --- 1. the program is not the runner's twin -------------------------------------------------------------

RUNNER_ATTACK = r"""import ctypes, json, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
forged = json.dumps([{"cases": [{"skipped": True}] * 8, "env": {}}]).encode()
wrote = []
for fd in range(3, 256):                              # the runner's result pipe, wherever it is
    try:
        os.write(fd, forged); wrote.append(fd)
    except OSError:
        pass
reached = []
targets = [p for p in pids if p != me] + [os.getppid(), 1, 2, 3]
for pid in sorted(set(targets) - {me, 0}):
    for what in ("mem", "fd/3", "environ", "cmdline"):
        try:
            open(f"/proc/{pid}/{what}", "rb").read(16); reached.append(f"{pid}/{what}")
        except OSError:
            pass
    if libc.ptrace(16, pid, 0, 0) == 0:                  # PTRACE_ATTACH
        reached.append(f"ptrace {pid}")
    try:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (0, 0)); reached.append(f"prlimit {pid}")
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGSTOP); reached.append(f"kill {pid}")
    except OSError:
        pass
print(json.dumps({"pids": [p for p in pids if p != me], "fds": [f for f in fds if f > 3], "wrote": wrote,
                  "reached": reached, "ppid": os.getppid()}))
"""


@bwrap_only
def test_the_runner_is_out_of_reach_and_its_records_cannot_be_forged(cache):
    pairs = [("3 4\n", "7\n"), ("10 5\n", "15\n")]
    good = program_unit(f"a, b = map(int, input().split())\nprint(a + b)  # {uuid.uuid4()}", [s for s, _ in pairs],
                        FAST, group="launch")
    bad = program_unit(RUNNER_ATTACK, ["", ""], FAST, group="launch")
    r_bad, r_good = run_units([bad, good], cache=cache)
    for c in r_bad["cases"]:
        seen = json.loads(c["stdout"])
        # alone in its jail: no other process, no descriptor but 0-2, nothing written anywhere, nothing reached
        assert seen == {"pids": [], "fds": [], "wrote": [], "reached": [], "ppid": 0}, seen
        assert c["rc"] == 0 and not c.get("skipped")
    assert len(r_bad["cases"]) == 2
    neighbour_ok(r_good, pairs)
    env = r_bad["env"]
    assert env["runner"] == "host"
    if env["program_uid"] == "separate":                 # a host uid of its own, neither root nor the host's
        assert env["dropped_to"] not in (0, os.getuid())


def test_a_forging_program_gets_no_verdict_it_did_not_earn(problem):
    """Through the judge: every attack of the runner (result pipe, skipped cases, memory, ptrace, prlimit) on the
    strict and repo judges, with a correct neighbour in the same pack; a rerun (same cache) is the same."""
    forge = RUNNER_ATTACK + "\ndef solve():\n    print('?')\n"
    items = [(problem, CORRECT_REPO), (problem, forge)]
    for pack in ("program", "problem"):
        got = nc.judge_codes(items, pack=pack)
        again = nc.judge_codes(items, pack=pack)
        assert got[0]["strict"].verdict == nc.OK and got[0]["repo"].verdict == nc.OK
        assert not got[1]["strict"].correct and not got[1]["repo"].correct
        assert [{j: v[j].verdict for j in v} for v in got] == [{j: v[j].verdict for j in v} for v in again]


# --- 2. copying a neighbour -----------------------------------------------------------------------------

COPIER = r"""import gc, os
secret = "SECRET-" + "%s"
found = []
for o in gc.get_objects():                       # its own memory: every container the interpreter tracks
    items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
    for x in items:
        if isinstance(x, str) and secret in x and x != secret:
            found.append("memory: " + x[:40])
for root in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/work"):
    for d, dirs, names in os.walk(root):
        for n in names:
            try:
                if secret.encode() in open(os.path.join(d, n), "rb").read(1 << 20):
                    found.append(os.path.join(d, n))
            except OSError:
                pass
for p in os.listdir("/proc"):
    for what in ("cmdline", "environ"):
        try:
            if secret.encode() in open(f"/proc/{p}/{what}", "rb").read():
                found.append(f"/proc/{p}/{what}")
        except OSError:
            pass
for fd in range(3, 64):
    try:
        found.append(f"fd {fd}: " + os.read(fd, 64).decode("utf-8", "replace"))
    except OSError:
        pass
print(found or "nothing")
"""


def test_a_neighbour_cannot_be_copied(cache):
    tag = uuid.uuid4().hex[:10]
    secret = f"SECRET-{tag}"
    nb = program_unit(f"s = input()\nprint(s.upper())  # {secret} code", [f"{secret} stdin\n", "x\n"], FAST,
                      group="problem")
    copier = program_unit(COPIER % tag, ["", ""], FAST, group="problem")
    for order in ((nb, copier), (copier, nb)):
        res = run_units(list(order), cache=cache)
        r_nb, r_cp = res if order[0] is nb else res[::-1]
        assert [c["stdout"].strip() for c in r_cp["cases"]] == ["nothing", "nothing"]
        assert r_nb["cases"][0]["stdout"] == f"{secret} stdin".upper() + "\n"


def test_copying_the_neighbours_output_through_the_judge_fails(problem):
    """With the 'problem' packing (the replay's default) a program that prints its correct neighbour's output
    (found in its memory or on disk) gets neither strict nor repo OK."""
    cheat = """def solve():
    import gc, os
    outs = []
    for o in gc.get_objects():
        if isinstance(o, dict) and isinstance(o.get("stdout"), str) and o["stdout"].strip():
            outs.append(o["stdout"])
    for d in ("/tmp", "/work", "/run", "/dev/shm"):
        for n in os.listdir(d):
            try:
                outs.append(open(os.path.join(d, n)).read())
            except OSError:
                pass
    print(outs[0] if outs else "?")
solve()
"""
    got = nc.judge_codes([(problem, CORRECT), (problem, cheat), (problem, CORRECT + "# again")],
                         pack="problem")
    assert got[0]["strict"].correct and got[2]["strict"].correct
    assert not got[1]["strict"].correct and not got[1]["repo"].correct


# --- 3. an empty (or otherwise impossible) harness report -------------------------------------------------

def forged_report(report: dict) -> str:
    return ("def solve():\n    import json, os\n"
            f"    data = json.dumps({report!r}).encode()\n"
            "    for fd in range(3, 16):\n        try:\n            os.write(fd, data)\n"
            "        except OSError:\n            pass\n    os._exit(0)\n")


FORGED_REPORTS = [{"stage": "batch", "try": "batch", "outputs": [], "evals": []},
                  {"stage": "batch", "try": "per_case", "outputs": [], "evals": []},
                  {"stage": "batch", "try": "per_case", "outputs": ["6"], "evals": [None]},
                  {"stage": "batch", "try": "batch", "outputs": ["6"] * 9, "evals": [None] * 9},
                  {"stage": "batch", "try": "batch", "outputs": ["6"], "evals": []},
                  {"stage": "batch", "try": None, "outputs": [], "evals": []}]


def test_an_empty_harness_report_never_passes(problem):
    items = [(problem, forged_report(r)) for r in FORGED_REPORTS] + [(problem, CORRECT_REPO)]
    got = nc.judge_codes(items, judges=("repo",))
    verdicts = [v["repo"].verdict for v in got]
    assert verdicts[:5] == [nc.JE] * 5 and verdicts[5] == nc.RE, verdicts
    assert not any(v["repo"].correct for v in got[:-1]) and got[-1]["repo"].correct
    assert nc.judge_codes(items, judges=("repo",)) == got                   # the same from the cache


def test_the_host_counts_outputs_against_cases():
    assert nc.report_fault({"try": "batch", "outputs": [], "evals": []}, 4)
    assert nc.report_fault({"try": "per_case", "outputs": ["1"], "evals": [None]}, 4)
    assert nc.report_fault({"try": "batch", "outputs": ["1"] * 5, "evals": [None] * 5}, 4)
    assert nc.report_fault({"try": "batch", "outputs": [1], "evals": [None]}, 4)
    assert nc.report_fault({"try": "batch", "outputs": ["1"], "evals": [[1]]}, 4)
    assert nc.report_fault({"try": "batch", "outputs": ["1"], "evals": [None]}, 4) is None      # a prefix
    assert nc.report_fault({"try": "per_case", "outputs": ["1", None], "evals": [None, ["a"]]}, 2) is None
    assert nc.overall([]) == nc.JE and nc.overall([nc.CaseVerdict("skipped")]) == nc.JE
    assert nc.overall([nc.CaseVerdict(nc.TLE), nc.CaseVerdict("skipped")]) == nc.TLE


# --- 4. units of one launch share no room ---------------------------------------------------------------

ROOM_FILLER = r"""import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
marker = "%s"
wrote = []
for d in ("/tmp", "/dev/shm", "/work", "/var/tmp", "/run/lock", "/run", "/var", "/", "/usr", "/dev", "/proc"):
    try:
        open(os.path.join(d, marker), "w").write("x"); wrote.append(d)
    except OSError:
        pass
print("wrote", wrote)
libc.shmget(0x2525, 4096, 0o1666); libc.msgget(0x2525, 0o1666); libc.semget(0x2525, 1, 0o1666)
n = 0
try:
    with open("/tmp/fill", "wb") as f:
        while True:
            f.write(b"\0" * (1 << 20)); f.flush(); n += 1
except OSError as e:
    print("full after", n, "MB", e.errno)
"""

ROOM_LOOKER = r"""import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
marker = "%s"
seen = [d for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run", "/work", "/", "/dev")
        if os.path.exists(os.path.join(d, marker)) or os.path.exists(os.path.join(d, "fill"))]
ipc = [k for k, f in (("shm", lambda: libc.shmget(0x2525, 0, 0)), ("msg", lambda: libc.msgget(0x2525, 0)),
                      ("sem", lambda: libc.semget(0x2525, 0, 0))) if f() != -1]
x = bytearray(150 << 20)                     # a normal 150 MB program
for i in range(0, len(x), 4096):
    x[i] = 1
open("/tmp/mine", "wb").write(b"y" * (8 << 20))
print("seen", seen, "ipc", ipc, "ok", len(x) >> 20)
"""


@bwrap_only
def test_units_of_one_launch_share_no_room(cache):
    marker = f"creval-room-{uuid.uuid4().hex[:10]}"
    lim = Limits(wall_s=4.0, cpu_s=3.0, memory_mb=512, output_bytes=1 << 30, capture_bytes=1 << 14)
    filler = program_unit(ROOM_FILLER % marker, ["", ""], lim, group="room")
    looker = program_unit(ROOM_LOOKER % marker, ["", ""], lim, group="room")
    r_fill, r_look = run_units([filler, looker], cache=cache)
    for c in r_fill["cases"]:
        out = c["stdout"]
        # its own fresh rooms only; the root and /dev are read-only, /var and /run do not exist
        assert out.splitlines()[0] == "wrote ['/tmp', '/dev/shm', '/work']", out
        mb = int(out.split("full after ")[1].split()[0])
        assert mb <= 64 and c["rc"] == 0                              # /tmp is capped, the program unharmed
    for c in r_look["cases"]:
        assert c["rc"] == 0 and c["stdout"].strip() == "seen [] ipc [] ok 150", c


# --- 6. limits that hold --------------------------------------------------------------------------------

FORKER = r"""import os, time
n = 0
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(1.5)
        os._exit(0)
    n += 1
print(n)
"""


@own_uid
def test_the_process_count_holds_without_a_cgroup(cache, monkeypatch):
    monkeypatch.setenv("CREVAL_SANDBOX_CGROUP", "0")
    lim = Limits(wall_s=4.0, cpu_s=2.0, memory_mb=512, processes=16)
    r = run_units([program_unit(FORKER, [""], lim)], cache=cache)[0]
    assert r["env"]["memory_scope"] == "per-process"
    n = int(r["cases"][0]["stdout"])
    assert n <= lim.processes, n                                      # 200 of 200 before
    monkeypatch.delenv("CREVAL_SANDBOX_CGROUP")
    r = run_units([program_unit(f"print(6 * 7)  # {uuid.uuid4()}", [""], FAST)], cache=cache)[0]
    assert r["cases"][0]["stdout"] == "42\n"


OOM = r"""import os, time
kids = []
for i in range(2):
    pid = os.fork()
    if pid == 0:
        x = bytearray(250 << 20)
        for j in range(0, len(x), 4096):
            x[j] = 1
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
open("/proc/self/oom_score_adj", "w").write("1000")   # the first the OOM killer picks: the program itself
time.sleep(0.3)
x = bytearray(300 << 20)
for j in range(0, len(x), 4096):
    x[j] = 1
print("survived")
"""


@cgroup_only
def test_an_out_of_memory_kill_is_a_memory_limit(cache):
    r = run_units([program_unit(OOM, [""], Limits(wall_s=6.0, cpu_s=4.0, memory_mb=512))], cache=cache)[0]
    c = r["cases"][0]
    assert c["signal"] == 9 and c.get("oom_killed") and nc.run_verdict(c) == nc.MLE, c
    assert "survived" not in c["stdout"]


# --- 5. the fallback ------------------------------------------------------------------------------------

@pytest.fixture
def fresh_isolation():
    isolation.cache_clear()
    yield
    isolation.cache_clear()


def test_the_fallback_refuses_unless_opted_in(cache, monkeypatch, fresh_isolation):
    monkeypatch.setenv("CREVAL_SANDBOX_BWRAP", "0")
    monkeypatch.delenv("CREVAL_SANDBOX_FALLBACK", raising=False)
    r = run_units([program_unit("print(1)", [""], FAST)], cache=cache)[0]
    assert r["sandbox_error"].startswith("no bubblewrap jail here")
    assert "CREVAL_SANDBOX_FALLBACK=1" in r["sandbox_error"]
    assert r["env"]["isolation"] == "refused" and len(cache) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="the opted-in fallback drops to a uid of its own only as root")
def test_opted_in_fallback_verdicts_never_share_cache_entries(cache, monkeypatch, fresh_isolation):
    unit = program_unit("import os\nprint(os.getuid() != 0)", [""], FAST)
    jailed = run_units([unit], cache=cache)[0]
    monkeypatch.setenv("CREVAL_SANDBOX_BWRAP", "0")
    monkeypatch.setenv("CREVAL_SANDBOX_FALLBACK", "1")
    isolation.cache_clear()
    fb = run_units([unit], cache=cache)[0]
    assert fb["env"]["isolation"] == "fallback" and fb["cases"][0]["stdout"] == "True\n"     # not root
    assert len(cache) == (2 if jailed["env"]["isolation"] != "fallback" else 1)


# --- every attack again: the same cache, then a fresh one ----------------------------------------------

def test_every_attack_reruns_the_same_from_the_cache_and_fresh(tmp_path, problem):
    tag = "fixed-tag"
    units = [program_unit(COPIER % tag, ["", ""], FAST, group="a"),
             program_unit(f"print(input())  # SECRET-{tag}", [f"SECRET-{tag}\n"], FAST, group="a"),
             program_unit(ROOM_FILLER % "creval-rerun", [""], Limits(wall_s=4.0, cpu_s=3.0, memory_mb=512,
                                                                      output_bytes=1 << 30), group="b"),
             program_unit("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
                          [""], FAST, group="b"),
             program_unit("print(int(input()) * 2)", ["21\n"], FAST, group="b")]

    keep = range(len(units)) if isolation().kind == "bwrap" else range(1, len(units))

    def summary(res):          # how each run ended (a fork bomb's time or CPU limit, whichever came first,
        return [(c.get("rc") == 0 and not c.get("timed_out"), c.get("stdout") if c.get("rc") == 0 else None)
                for i in keep for c in res[i]["cases"]]    # depends on the load: only "failed" is compared;
                                                           # the fallback's copier walks the host's folders)

    a = CallCache(tmp_path / "a.sqlite")
    first, second = run_units(units, cache=a), run_units(units, cache=a)
    fresh = run_units(units, cache=CallCache(tmp_path / "b.sqlite"))
    assert summary(first) == summary(second) == summary(fresh)
    assert first[4]["cases"][0]["stdout"] == "42\n" and "SECRET" not in first[0]["cases"][0]["stdout"]
    if isolation().kind == "bwrap":
        assert first[0]["cases"][0]["stdout"].strip() == "nothing"
    items = [(problem, forged_report(FORGED_REPORTS[0])), (problem, RUNNER_ATTACK), (problem, CORRECT)]
    v1 = nc.judge_codes(items)
    v2 = nc.judge_codes(items)
    assert [{j: x.verdict for j, x in v.items()} for v in v1] == [{j: x.verdict for j, x in v.items()} for v in v2]
    assert not any(x.correct for v in v1[:2] for x in v.values()) and v1[2]["strict"].correct


def test_load_dependent_retries_run_alone(cache, monkeypatch):
    """A wall-clock timeout under the CPU limit at the stretched cap is retried one unit at a time (nothing beside
    it), then marked load-dependent and not cached; an infrastructure failure likewise."""
    import threading

    import creval.sandbox.batches as sb
    state = {"now": 0, "most": 0, "calls": 0}
    lock = threading.Lock()

    def fake(units):
        with lock:
            state["now"] += 1
            state["calls"] += 1
            retry = state["calls"] > 4
            if retry:
                state["most"] = max(state["most"], state["now"])
        import time
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return [{"env": {"runner": "host"}, "cases": [{"timed_out": True, "wall_capped": True, "cpu_s": 0.1}]}
                for _ in units]

    monkeypatch.setattr(sb, "launch", fake)
    res = run_units([program_unit(f"pass  # {i}", [""], FAST) for i in range(4)], cache=cache, workers=4)
    assert state["calls"] == 8 and state["most"] == 1                 # 4 at once, then 4 retries alone
    assert all(r["load_dependent"] for r in res) and len(cache) == 0
