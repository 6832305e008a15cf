"""The program that runs INSIDE the sandbox (a standalone script: it imports nothing from creval).

The host starts it as ``bwrap ... <python> -I /sandbox/runner.py`` (the jail already gives a private /tmp and
working folder, uid nobody and pid 1 of its own pid namespace, so steps 1 and 3 do nothing there) or, in the
fallback, as ``[unshare ...] <python> -I _runner.py``, with an empty environment, in a fresh session, its stdin
carrying one JSON job batch. It then
1. (when started as root in new mount/pid namespaces) mounts a private tmpfs on /tmp, /var/tmp, /dev/shm and
   works in a fresh folder there, so the program can write nowhere that outlives the run;
2. sets the resource limits (address space, file size, open files, processes, no core files);
3. drops root to ``nobody`` (when it is root);
4. runs every unit in its own forked child (own process group, CPU limit, wall clock limit not counting the time
   the program waited for a CPU (other jobs' load), up to 3x the limit; stdin from a file,
   stdout/stderr to capped files) and, when it is pid 1 of its own pid namespace, kills every leftover
   process after each unit (a detached child cannot outlive its unit);
5. writes one JSON result per unit to the descriptor it kept of its original stdout.

Untrusted code only ever runs in the forked children: each unit's code is a whole program, run with
``__name__ == "__main__"`` on each of the unit's stdins.
"""
import json
import os
import resource
import select
import signal
import sys
import time

OUT_CAP_DEFAULT = 1 << 20


def _log_fd():
    fd = os.dup(1)
    os.set_inheritable(fd, False)
    return fd


def _mount_private_tmp():
    """Private tmpfs mounts (only as root in our own mount namespace). Returns the new working folder or None."""
    if os.environ.get("CREVAL_SANDBOX_MOUNTNS") != "1" or os.geteuid() != 0:
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for target in ("/tmp", "/var/tmp", "/dev/shm"):
            if os.path.isdir(target):
                if libc.mount(b"tmpfs", target.encode(), b"tmpfs", 0, b"size=64m,mode=1777") != 0:
                    return None
        work = "/tmp/work"
        os.mkdir(work, 0o700)
        return work
    except Exception:
        return None


def _drop_privileges(work):
    if os.geteuid() != 0:
        return False
    try:
        import pwd
        nobody = pwd.getpwnam("nobody")
        uid, gid = nobody.pw_uid, nobody.pw_gid
    except Exception:
        uid = gid = 65534
    try:
        if work:
            os.chown(work, uid, gid)     # EINVAL where nobody is not mapped (root of a user namespace)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    except OSError:
        return False
    return True


def _set_limits(lim):
    mb = 1 << 20
    pairs = [(resource.RLIMIT_AS, lim["memory_mb"] * mb), (resource.RLIMIT_FSIZE, lim["output_bytes"]),
             (resource.RLIMIT_NOFILE, lim["open_files"]), (resource.RLIMIT_CORE, 0)]
    if hasattr(resource, "RLIMIT_NPROC"):
        pairs.append((resource.RLIMIT_NPROC, lim["processes"]))
    for what, value in pairs:
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):
            pass


# ---------------------------------------------------------------------------------------------------

def _child(unit, code_obj, work, log_fd, idx):
    """In the forked child: own process group, limits, redirections, then the untrusted code."""
    try:
        os.setpgid(0, 0)
        os.close(log_fd)
        cpu = max(1, int(unit["limits"]["cpu_s"] + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        fin = os.open(os.path.join(work, f"in{idx}"), os.O_RDONLY)
        fout = os.open(os.path.join(work, f"out{idx}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        ferr = os.open(os.path.join(work, f"err{idx}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fin, 0)
        os.dup2(fout, 1)
        os.dup2(ferr, 2)
        for fd in (fin, fout, ferr):
            os.close(fd)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        sys.argv = ["solution.py"]
        os.chdir(work)
    except BaseException:
        os._exit(70)
    code = 0
    try:
        import builtins
        exec(code_obj, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as e:
        c = e.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        if not isinstance(c, int) and c is not None:
            try:
                sys.stderr.write(str(c) + "\n")
            except BaseException:
                pass
    except MemoryError:
        code = 75
        try:
            sys.stderr.write("MemoryError\n")
        except BaseException:
            pass
    except BaseException:
        code = 1
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    try:
        sys.stdout.flush()
    except BaseException:
        if code == 0:
            code = 1
    try:
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code & 0xFF)


def _run_delay(pid):
    """Seconds ``pid`` waited for a CPU (``/proc/<pid>/schedstat``); 0 (no stretch) where unknown or when the
    program has started other processes (then its own children compete with it: a fork bomb is not stretched)."""
    if os.getpid() == 1:
        try:
            for name in os.listdir("/proc"):
                if name.isdigit() and int(name) not in (1, pid):
                    return 0.0
        except OSError:
            return 0.0
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


WALL_CAP = 3.0      # the wall clock never stretches past this many times its limit


def _wait(pid, wall_s):
    """Wait for ``pid`` at most ``wall_s`` seconds of time it could run: the time its process group waited for a
    CPU (other jobs' load) is added, up to ``WALL_CAP`` x ``wall_s``; kill its group on overrun.
    (status, rusage, timed_out, wall, capped): ``capped`` when the stretch hit the cap (load-dependent)."""
    t0 = time.monotonic()
    timed_out = capped = False
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    while True:
        elapsed = time.monotonic() - t0
        left = wall_s - elapsed
        if left <= 0:
            left = min(wall_s + _run_delay(pid), WALL_CAP * wall_s) - elapsed
            if left <= 0:
                timed_out = True
                capped = elapsed >= WALL_CAP * wall_s - 1e-3
                break
            left = max(left, 0.01)
        if fd is not None:
            if select.select([fd], [], [], left)[0]:
                break
        else:
            got, status, ru = os.wait4(pid, os.WNOHANG)
            if got:
                return status, ru, False, time.monotonic() - t0, False
            time.sleep(min(0.002, left))
    if timed_out:
        for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass
    if fd is not None:
        os.close(fd)
    _, status, ru = os.wait4(pid, 0)
    return status, ru, timed_out, time.monotonic() - t0, capped


def _sweep():
    """Kill every other process in our pid namespace (only when we are its init)."""
    if os.getpid() != 1:
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.001)


def _read_cap(path, cap):
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError:
        return "", False
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


def main():
    log_fd = _log_fd()
    raw = sys.stdin.buffer.read()
    batch = json.loads(raw)
    dev_null = os.open(os.devnull, os.O_RDWR)
    os.dup2(dev_null, 0)
    os.dup2(dev_null, 1)
    os.close(dev_null)
    work = _mount_private_tmp()
    private_tmp = work is not None
    os.environ.clear()
    if work is None:
        work = os.getcwd()
    dropped = _drop_privileges(work if private_tmp else None)
    _set_limits(batch["limits"])
    pidns = os.getpid() == 1
    results = []
    for unit in batch["units"]:
        lim = unit["limits"]
        res = {"env": {"private_tmp": private_tmp, "dropped_to": os.getuid(), "pid_namespace": pidns,
                       "privileges_dropped": dropped}, "cases": []}
        try:
            code_obj = compile(unit["code"], "solution.py", "exec")
        except (SyntaxError, ValueError) as e:
            res["not_parsable"] = f"{type(e).__name__}: {e}"
            results.append(res)
            continue
        stdins = unit["stdins"]
        for idx, stdin in enumerate(stdins):
            if unit.get("stop_after_timeout", True) and any(
                    c.get("timed_out") or c.get("signal") == signal.SIGXCPU for c in res["cases"]):
                res["cases"].append({"skipped": True})
                continue
            with open(os.path.join(work, f"in{idx}"), "w") as f:
                f.write(stdin)
            pid = os.fork()
            if pid == 0:
                _child(unit, code_obj, work, log_fd, idx)
            status, ru, timed_out, wall, capped = _wait(pid, lim["wall_s"])
            _sweep()
            out, out_trunc = _read_cap(os.path.join(work, f"out{idx}"), lim["capture_bytes"])
            err, _ = _read_cap(os.path.join(work, f"err{idx}"), 4000)
            case = {"rc": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "timed_out": timed_out, "wall_capped": capped, "wall_s": round(wall, 4),
                    "cpu_s": round(ru.ru_utime + ru.ru_stime, 4), "max_rss_kb": ru.ru_maxrss,
                    "stdout": out, "stdout_truncated": out_trunc, "stderr_tail": err[-2000:]}
            res["cases"].append(case)
            for name in os.listdir(work):
                p = os.path.join(work, name)
                try:
                    if os.path.isdir(p) and not os.path.islink(p):
                        import shutil
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        os.unlink(p)
                except OSError:
                    pass
        results.append(res)
    data = json.dumps(results).encode()
    while data:
        data = data[os.write(log_fd, data):]
    os.close(log_fd)
    os._exit(0)


if __name__ == "__main__":
    main()
