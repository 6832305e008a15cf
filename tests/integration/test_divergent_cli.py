"""`creval run divergent` end to end with the real local model (smollm2-135m) and the minilm-sick NLI."""
import json
import math
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

N = 5


def recompute_se(mean_logprobs, cluster_ids):
    """Semantic entropy written out independently: class mass = sum of exp(mean log-prob), normalised."""
    mass = {}
    for lp, c in zip(mean_logprobs, cluster_ids):
        mass[c] = mass.get(c, 0.0) + math.exp(lp)
    total = sum(mass.values())
    return -sum((m / total) * math.log(m / total) for m in mass.values())


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_divergent_cli_macgyver(tmp_path):
    env = {**os.environ, "CREVAL_OFFLINE": "1", "CREVAL_SHARED_DATA": "none"}   # the bundled sample
    from creval.measures.nli.train import is_trained
    nli_ran = "minilm-sick" if os.environ.get("CREVAL_SICK_DIR") or is_trained() else "minilm-cosine"
    cmd = [sys.executable, "-m", "creval", "run", "divergent", "--params", "params/smoke.yaml",
           "-p", f"run_root={tmp_path / 'runs'}", "-p", "divergent_limit=3", "-p", f"divergent_n_samples={N}", "-p",
           "divergent_max_steps=5",
           "-p", "divergent_max_step_tokens=48", "-p", "divergent_temperatures=[1.0]", "-p",
           "divergent_nli_eval_pairs=2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "divergent: ok" in r.stdout and "calls " in r.stdout, r.stdout
    (out,) = (tmp_path / "runs" / "divergent").iterdir()           # the study's one run folder
    assert out.name in r.stdout
    for f in ("steps.jsonl", "problems.jsonl", "manifest.json", "sweep.jsonl", "nli_eval.jsonl"):
        assert (out / f).exists(), f
    steps, probs = rows(out / "steps.jsonl"), rows(out / "problems.jsonl")
    assert len(probs) == 3 and len({p["problem_id"] for p in probs}) == 3
    assert {s["problem_id"] for s in steps} == {p["problem_id"] for p in probs}
    for s in steps:
        assert len(s["samples"]) == N == s["n"] == len(s["cluster_ids"])
        lps = [x["mean_logprob"] for x in s["samples"]]
        for x in s["samples"]:   # mean_logprob is the mean of the stored token log-probs
            assert x["mean_logprob"] == pytest.approx(sum(x["token_logprobs"]) / len(x["token_logprobs"]), abs=1e-9)
        se = recompute_se(lps, s["cluster_ids"])
        assert abs(se - s["semantic_entropy"]) < 1e-9
        for key in ("semantic_entropy", "naive_entropy", "discrete_entropy"):
            assert -1e-12 <= s[key] <= math.log(N) + 1e-9, (key, s[key])
        assert s["n_clusters"] == len(set(s["cluster_ids"]))
        assert s["logprob_kind"] == "raw" and s["nli"] == nli_ran
    for p in probs:
        own = [s for s in steps if s["problem_id"] == p["problem_id"] and s["chosen_index"] is not None]
        assert p["n_steps"] == len(own) == len(p["steps"]) and 1 <= p["budget"] <= 5
        if own:
            assert p["mean_semantic_entropy"] == pytest.approx(sum(s["semantic_entropy"] for s in own) / len(own))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["params"]["divergent_n_samples"] == N and manifest["complete"]
    assert "smollm2-135m" in manifest["models"]
    assert manifest["params"]["identity"]["data"] == {"macgyver": "sample"}
    assert {p["data_source"] for p in probs} == {"sample"}
    # running again does nothing new
    r2 = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert r2.returncode == 0 and "calls 0 made" in r2.stdout, r2.stdout
    assert len(rows(out / "problems.jsonl")) == 3 and len(rows(out / "steps.jsonl")) == len(steps)
