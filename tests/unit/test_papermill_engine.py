"""``papermill --engine creval`` (the README's way to rerun one chapter): each parameter shown once, in the
chapter's own cell with the value it ran with; no kernel transport warning."""
import json
import subprocess
import sys
from pathlib import Path


def _notebook(path: Path) -> None:
    cell = lambda src, tags=(): {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": src,  # noqa: E731
                                 "outputs": [], "execution_count": None}
    nb = {"cells": [cell("x = 1          # how many\nname = 'a'     # who\n", ["parameters"]),
                    cell("print(x * 10, name)")],
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


def test_the_book_passes_the_ledger_file_and_kernel_env_explicitly(tmp_path, monkeypatch):
    import os

    import papermill as pm

    from creval.book.engine import register_engine
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    src, out, ledger = tmp_path / "in.ipynb", tmp_path / "out.ipynb", tmp_path / "calls.jsonl"
    _notebook(src)
    nb = json.loads(src.read_text())
    nb["cells"][1]["source"] = ("import os\nfrom creval.core.ledger import LEDGER, CallRecord\n"
                                "LEDGER.add(CallRecord(kind='chat', model='m', cached=False, input_tokens=3))\n"
                                "print(os.environ.get('TQDM_DISABLE'))")
    src.write_text(json.dumps(nb))
    register_engine()
    pm.execute_notebook(str(src), str(out), parameters={"x": 2}, engine_name="creval", kernel_name="python3",
                        progress_bar=False, ledger_file=str(ledger), kernel_env={"TQDM_DISABLE": "1"})
    cells = json.loads(out.read_text())["cells"]
    assert "".join(cells[1]["outputs"][0]["text"]).strip() == "1"                 # the kernel got the variable
    assert "TQDM_DISABLE" not in os.environ                                        # this process did not
    (row,) = [json.loads(x) for x in ledger.read_text().splitlines()]               # the kernel streamed its call
    assert row["kind"] == "chat" and row["input_tokens"] == 3 and row["cached"] is False


def test_the_kernel_streams_only_when_given_a_file():
    from creval.book.engine import QUIET_KERNEL, kernel_arguments
    assert kernel_arguments() == [QUIET_KERNEL]
    (quiet, code) = kernel_arguments("/tmp/a b/'c'.jsonl")
    assert quiet == QUIET_KERNEL and code.startswith("--IPKernelApp.exec_lines=")
    assert "stream_to(\"/tmp/a b/'c'.jsonl\")" in code
