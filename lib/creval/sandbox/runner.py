"""Launching one program run and reading what became of it, all from the host: the command (jail, uid,
cgroup), the wait under the wall-clock limit (stretched by the time the program waited for a CPU, up to
``WALL_CAP`` times), the kill of an overrun, and the record computed after the program ended from the exit
status (bwrap's ``--json-status-fd``, ``wait4``), its CPU time and memory, and its output files.

A unit (one program on each of its stdins) runs case after case on one worker slot (:func:`launch`); every
case is a jail and a fresh interpreter of its own (:mod:`creval.sandbox._boot` is its first lines).
"""
from __future__ import annotations

import json
import os
import queue
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

from creval.sandbox.cgroups import Cgroup
from creval.sandbox.jail import FALLBACK_ROOMS, SLOTS, Isolation, as_uid, slot_uid
from creval.sandbox.limits import WALL_CAP

BOOT = Path(__file__).with_name("_boot.py")
RUNNER_VERSION = 7          # bump when the runner's semantics change (part of every cache key); 7: max_rss_kb is
                            # the program's peak, not the host's; 6: one jail and one fresh interpreter per program
                            # run, every record computed by the host (issue 25)
NOT_PARSABLE = "creval-boot: not parsable: "


class JailFailed(Exception):
    """The jail itself failed (not the program): the unit becomes a ``sandbox_error`` (retried alone, never
    cached)."""


class SlotPool:
    """The worker slots (each a host uid of its own) of this process; :meth:`take` is a context for one
    launch. :meth:`reset` forgets the pool (it is made again, all slots free, on the next take)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.free: "queue.Queue[int] | None" = None

    def reset(self) -> None:
        with self.lock:
            self.free = None

    def take(self) -> "SlotLease":
        with self.lock:
            if self.free is None:
                self.free = queue.Queue()
                for i in range(1, SLOTS):
                    self.free.put(i)
            return SlotLease(self.free)


class SlotLease:
    """One worker slot, held for the duration of a ``with`` block (its uid is what the block gets)."""

    def __init__(self, free: "queue.Queue[int]"):
        self.free = free

    def __enter__(self) -> int:
        self.slot = self.free.get()
        return slot_uid(self.slot)

    def __exit__(self, *a):
        self.free.put(self.slot)


SLOT_POOL = SlotPool()


def nproc_for_user() -> int:
    """How many processes this host user has now (``/proc``)."""
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


def children(pid: int) -> list[int]:
    """The child pids of ``pid`` (``/proc``); empty where unknown."""
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def program_pid(iso: Isolation, outer: int, jail_init: int | None) -> tuple[int | None, bool]:
    """(the program's host pid, whether it is alone): under bwrap the jail's pid 1 (``--as-pid-1``); under
    unshare --fork the child of unshare; else the launched process itself. Alone: no other process in the
    jail (then its CPU wait can stretch its wall clock; a program with children competes with them)."""
    if iso.kind == "bwrap":
        if jail_init is None:
            return None, False
        return jail_init, not children(jail_init)
    if iso.pid_namespace:                    # unshare --fork -> the rooms' shell (pid 1) -> the program
        kids = children(outer)
        shell_kids = children(kids[0]) if kids else []
        if not shell_kids:
            return None, False
        return shell_kids[0], len(shell_kids) == 1 and not children(shell_kids[0])
    return outer, not children(outer)


def run_delay(pid: int | None) -> float:
    """Seconds ``pid`` waited for a CPU (the host's ``/proc/<pid>/schedstat``); 0 where unknown."""
    if pid is None:
        return 0.0
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def cpu_of(pid: int | None) -> float:
    """CPU seconds of ``pid`` and its reaped children so far (``/proc/<pid>/stat``), 0 where unknown."""
    if pid is None:
        return 0.0
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def read_cap(f, cap: int) -> tuple[str, bool]:
    """The first ``cap`` bytes of file ``f`` as text, and whether there was more."""
    f.seek(0)
    data = f.read(cap + 1)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


def status_docs(buf: bytes) -> dict:
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


class StatusPipe:
    """bwrap's status channel (``--json-status-fd``): a pipe whose read end the host drains without blocking;
    absent (every method a no-op) outside bwrap."""

    def __init__(self, enabled: bool):
        self.r, self.w = os.pipe() if enabled else (None, None)
        self.buf = b""

    def started(self) -> None:
        """The jail holds the write end now: close ours, read without blocking."""
        if self.w is not None:
            os.close(self.w)
            self.w = None
            os.set_blocking(self.r, False)

    def drain(self) -> None:
        if self.r is None:
            return
        while True:
            try:
                b = os.read(self.r, 65536)
            except OSError:          # BlockingIOError included: nothing more now
                return
            if not b:
                return
            self.buf += b

    def docs(self) -> dict:
        return status_docs(self.buf)

    def close(self) -> None:
        for fd in (self.r, self.w):
            if fd is not None:
                os.close(fd)
        self.r = self.w = None


@lru_cache(maxsize=1)
def boot_source() -> str:
    """The source of :mod:`creval.sandbox._boot` (passed to each interpreter with ``-c``)."""
    return BOOT.read_text()


def case_command(iso: Isolation, py: str, code_fd: int, lim: dict, nproc: int, uid: int | None,
                 cg: "Cgroup | None", delegated: bool, status_w: int | None) -> tuple[list[str], dict, str | None]:
    """(command, Popen's user arguments, a working folder to remove afterwards) of one program run: the boot
    code in a fresh interpreter, in the jail (or the opted-in fallback), as the slot's uid, in the cgroup."""
    cmd = [py, "-I", "-S", "-c", boot_source()] + [str(x) for x in (
        code_fd, lim["memory_mb"], lim["output_bytes"], lim["open_files"], max(1, int(lim["cpu_s"] + 0.999)),
        nproc)]
    as_user: dict = {}
    work = None
    if iso.kind == "bwrap":
        cmd = list(iso.prefix) + ["--json-status-fd", str(status_w), "--"] + cmd
        if uid is not None:          # the whole jail runs as the slot's uid: started so (no setpriv) where
            if cg is None or delegated:   # nothing has to be done as root first
                as_user = {"user": uid, "group": uid, "extra_groups": []}
            else:
                cmd = as_uid(uid, cmd)
    else:
        if uid is not None:
            cmd = as_uid(uid, cmd)
        if iso.pid_namespace and iso.mount_namespace:
            cmd = list(iso.prefix) + ["/bin/sh", "-c", FALLBACK_ROOMS, "sh"] + cmd
        else:
            cmd = list(iso.prefix) + cmd
            work = tempfile.mkdtemp(prefix="creval-sbx-")
            if uid is not None:
                os.chown(work, uid, uid)
    if cg is not None:
        cmd = cg.wrap(cmd)
    return cmd, as_user, work


def wait_for(proc, iso: Isolation, pipe: StatusPipe, wall_s: float, t0: float) -> tuple[bool, bool, float]:
    """Wait until ``proc`` ends or overruns its wall clock (stretched by the time the program, alone in its
    jail, waited for a CPU, up to ``WALL_CAP`` times the limit): (timed out, at the cap, CPU seconds when
    killed). Does not kill."""
    try:
        pfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pfd = None
    try:
        while True:
            elapsed = time.monotonic() - t0
            left = wall_s - elapsed
            if left <= 0:
                pipe.drain()
                pid, alone = program_pid(iso, proc.pid, pipe.docs().get("child-pid"))
                stretch = run_delay(pid) if alone else 0.0
                left = min(wall_s + stretch, WALL_CAP * wall_s) - elapsed
                if left <= 0:
                    return True, elapsed >= WALL_CAP * wall_s - 1e-3, cpu_of(pid)
                left = max(left, 0.01)
            if pfd is not None:
                poller = select.poll()        # poll, not select: a long process may hold fds past 1024
                poller.register(pfd, select.POLLIN | select.POLLHUP)
                if poller.poll(left * 1000):
                    return False, False, 0.0
            else:
                if proc.poll() is not None:
                    return False, False, 0.0
                time.sleep(min(0.002, left))
    finally:
        if pfd is not None:
            os.close(pfd)


def reap(proc, timed_out: bool, cg: "Cgroup | None"):
    """Kill an overrun (its process group and its cgroup), then reap it: (wait status, rusage), both None when
    ``poll`` reaped it already (no pidfd)."""
    if timed_out:
        kill_group(proc)
        if cg is not None:
            cg.kill_all()
    if proc.returncode is None:
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return status, ru
    return None, None


def exit_of(iso: Isolation, proc, docs: dict, status, timed_out: bool, err: str) -> tuple[int | None, int | None]:
    """(exit code, signal) of an ended run, from bwrap's status documents or the wait status; raises
    :class:`JailFailed` when the jail (not the program) failed."""
    rc = sig = None
    if iso.kind == "bwrap":
        if "child-pid" not in docs:
            raise JailFailed(f"the jail did not start (exit {proc.returncode}): {err[-500:]}")
        if not timed_out:
            if "exit-code" not in docs:
                raise JailFailed(f"the jail died before its program ended (exit {proc.returncode}): {err[-300:]}")
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
                    raise JailFailed(f"the fallback's rooms could not be made: {err[-300:]}")
                if rc is not None and 128 < rc <= 128 + 64:        # the shell's way of passing on a signal
                    rc, sig = None, rc - 128
    return rc, sig


def run_case(iso: Isolation, py: str, code: bytes, stdin: str, lim: dict, nproc: int, uid: int | None,
             cg: "Cgroup | None", delegated: bool = False) -> dict:
    """One program run in a fresh jail and interpreter; the record is computed here, by the host, after the
    program ended, from what the host itself read (exit status, rusage, /proc, the output files)."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr, \
            tempfile.TemporaryFile() as fcode:
        fin.write(stdin.encode("utf-8", "surrogatepass"))
        fin.seek(0)
        fcode.write(code)
        fcode.seek(0)
        pipe = StatusPipe(iso.kind == "bwrap")
        cmd, as_user, work = case_command(iso, py, fcode.fileno(), lim, nproc, uid, cg, delegated, pipe.w)
        keep = (fcode.fileno(),) + ((pipe.w,) if pipe.w is not None else ())
        host_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peaked = cg.reset_peak() if cg is not None else False
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=ferr, pass_fds=keep, env={},
                                    cwd=work or "/", start_new_session=True, **as_user)
        except OSError as e:
            pipe.close()
            raise JailFailed(f"cannot start the jail: {e}")
        pipe.started()
        try:
            timed_out, capped, cpu_at_kill = wait_for(proc, iso, pipe, lim["wall_s"], t0)
            status, ru = reap(proc, timed_out, cg)
            cg_kb = cg.peak_kb() if peaked else None
        finally:
            if proc.returncode is None:
                kill_group_quiet(proc)
        wall = time.monotonic() - t0
        if work:
            shutil.rmtree(work, ignore_errors=True)
        pipe.drain()
        pipe.close()
        out, out_trunc = read_cap(fout, lim["capture_bytes"])
        out_size = os.fstat(fout.fileno()).st_size
        err, _ = read_cap(ferr, 4000)
    rc, sig = exit_of(iso, proc, status_docs(pipe.buf), status, timed_out, err)
    cpu = max((ru.ru_utime + ru.ru_stime) if ru is not None else 0.0, cpu_at_kill)
    # as pid 1 of its jail the program ignores the kernel's SIGXFSZ (and SIGXCPU: see run_unit): a write past
    # RLIMIT_FSIZE fails; read back as what it is when the output file reached the limit
    if not timed_out and (rc or sig) and out_size >= lim["output_bytes"]:
        rc, sig = None, signal.SIGXFSZ
    return {"rc": rc, "signal": sig, "timed_out": timed_out, "wall_capped": capped, "wall_s": round(wall, 4),
            "cpu_s": round(cpu, 4), "max_rss_kb": child_rss_kb(ru.ru_maxrss if ru is not None else 0, host_kb, cg_kb),
            "stdout": out, "stdout_truncated": out_trunc, "stderr_tail": err[-2000:]}


def child_rss_kb(wait_kb: int, host_kb: int, cgroup_kb: int | None) -> int:
    """The program's peak memory (KiB) as the host can know it: the cgroup's high-water mark when the run had
    a cgroup reset just before it; else ``wait4``'s ru_maxrss only when it exceeds the host's own peak at
    launch. Below that it is the host's: the jail is forked from the host, and the kernel keeps a forked
    child's resident set before its exec as its maxrss, so every program would show the host's ~2 GB.
    0 when the program's peak is not known."""
    if cgroup_kb is not None:
        return int(cgroup_kb)
    return int(wait_kb) if wait_kb > host_kb else 0


def kill_group(proc) -> None:
    """SIGKILL to ``proc``'s process group."""
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def kill_group_quiet(proc) -> None:
    """Kill ``proc``'s group and reap it, if it still runs."""
    if proc is not None and proc.poll() is None:
        kill_group(proc)
        proc.wait()
