"""Running untrusted programs: the layer between models and datasets.

Every launch is its own process tree, started with an empty environment in a fresh session and a fresh
temporary working folder, inside new network, pid and mount namespaces when ``unshare`` allows it (checked
once per process; otherwise the record says ``network_isolated: false`` and a warning is logged). The
launched interpreter runs :mod:`creval.sandbox._runner`, which mounts a private /tmp, sets the resource
limits, drops root to ``nobody`` and runs each *unit* (one program with its test stdins) case by case, each
case in its own forked child with CPU and wall-clock limits; the host kills the whole process group when a
launch overruns. Nothing the program prints is ever executed or evaluated by the host: results come back as
JSON data.

Public API: :class:`Limits`, :func:`program_unit` (build a unit), :func:`run_units` (cached by content,
parallel across cores), :func:`isolation` (what this machine offers). A harness that drives a program (e.g.
NeoCoder's repo-compatible judge) is itself a program: its caller builds the harness's source.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from creval.core.cache import cached_batch

log = logging.getLogger("creval.sandbox")

RUNNER = Path(__file__).with_name("_runner.py")
RUNNER_VERSION = 3          # bump when the runner's semantics change (part of every cache key)


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

    def describe(self) -> dict:
        return {"network_isolated": self.network_isolated, "pid_namespace": self.pid_namespace,
                "mount_namespace": self.mount_namespace, "drops_root": self.root}


def _works(prefix: list[str]) -> bool:
    try:
        return subprocess.run(prefix + ["true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


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


@lru_cache(maxsize=1)
def isolation() -> Isolation:
    """The strongest isolation ``unshare`` gives on this machine (probed once per process)."""
    root = can_drop_root()
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
                return Isolation(tuple(prefix), True, pid, mnt, root)
    log.warning("sandbox: no network namespace available here (unshare failed): programs run WITHOUT "
                "network isolation; every record says network_isolated: false")
    return Isolation((), False, False, False, root)


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
    """One sandboxed interpreter for ``units``; a result dict per unit (never raises for program misbehaviour)."""
    iso = isolation()
    py, _ = interpreter()
    lim0 = dict(units[0]["limits"])
    if not iso.root:     # RLIMIT_NPROC counts this user's processes: leave room for the ones already running
        lim0["processes"] = lim0["processes"] + _nproc_for_user()
    batch = {"limits": lim0, "units": [_describe(u) for u in units]}
    budget = 5.0 + sum(u["limits"]["wall_s"] * max(1, len(u.get("stdins") or [1])) + 0.5 for u in units)
    work = tempfile.mkdtemp(prefix="creval-sbx-")
    env = {"CREVAL_SANDBOX_MOUNTNS": "1"} if iso.mount_namespace else {}
    t0 = time.monotonic()
    proc = None
    try:
        if iso.root:
            os.chown(work, 65534, 65534)
        proc = subprocess.Popen(list(iso.prefix) + [py, "-I", str(RUNNER)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, env=env,
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
    finally:
        _kill_group_quiet(proc)
        shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - t0
    for g in got:
        g.setdefault("env", {})
        g["env"].update(iso.describe())
        g["launch_wall_s"] = round(wall / len(units), 4)
    return got


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
    (code, stdins, limits, mode) ran before with the same interpreter and runner; the misses run in parallel
    (``workers`` launches at once, default: the CPU count), units sharing a ``group`` in one launch."""
    py, version = interpreter()
    iso = isolation()
    identity = {"interpreter": py, "python": version, "runner": RUNNER_VERSION,
                "network_isolated": iso.network_isolated}

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
                    out[i] = r
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
        return out

    return cached_batch("sandbox", identity, units, _describe, compute, model="sandbox", cache=cache)
