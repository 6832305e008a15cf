"""The sandbox's memory record is the program's, not the host's: a jail is forked from the host, and the kernel
keeps a forked child's resident set before its exec as its ru_maxrss, so wait4 alone gave every program the
host's peak (about 1.9 GB beside a loaded model)."""
from __future__ import annotations

import os
import resource
import uuid

import pytest

os.environ.setdefault("CREVAL_SANDBOX_FALLBACK", "1")   # where no jail runs, the suite opts in (records say so)

from creval.core.cache import CallCache
from creval.sandbox import Limits, program_unit, run_units
from creval.sandbox.runner import child_rss_kb

ROOMY = Limits(wall_s=10.0, cpu_s=5.0, memory_mb=1024, output_bytes=1 << 16, capture_bytes=1 << 12)


def test_the_record_takes_the_cgroup_peak_else_only_a_wait4_value_above_the_host():
    assert child_rss_kb(1_900_000, 1_900_000, 12_000) == 12_000      # the cgroup's high-water mark wins
    assert child_rss_kb(1_900_000, 1_900_000, None) == 0             # the host's own peak: not the program's
    assert child_rss_kb(1_850_000, 1_900_000, None) == 0
    assert child_rss_kb(2_400_000, 1_900_000, None) == 2_400_000     # above the host: only the program has it


def peak_of(code: str, cache) -> int:
    r = run_units([program_unit(f"{code}  # {uuid.uuid4()}", [""], ROOMY)], cache=cache)[0]
    c = r["cases"][0]
    assert c["rc"] == 0, c
    return c["max_rss_kb"]


def test_a_small_program_does_not_report_the_hosts_memory(tmp_path):
    ballast = bytearray(200 << 20)                 # make the host big, as a loaded model would
    ballast[::4096] = b"x" * len(ballast[::4096])
    host_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cache = CallCache(tmp_path / "calls.sqlite")
    small = peak_of("print(1)", cache)
    assert small < host_kb                           # the program's own (or 0, not known), never the host's peak
    big = peak_of("x = bytearray(300 << 20)\nx[::4096] = b'y' * len(x[::4096])\nprint(len(x))", cache)
    if big:                                          # measured (cgroup, or above the host): it holds the 300 MB
        assert big > 300 * 1024 and big > small
    del ballast


@pytest.mark.parametrize("version", [1])
def test_a_v1_cgroup_peak_is_reset_before_each_run(tmp_path, version):
    from creval.sandbox.cgroups import Cgroup
    d = tmp_path / "memory"
    d.mkdir()
    (d / "memory.max_usage_in_bytes").write_text(str(50 << 20))
    cg = Cgroup({"memory": d}, version)
    assert cg.reset_peak() and (d / "memory.max_usage_in_bytes").read_text() == "0"
    (d / "memory.max_usage_in_bytes").write_text(str(8 << 20))     # what the kernel counted during the run
    assert cg.peak_kb() == 8 * 1024
    assert Cgroup({}, 1).reset_peak() is False and Cgroup({}, 1).peak_kb() is None
