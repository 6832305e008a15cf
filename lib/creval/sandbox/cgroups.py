"""Cgroups: one memory (and process-count) limit for a program's whole process tree, where the machine lets us
create one (v2 if it offers memory, else v1 memory + pids). A worker slot keeps its cgroup between runs
(:class:`SlotCgroups`); everything left in it is killed after each run."""
from __future__ import annotations

import atexit
import itertools
import os
import shlex
import threading
import time
from functools import lru_cache
from pathlib import Path


def own_cgroup(controller: str | None) -> Path | None:
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
        self.peak_fd: int | None = None       # memory.peak held open between reset_peak and peak_kb (v2)

    @staticmethod
    def create(memory_bytes: int, pids: int, prefix: str = "creval-sbx") -> "Cgroup | None":
        if os.environ.get("CREVAL_SANDBOX_CGROUP", "1") == "0":
            return None
        name = f"{prefix}-{os.getpid()}-{next(_COUNTER)}"
        v2 = own_cgroup(None)
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
        mem, pid = own_cgroup("memory"), own_cgroup("pids")
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

    def reset_peak(self) -> bool:
        """Reset the memory high-water mark before a run (the slot's cgroup is kept between runs): v1 writes 0
        to ``memory.max_usage_in_bytes``; v2 opens ``memory.peak`` and writes to it (a reset seen through that
        descriptor, Linux 6.12+). False where it cannot be reset: :meth:`peak_kb` then gives None."""
        try:
            if "v2" in self.dirs:
                fd = os.open(self.dirs["v2"] / "memory.peak", os.O_RDWR)
                try:
                    os.write(fd, b"reset")
                except OSError:
                    os.close(fd)
                    return False
                self.peak_fd = fd
                return True
            if "memory" in self.dirs:
                (self.dirs["memory"] / "memory.max_usage_in_bytes").write_text("0")
                return True
        except OSError:
            pass
        return False

    def peak_kb(self) -> int | None:
        """The memory high-water mark (KiB) since :meth:`reset_peak`: every page charged to the cgroup's
        processes (anonymous memory and the file pages they first touched); None when it was not reset."""
        try:
            if self.peak_fd is not None:
                os.lseek(self.peak_fd, 0, os.SEEK_SET)
                return int(os.read(self.peak_fd, 64).split()[0]) // 1024
            if "memory" in self.dirs:
                return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text()) // 1024
        except (OSError, ValueError, IndexError):
            return None
        finally:
            if self.peak_fd is not None:
                os.close(self.peak_fd)
                self.peak_fd = None
        return None


_COUNTER = itertools.count()


@lru_cache(maxsize=1)
def cgroups_available() -> bool:
    """Whether this process can create a cgroup with a memory limit (probed once)."""
    cg = Cgroup.create(64 << 20, 16)
    if cg is None:
        return False
    cg.remove()
    return True


SLOT_CGROUP_PREFIX = "creval-slot"


class SlotCgroups:
    """The worker slots' cgroups of this process: one per slot, made once and kept (everything in it is killed
    after each run; OOM kills are counted per run as a difference), made again when the limits change; removed
    at exit (:meth:`reset`). Stale ones of host processes that are gone are swept on first use."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_slot: dict[int, tuple[tuple, Cgroup]] = {}
        self.swept = False
        self.registered = False

    def get(self, slot: int, memory_bytes: int, pids: int) -> "Cgroup | None":
        """The slot's cgroup for these limits (None where no cgroup can be made)."""
        key = (memory_bytes, pids, os.environ.get("CREVAL_SANDBOX_CGROUP", "1"))
        with self.lock:
            have = self.by_slot.get(slot)
            if have is not None and have[0] == key and all(d.is_dir() for d in have[1].dirs.values()):
                return have[1]
            if have is not None:
                have[1].remove()
                del self.by_slot[slot]
            if not self.swept:
                sweep_stale_slot_cgroups()
                self.swept = True
            cg = Cgroup.create(memory_bytes, pids, prefix=SLOT_CGROUP_PREFIX)
            if cg is not None:
                if not self.registered:
                    atexit.register(self.reset)
                    self.registered = True
                self.by_slot[slot] = (key, cg)
            return cg

    def reset(self) -> None:
        """Remove every slot cgroup of this process."""
        for _, cg in list(self.by_slot.values()):
            cg.remove()
        self.by_slot.clear()


def sweep_stale_slot_cgroups() -> None:
    """Remove the slot cgroups of host processes that are gone (killed before their exit handler ran)."""
    for base in (own_cgroup(None), own_cgroup("memory"), own_cgroup("pids")):
        if base is None or not base.is_dir():
            continue
        for d in base.glob(f"{SLOT_CGROUP_PREFIX}-*"):
            try:
                pid = int(d.name.split("-")[2])
            except (IndexError, ValueError):
                continue
            if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
                Cgroup({"x": d}, 1).remove()


SLOT_CGROUPS = SlotCgroups()
