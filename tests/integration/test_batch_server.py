"""`creval batch` with a second model behind a local OpenAI-compatible server (llama.cpp's, from the venv),
its spec kept outside the repository (CREVAL_MODELS): the studies measure that model, and every study's manifest
and records name it. Chapters 03 and 04 only (divergent, convergent with the retrieval judge, validation): the
studies that test_vllm_studies.py leaves to CREVAL_VLLM_ALL for time, so that every study's server path runs
against a real server in every `make test` (the others against vLLM there)."""
import json
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from creval.core.paths import REPO
from creval.models.registry import get_spec, locate_weights
from creval.studies.registry import STUDIES
from small import FEW, SMALL

pytestmark = pytest.mark.integration


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    gguf = locate_weights(get_spec("smollm2-135m"))
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_threads", "2", "--logits_all", "true",
                             "--model_alias", "served-smollm2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(120):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start")
    yield url
    proc.terminate()
    proc.wait(10)


def test_batch_measures_a_served_model(server, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "served.yaml").write_text(f"backend: openai\nmodel: served-smollm2\nbase_url: {server}\nconcurrency: 2\n"
                                       "extra: {bos_text: '<|im_start|>'}\n")
    env = {**os.environ, "CREVAL_MODELS": str(specs), "CREVAL_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "creval", "batch", "served", "--params", "params/smoke.yaml", "--render", "none",
           "--out", str(tmp_path / "batch"), "--chapters", "03", "04"]
    # the retrieval judge too: its certainty is parsed from text on a server (a path no local model takes)
    for p in [*SMALL, *FEW, "convergent_judges=[zero-shot, retrieval]", "convergent_judge_max_rounds=1"]:
        cmd += ["-p", p]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
    failed = [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "rror" in ln and "%|" not in ln]
    assert r.returncode == 0, (failed[-20:], r.stdout[-2000:])
    book = json.loads((tmp_path / "batch" / "served" / "book-manifest.json").read_text())
    assert [s["study"] for s in book["studies"]] == ["divergent", "convergent", "validation"]
    assert [c["chapter"] for c in book["chapters"]] == [STUDIES[s].chapter for s in ("convergent", "validation")]
    assert all(s["error"] is None for s in book["studies"]) and all(c["error"] is None for c in book["chapters"])
    for s in book["studies"]:
        manifest = json.loads((tmp_path / "home" / s["run_dir"] / "manifest.json").read_text()
                              if not os.path.isabs(s["run_dir"]) else
                              open(os.path.join(s["run_dir"], "manifest.json")).read())
        assert manifest["params"]["model"] == "served", s["study"]
        assert "served" in manifest["models"], (s["study"], list(manifest["models"]))
        assert manifest["models"]["served"]["backend"] == "openai"
    assert book["usage"]["by_kind_model"], book["usage"]
    assert any(k.endswith(":served") and v["calls_made"] > 0 for k, v in book["usage"]["by_kind_model"].items())
