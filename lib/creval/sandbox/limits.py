"""What one program run may use: the per-case :class:`Limits` of a unit, and the fixed sizes of the jail."""
from __future__ import annotations

from dataclasses import asdict, dataclass

TMPFS_MB = 64             # each of the jail's fresh tmpfs (/tmp, /dev/shm, /work)
WALL_CAP = 3.0            # the wall clock never stretches past this many times its limit
CGROUP_SLACK_MB = 96      # the runner's own interpreter, beside the program's memory limit


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
