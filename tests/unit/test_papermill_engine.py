"""``papermill --engine creval`` (the README's way to rerun one chapter): each parameter shown once, in the
chapter's own cell with the value it ran with; no kernel transport warning."""
import json
import subprocess
import sys
from pathlib import Path


def _notebook(path: Path) -> None:
    cell = lambda src, tags=(): {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": src,  # noqa: E731
                                 "outputs": [], "execution_count": None}
    nb = {"cells": [cell("x = 1          # how many\nname = 'a'     # who\n", ["parameters"]), cell("print(x * 10, name)")],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def test_engine_writes_the_values_into_the_parameters_cell(tmp_path):
    src, out = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    _notebook(src)
    r = subprocess.run([sys.executable, "-m", "papermill", str(src), str(out), "-p", "x", "7", "--engine", "creval"],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "without encryption" not in r.stderr
    cells = json.loads(out.read_text())["cells"]
    assert len(cells) == 2                                            # no injected cell added
    own = "".join(cells[0]["source"])
    assert own.splitlines()[0].startswith("x = 7") and "# how many" in own and "name = 'a'" in own
    assert "".join(cells[1]["outputs"][0]["text"]).strip() == "70 a"     # the kernel ran with the new value
