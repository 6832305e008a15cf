"""The book on a fresh machine: no ../shared beside the checkout, no network, an empty data home (no
trained entailment model, no downloads, no cache). Every chapter must still execute, on the bundled
samples and the documented entailment fallback, and say so."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from creval.core.paths import REPO
from creval.studies.registry import STUDIES
from small import FEW, SMALL

pytestmark = pytest.mark.integration


def _no_network_prefix() -> list[str]:
    """Run in a new network namespace with only loopback up (the notebook kernels talk over it) when the
    machine allows it; otherwise rely on CREVAL_OFFLINE=1 and HF_HUB_OFFLINE=1, which every download path
    of creval honours."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not (unshare and ip):
        return []
    # plain -n where we may (root: the sandbox of chapter 05 can still drop to nobody), else a user namespace
    for flags in ("-n", "-rn"):
        prefix = [unshare, flags, "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    return []


def test_smoke_book_builds_with_staged_data_and_network_hidden(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "CREVAL_SHARED_DATA": "none", "CREVAL_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "CREVAL_HOME": str(home), "CREVAL_CACHE": str(home / "cache" / "calls.sqlite")}
    for var in [v for v in env if v.startswith("CREVAL_") and v.endswith("_DIR")]:
        env.pop(var)
    out = tmp_path / "book"
    cmd = [*_no_network_prefix(), sys.executable, "-m", "creval", "book", "--params", "params/smoke.yaml",
           "--render", "offline", "--out", str(out)]
    for p in [*(x for x in SMALL if not x.startswith("divergent_nli=")),
              *FEW]:    # the entailment fallback is what is tested
        cmd += ["-p", p]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    manifest = json.loads((out / "book-manifest.json").read_text())
    assert [c["error"] for c in manifest["chapters"]] == [None] * len(STUDIES)     # every chapter, none failed
    assert manifest["usage"]["total"]["calls_made"] > 0
    assert not (home / "artifacts" / "minilm-sick-nli").exists()          # nothing was trained without SICK
    # the chapters say what they ran on: the fallback entailment backend and the bundled samples
    ch02 = (out / "site" / "chapters" / "02-divergent.html").read_text()
    assert "minilm-cosine" in ch02 and "fallback" in ch02
    rows = [json.loads(x) for f in (home / "runs" / "smoke" / "divergent").glob("*/problems.jsonl")
            for x in f.read_text().splitlines()]
    assert rows and all(r["data_source"] == "sample" for r in rows)
    (study,) = (home / "runs" / "smoke" / "divergent").glob("*/manifest.json")
    ident = json.loads(study.read_text())["params"]["identity"]
    assert ident["nli"] == "minilm-cosine" and set(ident["data"].values()) == {"sample"}
