"""The verdict records of the NeoCoder correctness judges (:mod:`creval.measures.neocoder.judges`), shared by the strict
judge (:mod:`creval.measures.neocoder.strict`) and the repo-harness judge (:mod:`creval.measures.neocoder.repo`):
the verdict names, :class:`CaseVerdict`, :class:`Verdict`, the verdict a sandbox run earns by how it ended,
and the isolation fields of a sandbox result."""
from __future__ import annotations

from dataclasses import asdict, dataclass

OK, WA, RE, TLE, MLE, OLE, NP, SBX, JE = ("OK", "wrong answer", "runtime error", "time limit", "memory limit",
                                          "output limit", "not parsable", "sandbox error", "judge error")
VERDICTS = (OK, WA, RE, TLE, MLE, OLE, NP, SBX, JE)
JUDGES = ("repo", "strict")
JUDGE_VERSION = 6          # bump when a judge's semantics change (part of the study's run identity); 6: a jail
                           # per run (sandbox runner 6), a harness report must hold one output per compared case


@dataclass(frozen=True)
class CaseVerdict:
    verdict: str
    stdout: str = ""
    stderr_tail: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Verdict:
    judge: str
    verdict: str
    correct: bool
    cases: tuple[CaseVerdict, ...] = ()
    detail: str = ""
    network_isolated: bool = True
    isolation: str = "fallback"          # the sandbox's: "bwrap" (jail) or "fallback" (unshare runner)
    memory_scope: str = "per-process"    # "cgroup": one memory limit for the whole program tree
    load_dependent: bool = False         # a wall-clock timeout under the CPU limit, twice (not cached)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cases"] = [c.to_dict() for c in self.cases]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        return cls(d["judge"], d["verdict"], d["correct"], tuple(CaseVerdict(**c) for c in d.get("cases", ())),
                   d.get("detail", ""), d.get("network_isolated", True),
                   d.get("isolation", "fallback"), d.get("memory_scope", "per-process"),
                   d.get("load_dependent", False))


def run_verdict(c: dict) -> str | None:
    """The verdict a sandbox run (one case of a unit's result) earns by how it ended (None: it ended
    normally, so its output decides)."""
    if c.get("skipped"):
        return "skipped"
    err = c.get("stderr_tail", "")
    if c.get("timed_out") or c.get("signal") == 24:                 # 24 = SIGXCPU
        return TLE
    if c.get("rc") == 75 or "MemoryError" in err or c.get("oom_killed"):
        return MLE
    if c.get("signal") == 25 or c.get("stdout_truncated"):        # 25 = SIGXFSZ
        return OLE
    if c.get("rc") != 0 or c.get("signal"):
        return RE
    return None


def sandbox_env(res: dict) -> dict:
    """What isolation a sandbox result got (the Verdict fields that record it)."""
    env = res.get("env", {})
    return {"network_isolated": env.get("network_isolated", False), "isolation": env.get("isolation", "fallback"),
            "memory_scope": env.get("memory_scope", "per-process"), "load_dependent": bool(res.get("load_dependent"))}
