"""docs/CONTRIBUTING.md's worked example, followed literally: its `# file:` blocks are the files of
examples/ (the example is real code), the package declares its study, the contract test
(tests/integration/test_contract.py) passes on it and `creval estimate` prices it."""
import dataclasses
import json
import re
import sys

import pytest
import test_contract as contract_test

from creval.cli import main
from creval.core.paths import REPO
from creval.studies.registry import STUDIES, register

pytestmark = pytest.mark.integration
EXAMPLES = REPO / "examples"


def doc_blocks() -> dict[str, str]:
    """``{file name: text}`` of every ```python block of CONTRIBUTING.md that starts with ``# file:``."""
    doc = (REPO / "docs/CONTRIBUTING.md").read_text()
    return {name: body for name, body in re.findall(r"```python\n# file: (\S+)\n(.*?)```", doc, re.S)}


def percent_to_notebook(text: str) -> dict:
    """A Jupytext percent-format script as an nbformat-4 notebook (markdown cells lose their ``# ``)."""
    cells = []
    for chunk in re.split(r"(?m)^# %%", text)[1:]:
        head, _, body = chunk.partition("\n")
        body = body.strip("\n")
        if head.strip().startswith("[markdown]"):
            src = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            cells.append({"cell_type": "markdown", "metadata": {}, "source": src})
        else:
            tags = re.findall(r'"([^"]+)"', head)
            cells.append({"cell_type": "code", "metadata": {"tags": tags}, "source": body, "outputs": [],
                          "execution_count": None})
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_the_doc_shows_the_example_files_as_they_are():
    blocks = doc_blocks()
    files = {str(f.relative_to(EXAMPLES)): f.read_text() for f in sorted(EXAMPLES.rglob("*.py"))}
    assert {"lexical/__init__.py", "lexical/config.py", "lexical/records.py", "lexical/run.py",
            "lexical/estimate.py", "lexical/report.py", "10-lexical.py"} <= set(files)
    assert blocks == files


@pytest.fixture
def lexical(tmp_path, monkeypatch):
    """The example study, imported from examples/ and registered (undone after the test), its chapter a
    notebook in ``tmp_path``."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    for mod in [m for m in sys.modules if m == "lexical" or m.startswith("lexical.")]:
        monkeypatch.delitem(sys.modules, mod)
    import lexical
    chapter = tmp_path / "10-lexical.ipynb"
    chapter.write_text(json.dumps(percent_to_notebook((EXAMPLES / "10-lexical.py").read_text())))
    study = dataclasses.replace(lexical.STUDY, chapter=str(chapter))
    monkeypatch.setitem(STUDIES, "lexical", study)
    monkeypatch.delitem(STUDIES, "lexical")
    assert register(study) is STUDIES["lexical"]
    return study


def test_worked_example_passes_the_contract(lexical, tmp_path, monkeypatch, caplog):
    contract_test.test_study_contract("lexical", tmp_path / "contract", monkeypatch, caplog)
    recs = lexical.records(lexical.make_config(contract_test._params(tmp_path / "contract" / "runs")))
    assert len(recs.answers) == 2 and set(recs.answers["n"]) == {3}
    assert recs.answers["distinct_2"].between(0, 1).all()
    assert [type(r).__name__ for r in recs.typed("answers")] == ["AnswerRecord"] * 2


def test_creval_estimate_prices_the_worked_example(lexical, capsys):
    assert main(["estimate", "lexical", "--json", "--params", str(REPO / "params/smoke.yaml")]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["studies"]
    assert row["study"] == "lexical" and row["units"] == 2          # 2 problems x 1 model
    calls = row["total"]["calls"]
    assert calls["min"] == calls["max"] == 6                        # 3 samples of each problem
