"""docs/CONTRIBUTING.md's worked example, followed literally: its `# file:` blocks are written to a temporary
folder as a package and a chapter, the study is registered with its registry line, and the contract test
(tests/integration/test_contract.py) passes on it."""
import dataclasses
import json
import re
import sys

import pytest
import test_contract as contract_test

from creval.core.paths import REPO
from creval.studies.registry import STUDIES, Study, register

pytestmark = pytest.mark.integration


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


def test_worked_example_passes_the_contract(tmp_path, monkeypatch):
    blocks = doc_blocks()
    assert {"lexical/__init__.py", "lexical/config.py", "lexical/run.py", "lexical/report.py", "10-lexical.py",
            "registry-line.py"} <= set(blocks), sorted(blocks)
    src = tmp_path / "src"
    for name, body in blocks.items():
        if name.startswith("lexical/"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(body)
    chapter = tmp_path / "10-lexical.ipynb"
    chapter.write_text(json.dumps(percent_to_notebook(blocks["10-lexical.py"])))
    monkeypatch.syspath_prepend(str(src))
    for mod in [m for m in sys.modules if m == "lexical" or m.startswith("lexical.")]:
        monkeypatch.delitem(sys.modules, mod)
    from lexical.config import LexicalConfig

    study = eval(blocks["registry-line.py"], {"Study": Study, "LexicalConfig": LexicalConfig})  # our own doc
    study = dataclasses.replace(study, chapter=str(chapter))
    monkeypatch.setitem(STUDIES, "lexical", STUDIES.get("lexical", study))   # undone after the test
    assert register(study) is STUDIES["lexical"]
    contract_test.test_study_contract("lexical", tmp_path / "contract", monkeypatch)
    recs = study.records(study.make_config(contract_test._params(tmp_path / "contract" / "runs")))
    assert len(recs.answers) == 2 and set(recs.answers["n"]) == {3}
    assert recs.answers["distinct_2"].between(0, 1).all()
