"""A bare ``quarto render`` also writes the item browsers and downloads: ``_quarto.yml``'s post-render script,
run as Quarto runs it (a Python, in the project folder, with ``QUARTO_PROJECT_OUTPUT_DIR``), publishes every
finished run of the default book into the site, and never fails the render."""
import json
import os
import subprocess
import sys

import yaml

from creval.book import postrender
from creval.book.params import effective_params, load_params
from creval.core import paths
from creval.studies.registry import STUDIES

HOOK = "lib/creval/book/postrender_hook.py"


def test_quarto_runs_the_hook_after_the_render():
    project = yaml.safe_load((paths.REPO / "_quarto.yml").read_text())["project"]
    assert project["post-render"] == HOOK and (paths.REPO / HOOK).is_file()


def sample(i: int) -> dict:
    return {"problem_id": "p1", "problem_text": "Reach a key under the sofa.", "sample_index": i,
            "logprob_kind": "exact", "text": f"use a ruler {i}", "token_logprobs": [-0.5, -1.5],
            "finish_reason": "stop",
            "mean_logprob": -1.0, "n_tokens": 2, "prompt_tokens": 30}


def test_the_script_writes_the_browser_and_downloads_of_a_finished_run(tmp_path, monkeypatch):
    home, site = tmp_path / "home", tmp_path / "site"
    monkeypatch.setenv("CREVAL_HOME", str(home))
    env = {**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(site)}
    # the run the default book reads (params/default.yaml), written where the data home puts it
    cfg = STUDIES["apparatus"].make_config(effective_params(load_params(paths.REPO / postrender.DEFAULT_PARAMS)))
    run_dir = cfg.run_dir
    assert str(run_dir).startswith(str(home))
    run_dir.mkdir(parents=True)
    (run_dir / "samples.jsonl").write_text("".join(json.dumps(sample(i)) + "\n" for i in range(3)))
    (run_dir / "manifest.json").write_text(json.dumps({"complete": True, "params": {"run_id": cfg.run_id}}))
    done = subprocess.run([sys.executable, HOOK], cwd=paths.REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    page = (site / "browse" / "apparatus.html").read_text()
    data = json.loads(page.split('id="creval-data">', 1)[1].split("</script>", 1)[0])
    assert [t["name"] for t in data["tables"]] == ["samples"] and len(data["tables"][0]["rows"]) == 3
    assert (site / "downloads" / "apparatus" / "samples.csv").read_text().count("use a ruler") == 3
    assert "item browsers and downloads of 1 studies" in done.stderr and "(apparatus)" in done.stderr
    assert not (site / "browse" / "divergent.html").exists()          # no finished run: nothing written


def test_nothing_wrong_fails_the_render(tmp_path, capsys):
    assert postrender.postrender(tmp_path / "site", tmp_path / "no-such-params.yaml") == []
    assert "creval post-render: item browsers not written:" in capsys.readouterr().err
    assert postrender.main(["--params", str(tmp_path / "none.yaml"), "--site", str(tmp_path / "s")]) == 0
    assert postrender.site_of({}, tmp_path) == tmp_path / "_book"
    assert postrender.site_of({"QUARTO_PROJECT_OUTPUT_DIR": "out"}, tmp_path) == tmp_path / "out"
