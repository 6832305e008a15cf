"""``quarto render`` gives the executed book: the pre-render step run as Quarto runs it (its variables, its
process as the parent), on a copy of the book's Quarto project. The studies and papermill are replaced by a
stand-in build here (tests/integration/test_book.py runs the real one); Quarto itself is not installed."""
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from creval.book import prerender as P
from creval.book.execute import book_structure
from creval.book.prerender_hook import MISSING
from creval.book.render import staged_quarto_config
from creval.core.paths import REPO
from creval.studies.registry import STUDIES

CHAPTERS = [f for _, f in book_structure() if f.endswith(".ipynb")]
HOOK = REPO / "lib" / "creval" / "book" / "prerender_hook.py"


@pytest.fixture
def project(tmp_path):
    """A copy of the book's Quarto project (``_quarto.yml``, the preface, the chapters as committed)."""
    root = tmp_path / "repo"
    (root / "chapters").mkdir(parents=True)
    for f in ["_quarto.yml", "index.qmd", *CHAPTERS]:
        shutil.copyfile(REPO / f, root / f)
    return root


class StandInBuild:
    """``build_book``'s signature: writes each chapter it is asked for, from ``source``, with one output added."""

    def __init__(self, error: str | None = None):
        self.calls, self.error = [], error

    def __call__(self, params, out, only, render, progress, source):
        self.calls.append({"only": only, "render": render, "source": source})
        chapters = []
        for ch in CHAPTERS:
            if any(o in Path(ch).stem for o in only):
                nb = json.loads((source / ch).read_text())
                nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
                (out / ch).parent.mkdir(parents=True, exist_ok=True)
                (out / ch).write_text(json.dumps(nb))
                chapters.append({"chapter": ch, "error": None})
        if self.error:
            chapters[-1]["error"] = self.error
        return {"studies": [{"study": "divergent", "error": None}], "chapters": chapters}


def quarto_env(**extra) -> dict:
    return {"QUARTO_PROJECT_OUTPUT_DIR": "_book", "QUARTO_PROJECT_SCRIPT_PROGRESS": "1",
            "QUARTO_PROJECT_SCRIPT_QUIET": "0", **extra}


def outputs(path: Path) -> int:
    return sum(len(c.get("outputs", [])) for c in json.loads(path.read_text())["cells"])


def wait_for(check, seconds: float = 30.0) -> bool:
    end = time.time() + seconds
    while time.time() < end:
        if check():
            return True
        time.sleep(0.2)
    return check()


def test_the_render_covers_all_chapters_or_the_input_files_quarto_names(project, tmp_path):
    assert P.quarto_chapters(quarto_env(QUARTO_PROJECT_RENDER_ALL="1"), project) == CHAPTERS
    book = sorted(s.chapter for s in STUDIES.values() if s.book)
    assert len(book) >= 9 and sorted(CHAPTERS) == book, "_quarto.yml lists one chapter per book study"
    two = "chapters/05-neocoder.ipynb\nindex.qmd\nchapters/02-divergent.ipynb\n"
    assert P.quarto_chapters(quarto_env(QUARTO_PROJECT_INPUT_FILES=two), project) == [
        "chapters/02-divergent.ipynb", "chapters/05-neocoder.ipynb"]                  # in book order
    listed = tmp_path / "inputs.txt"
    listed.write_text("chapters/07-aut-agreement.ipynb")
    env = quarto_env(QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES=str(listed))
    assert P.quarto_chapters(env, project) == ["chapters/07-aut-agreement.ipynb"]
    assert P.quarto_chapters(quarto_env(QUARTO_PROJECT_INPUT_FILES="index.qmd"), project) == []


def test_quarto_renders_executed_chapters_and_gets_them_back_as_committed(project, tmp_path):
    committed = {ch: (project / ch).read_bytes() for ch in CHAPTERS}
    quarto = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])     # stands for Quarto
    build = StandInBuild()
    try:
        code = P.prerender(quarto_env(QUARTO_PROJECT_RENDER_ALL="1"), project, params={}, out=tmp_path / "out",
                           wait_pid=quarto.pid, build=build)
        assert code == 0
        (call,) = build.calls
        assert call["render"] == "none" and call["source"] == project / P.STAGE / "originals"
        assert call["only"] == [Path(c).stem for c in CHAPTERS]
        for ch in CHAPTERS:                                      # what Quarto reads now: the executed chapters
            assert outputs(project / ch) == 1 and (project / ch).read_bytes() == (tmp_path / "out" / ch).read_bytes()
            assert (project / P.STAGE / "originals" / ch).read_bytes() == committed[ch]
        state = json.loads((project / P.STAGE / P.STATE).read_text())
        assert P.alive(state["watcher"]) and set(state["chapters"]) == set(CHAPTERS)
        # a second render while Quarto still runs (quarto preview): same staging, nothing rewritten, no new watcher
        before = {ch: (project / ch).stat().st_mtime_ns for ch in CHAPTERS}
        assert P.prerender(quarto_env(QUARTO_PROJECT_INPUT_FILES=CHAPTERS[1]), project, params={},
                           out=tmp_path / "out", wait_pid=quarto.pid, build=build) == 0
        assert build.calls[1]["source"] == project / P.STAGE / "originals"       # never the executed copies
        assert {ch: (project / ch).stat().st_mtime_ns for ch in CHAPTERS} == before
        assert json.loads((project / P.STAGE / P.STATE).read_text())["watcher"] == state["watcher"]
    finally:
        quarto.kill()
        quarto.wait()
    # Quarto has ended (here: killed): the watcher puts every chapter back, byte for byte, and exits
    assert wait_for(lambda: not (project / P.STAGE / P.STATE).exists())
    assert {ch: (project / ch).read_bytes() for ch in CHAPTERS} == committed
    assert wait_for(lambda: not P.alive(state["watcher"]) or _reaped(state["watcher"]))


def _reaped(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False


def test_a_failed_chapter_stops_the_render_and_leaves_the_chapters_alone(project, tmp_path, capsys):
    committed = {ch: (project / ch).read_bytes() for ch in CHAPTERS}
    code = P.prerender(quarto_env(QUARTO_PROJECT_RENDER_ALL="1"), project, params={}, out=tmp_path / "out",
                       wait_pid=os.getpid(), build=StandInBuild(error="NameError: x"))
    assert code == 1
    err = capsys.readouterr().err
    assert "the book was not rendered" in err and f"chapter {CHAPTERS[-1]}: NameError: x" in err
    assert "`make book`" in err and str(tmp_path / "out") in err
    assert {ch: (project / ch).read_bytes() for ch in CHAPTERS} == committed
    assert not (project / P.STAGE / P.STATE).exists()                         # no staging, no watcher


def test_a_killed_render_is_undone_by_the_next_one_and_an_edit_is_kept(project, tmp_path, capsys):
    committed = {ch: (project / ch).read_bytes() for ch in CHAPTERS}
    assert P.prerender(quarto_env(QUARTO_PROJECT_RENDER_ALL="1"), project, params={}, out=tmp_path / "out",
                       wait_pid=None, build=StandInBuild()) == 0          # staged, and nothing watches
    assert all(outputs(project / ch) == 1 for ch in CHAPTERS)
    edited = project / CHAPTERS[0]
    edited.write_text(edited.read_text().replace("The apparatus", "The apparatus, edited"))
    assert P.prerender(quarto_env(QUARTO_PROJECT_INPUT_FILES="index.qmd"), project, params={},
                       out=tmp_path / "out", build=StandInBuild()) == 0   # restores first, then has nothing to do
    assert "changed during the render; left as it is" in capsys.readouterr().err
    assert "The apparatus, edited" in edited.read_text()
    assert {ch: (project / ch).read_bytes() for ch in CHAPTERS[1:]} == {ch: committed[ch] for ch in CHAPTERS[1:]}
    assert not (project / P.STAGE / P.STATE).exists()


def test_the_quarto_project_names_the_hook_and_keeps_execution_off():
    cfg = yaml.safe_load((REPO / "_quarto.yml").read_text())
    assert cfg["project"]["pre-render"] == "lib/creval/book/prerender_hook.py" and HOOK.is_file()
    assert cfg["execute"]["enabled"] is False and cfg["project"]["type"] == "book"
    staged = yaml.safe_load(staged_quarto_config((REPO / "_quarto.yml").read_text()))
    assert "pre-render" not in staged["project"] and staged["book"] == cfg["book"]   # `creval book --render quarto`
    tree = ast.parse(HOOK.read_text())                   # the hook starts under any Python: standard library only
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


def test_the_hook_runs_the_step_with_a_python_that_has_creval(tmp_path):
    env = {**os.environ, **quarto_env(QUARTO_PROJECT_INPUT_FILES="chapters/03-convergent.ipynb")}
    r = subprocess.run([sys.executable, str(HOOK), "--plan"], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["chapters/03-convergent.ipynb"]
    # a Python without creval (no site-packages) in a folder without .venv: one sentence, Quarto stops
    r = subprocess.run([sys.executable, "-S", str(HOOK), "--plan"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.strip() == MISSING and "make setup" in r.stderr
    # ... and with the checkout's .venv beside it, the hook hands over to that Python
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "python").chmod(0o755)
    r = subprocess.run([sys.executable, "-S", str(HOOK), "--plan"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["chapters/03-convergent.ipynb"]


def test_another_checkout_is_named_not_rendered(tmp_path):
    (tmp_path / "_quarto.yml").write_text("project:\n  type: book\n")
    problem = P.check_checkout(REPO, tmp_path)
    assert str(tmp_path) in problem and "make setup" in problem
    assert P.check_checkout(REPO, REPO) is None and P.check_checkout(REPO, tmp_path / "elsewhere") is None


def test_an_interrupted_build_leaves_no_staging(project, tmp_path):
    committed = {ch: (project / ch).read_bytes() for ch in CHAPTERS}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        P.prerender(quarto_env(QUARTO_PROJECT_RENDER_ALL="1"), project, params={}, out=tmp_path / "out",
                    wait_pid=os.getpid(), build=interrupted)
    assert {ch: (project / ch).read_bytes() for ch in CHAPTERS} == committed
    assert not (project / P.STAGE / P.STATE).exists() and not list((project / P.STAGE / "originals").rglob("*.ipynb"))


def test_a_bad_parameter_is_one_sentence_and_stops_quarto(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("QUARTO_PROJECT_OUTPUT_DIR", "_book")
    monkeypatch.chdir(REPO)
    assert P.main(["--params", "params/smoke.yaml", "-p", "no_such_key=1"]) == 1     # stops before any staging
    err = capsys.readouterr().err
    assert err.startswith("creval pre-render: ") and "no_such_key" in err and "Traceback" not in err
