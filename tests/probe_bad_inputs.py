"""Probe: run bad inputs a new user makes through the real ``creval`` command and check each ends in the
project's two-line message (``creval: error: ...`` / ``fix: ...``), exit 2, and no traceback.

Run as ``python tests/probe_bad_inputs.py`` (prints one line per probe, exit 1 if any fails) or through
``tests/unit/test_edges_probe.py``. Every probe fails before any model loads, so the whole run takes seconds.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def probes(tmp: Path) -> list[tuple[str, list[str], dict, str]]:
    """(name, argv, extra env, a fragment the error line must contain)."""
    (tmp / "a-file").write_text("x")
    (tmp / "garbage.sqlite").write_text("this is not a database\n" * 10)
    (tmp / "good.jsonl").write_text(json.dumps({"problem": "p", "solution": "s"}) + "\n")
    out = [("chapters matching nothing", ["book", "--chapters", "99"], {}, "matches no chapter"),
           ("--out names an existing file", ["book", "--chapters", "01", "--out", str(tmp / "a-file")], {},
            "existing file"),
           ("judge a missing file", ["judge", str(tmp / "nope.jsonl"), "--out", str(tmp / "o")], {}, "no such file"),
           ("unknown model spec path", ["judge", str(tmp / "good.jsonl"), "--out", str(tmp / "o3"), "--judge-model",
                                        str(tmp / "none.yaml")], {}, "does not exist"),
           ("book with an unknown model (found before any study)",
            ["book", "-p", "model=nope", "--render", "none", "--out", str(tmp / "o4")], {}, "unknown model 'nope'"),
           ("book with an unknown judge model", ["book", "-p", "judge_model=nope", "--render", "none",
                                                 "--out", str(tmp / "o5")], {}, "unknown model 'nope'"),
           ("batch with a missing spec file", ["batch", "smollm2-135m", str(tmp / "none.yaml"), "--render", "none",
                                              "--out", str(tmp / "o6")], {}, "does not exist"),
           ("a parameter file that does not exist", ["book", "--params", str(tmp / "none-params.yaml")], {},
            "parameter file"),
           ("measuring an API model's speed without --remote", ["throughput", "gpt-4o"], {}, "served over an API")]
    if not shutil.which("quarto"):
        out.append(("--render quarto without Quarto", ["book", "--chapters", "01", "--render", "quarto",
                                                         "--out", str(tmp / "b")], {}, "quarto"))
    return out


def run_probe(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "creval", *argv], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def check(r: subprocess.CompletedProcess, fragment: str) -> str | None:
    """None when the probe behaved; else what was wrong."""
    err = r.stderr.strip().splitlines()
    if r.returncode != 2:
        return f"exit {r.returncode}, expected 2: {r.stderr[-300:]}"
    if "Traceback" in r.stderr + r.stdout:
        return "a traceback was printed"
    if not err or not err[0].startswith("creval: error: ") or fragment.lower() not in err[0].lower():
        return f"first line {err[:1]} lacks 'creval: error: ...{fragment}...'"
    return None


def main() -> int:
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, argv, env, frag in probes(Path(d)):
            why = check(run_probe(argv, env), frag)
            bad += why is not None
            print(f"{'ok  ' if why is None else 'FAIL'} {name}{'' if why is None else ': ' + why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
