"""`creval batch` of two models (smollm2-135m and a stand-in server's spec, kept outside the repository) on the
smoke profile, only chapter 09: each model's studies run in its own root, then the comparison reads both roots
and names both models on every measure, the one judge, their homogeneity and what each cost."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from creval.core.paths import REPO
from creval.models.standin import StandIn
from small import SMALL

pytestmark = pytest.mark.integration


def test_batch_of_two_models_builds_the_comparison(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    with StandIn(latency=0.0, capacity=16) as s:
        (specs / "standin.yaml").write_text(s.spec_yaml("standin", 8))
        env = {**os.environ, "CREVAL_MODELS": str(specs), "CREVAL_HOME": str(tmp_path / "home")}
        cmd = [sys.executable, "-m", "creval", "batch", "smollm2-135m", "standin", "--params", "params/smoke.yaml",
               "--chapters", "09", "--render", "none", "--out", str(tmp_path / "batch"), "-p", "judge_model=standin"]
        for p in SMALL:
            cmd += ["-p", p]
        r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert "compare: ok" in r.stdout, r.stdout[-2000:]
    (run_dir,) = [p.parent for p in (tmp_path / "home" / "runs" / "compare" / "compare").glob("*/manifest.json")]

    def table(name):
        return pd.DataFrame([json.loads(x) for x in (run_dir / f"{name}.jsonl").read_text().splitlines()])

    sources = table("sources")
    assert set(sources["root"]) == {"runs/smollm2-135m", "runs/standin"} and (sources["status"] == "read").all()
    values = table("values")
    families = {m.split(" (")[0].split("@")[0] for m in values["measure"]}
    assert families >= {"semantic entropy", "distinct", "convergent judge score", "NeoGauge term", "pass",
                        "bits per byte", "AUT originality"}, families
    per_measure = values.groupby("measure")["model"].agg(set)
    assert all(m == {"smollm2-135m", "standin"} for m in per_measure), per_measure
    assert set(values.loc[values["judge"] != "", "judge"]) == {"standin"}            # one fixed judge, named
    h = table("homogeneity")
    assert {("smollm2-135m", "standin"), ("standin", "smollm2-135m")} <= set(zip(h["a"], h["b"]))
    assert h["cosine"].between(-1, 1).all()
    costs = table("costs")
    assert set(costs["model"]) == {"smollm2-135m", "standin"} and costs["calls"].gt(0).all()
    page = json.loads((tmp_path / "batch" / "compare" / "chapters" / "09-compare.ipynb").read_text())
    text = json.dumps(page["cells"])
    assert "2 models compared" in text and "`standin`, the same for every model" in text
