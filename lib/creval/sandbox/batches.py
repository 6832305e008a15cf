"""Units and batches: a unit is one program with its stdins and limits (:func:`program_unit`); a batch of
units runs through the call cache (:func:`run_units`: cached by content; the misses in parallel across worker
slots, units sharing a ``group`` one after another on one slot; infrastructure failures and load-dependent
timeouts retried once, alone, and never cached)."""
from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tqdm.auto import tqdm

from creval.core import cache as callcache
from creval.sandbox.cgroups import SLOT_CGROUPS
from creval.sandbox.jail import FALLBACK_REFUSED, Isolation, interpreter, isolation, slot_uid
from creval.sandbox.limits import CGROUP_SLACK_MB, Limits
from creval.sandbox.runner import NOT_PARSABLE, RUNNER_VERSION, SLOT_POOL, JailFailed, nproc_for_user, run_case

# One launch batch at a time (its workers fill the CPUs, its retries must run alone), but beside model work:
# a unit's programs run while other units wait on a server or a local model.
BATCHES = threading.Lock()


def program_unit(code: str, stdins: list[str], limits: Limits = Limits(), group: str = "") -> dict:
    """A whole program run once per stdin (each run in a jail and a fresh interpreter of its own). (``mode`` is
    kept in the unit: it is part of every cached result's key.)"""
    return {"mode": "program", "code": code, "stdins": list(stdins), "limits": limits.to_dict(),
            "group": group}


def describe(unit: dict) -> dict:
    """What of a unit keys its cached result (all but its ``group``, which only orders the work)."""
    return {k: v for k, v in unit.items() if k != "group"}


def run_unit(iso: Isolation, py: str, unit: dict, uid: int | None, slot: int = 0) -> dict:
    """Every case of one unit, one after another on one worker slot (a case after a timeout is skipped unless
    the unit says ``stop_after_timeout: False``); the unit's result dict."""
    lim = unit["limits"]
    nproc = lim["processes"] + 1     # the program and ``processes`` more (counted in the jail's user namespace)
    if iso.program_uid == "host-user" and iso.kind != "bwrap":   # no user namespace of its own: RLIMIT_NPROC
        nproc += nproc_for_user()                                # counts all this user's processes: leave room
    cg = None
    if iso.memory_scope == "cgroup":
        cg = SLOT_CGROUPS.get(slot, (lim["memory_mb"] + CGROUP_SLACK_MB) << 20, lim["processes"] + 4)
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
            case = run_case(iso, py, code, stdin, lim, nproc, uid, cg, delegated)
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
    except JailFailed as e:
        res = {"env": env, "sandbox_error": str(e), "cases": []}
    finally:
        if cg is not None:
            cg.kill_all()
    return res


def launch(units: list[dict]) -> list[dict]:
    """The units of one group, one after another on one worker slot; every program run is a jail and a fresh
    interpreter of its own (nothing is shared between units but the slot's uid, never at the same time). A
    result dict per unit (never raises for program misbehaviour)."""
    iso = isolation()
    if iso.kind == "refused":
        return [{"env": iso.describe(), "sandbox_error": FALLBACK_REFUSED, "cases": []} for _ in units]
    py, _ = interpreter()
    t0 = time.monotonic()
    with SLOT_POOL.take() as uid:
        slot = uid - slot_uid(0)
        if iso.program_uid != "separate":
            uid = None
        got = [run_unit(iso, py, u, uid, slot) for u in units]
    wall = time.monotonic() - t0
    for g in got:
        g["launch_wall_s"] = round(wall / len(units), 4)
    return got


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


def launch_all(missing: list[dict], workers: int | None, progress: bool) -> list[dict]:
    """The results of ``missing`` (cache misses): groups launched in parallel (``workers`` at once), then each
    failed or load-dependent unit retried once, alone."""
    groups: dict[str, list[int]] = {}
    for i, u in enumerate(missing):
        groups.setdefault(u.get("group") or f"#{i}", []).append(i)
    out: list[dict | None] = [None] * len(missing)
    packs = list(groups.values())
    bar = tqdm(total=len(packs), desc="sandbox", leave=False) if progress else None
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:
        for idx, res in zip(packs, pool.map(lambda ix: launch([missing[i] for i in ix]), packs)):
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
        again = launch([missing[i]])[0]
        again["limits"] = missing[i]["limits"]
        again["retried"] = out[i].get("sandbox_error") or "wall-clock timeout under the CPU limit"
        if load_dependent(again):
            again["load_dependent"] = True
        out[i] = again
    return out


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
    return callcache.cached_batch("sandbox", identity, units, describe,
                                  lambda missing: launch_all(missing, workers, progress), model="sandbox",
                                  cache=cache, keep=cacheable, lock=BATCHES)
