"""`creval new-study`: the pieces it writes (package files from templates, the chapter, the lines in _quarto.yml
and the preface) have the shape the book and the study-listing tests expect. The whole command is checked in a
scratch clone (docs/CONTRIBUTING.md): it writes into the checkout, so a unit test does not run it here."""
import re
import shutil
from string import Template

import pytest

from creval.book.execute import book_structure
from creval.book.render import preface_html
from creval.commands.new_study import (
    add_to_preface,
    add_to_quarto,
    chapter_notebook,
    create,
    sorted_imports,
    template_values,
)
from creval.core.errors import CrevalError
from creval.core.paths import REPO
from creval.studies.scaffold import MODEL_FILES, REPORT_TEST, TEMPLATES

VALUES = template_values("wordlen", ("divergent",), "Word length", "chapters/10-wordlen.ipynb")


def test_every_template_is_filled_and_compiles():
    for name, text in TEMPLATES.items():
        src = Template(text).substitute(VALUES)
        assert "$" not in src and "wordlen" in src, name
        compile(src, name, "exec")
    init = Template(TEMPLATES["__init__.py"]).substitute(VALUES)
    assert 'Study("wordlen", "chapters/10-wordlen.ipynb", WordlenConfig, run.run, reads=(\'divergent\',)' in init
    assert "wordlen_limit: int = identity(0)" in Template(TEMPLATES["config.py"]).substitute(VALUES)
    assert "phases=" not in init and "ModelPhase" not in init          # a study that calls no model declares none


def test_a_study_that_calls_the_model_declares_its_phase():
    values = template_values("wordlen", ("divergent",), "Word length", "chapters/10-wordlen.ipynb", calls_model=True)
    init = Template(TEMPLATES["__init__.py"]).substitute(values)
    compile(init, "__init__.py", "exec")
    assert "from creval.models.capabilities import ModelPhase\n" in init
    assert 'phases=(ModelPhase("answers", "model", ("chat",)),),' in init
    assert max(len(line) for line in init.splitlines()) <= 120
    phases = eval(init.split("phases=", 1)[1].split("   #", 1)[0].rstrip(","),
                  {"ModelPhase": __import__("creval.models.capabilities", fromlist=["ModelPhase"]).ModelPhase})
    assert [(p.name, p.role, p.verbs) for p in phases] == [("answers", "model", ("chat",))]


def test_a_study_that_calls_the_model_asks_it_as_units_and_prices_the_calls():
    """With --calls-model the run asks the model under test one question per table read, as resumable units at the
    model's width, re-asking an empty reply (then ``unparsed``), and the estimate prices those calls."""
    values = template_values("zeta", ("divergent",), "Zeta", "chapters/10-zeta.ipynb", calls_model=True)
    files = {name: sorted_imports(Template(text).substitute(values)) for name, text in MODEL_FILES.items()}
    for name, src in files.items():
        compile(src, name, "exec")
        assert "$" not in src and max(len(line) for line in src.splitlines()) <= 120, name
    run = files["run.py"]
    assert "registry.load_model(cfg.model)" in run and "run_units(cfg.run_dir, \"answers\"" in run
    assert "width=width(cfg.model)" in run and 'got.finish_reason != "length"' in run
    assert 'calls("model", cfg.model' in files["estimate.py"]
    assert '"answers": AnswerRecord' in files["__init__.py"] and "class AnswerRecord(Record)" in files["records.py"]
    assert "zeta_max_tokens: int = identity(96)" in files["config.py"]


def test_scaffold_imports_are_in_module_order_whatever_the_name():
    text = "x\nfrom creval.studies.zeta.run import q\nfrom creval.studies.estimate.parts import E\nfrom a import b\n"
    assert sorted_imports(text) == ("x\nfrom creval.studies.estimate.parts import E\nfrom creval.studies.zeta.run "
                                    "import q\nfrom a import b\n")


def test_the_report_test_written_beside_the_study_passes_on_its_report(monkeypatch):
    import sys
    import types
    report = types.ModuleType("creval.studies.wordlen.report")
    exec(compile(Template(TEMPLATES["report.py"]).substitute(VALUES), "report.py", "exec"), report.__dict__)
    monkeypatch.setitem(sys.modules, "creval.studies.wordlen", types.SimpleNamespace(report=report))
    monkeypatch.setitem(sys.modules, "creval.studies.wordlen.report", report)
    src = Template(REPORT_TEST).substitute(name="wordlen")
    assert "$" not in src
    ns: dict = {}
    exec(compile(src, "test_wordlen_report.py", "exec"), ns)
    tests = [f for n, f in ns.items() if n.startswith("test_")]
    assert len(tests) == 2
    for t in tests:
        t()


def test_the_chapter_has_a_title_a_parameters_cell_and_a_setup_cell_that_reads_the_study():
    nb = chapter_notebook("wordlen", ("divergent",), "Word length")
    kinds = [(c["cell_type"], c["metadata"].get("tags", [])) for c in nb["cells"]]
    assert kinds[:3] == [("markdown", []), ("code", ["parameters"]), ("code", ["hide-input"])]
    assert "".join(nb["cells"][0]["source"]).startswith("# Word length\n")
    setup = "".join(nb["cells"][2]["source"])
    assert "WordlenConfig.from_params(globals())" in setup and "recs = STUDY.records(cfg)" in setup
    assert len({c["id"] for c in nb["cells"]}) == len(nb["cells"])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


def test_the_chapter_gets_a_part_and_a_preface_entry(tmp_path):
    shutil.copyfile(REPO / "_quarto.yml", tmp_path / "_quarto.yml")
    shutil.copyfile(REPO / "index.qmd", tmp_path / "index.qmd")
    before = book_structure(tmp_path / "_quarto.yml")
    add_to_quarto(tmp_path / "_quarto.yml", "chapters/10-wordlen.ipynb", "Word length")
    assert book_structure(tmp_path / "_quarto.yml") == before + [("Word length", "chapters/10-wordlen.ipynb")]
    n = len(re.findall(r"(?m)^\d+\. \*", (tmp_path / "index.qmd").read_text()))
    add_to_preface(tmp_path / "index.qmd", n + 1, "Word length", "how long the words are")
    text = (tmp_path / "index.qmd").read_text()
    assert f"\n{n + 1}. *Word length*: how long the words are.\n" in text
    assert "<em>Word length</em>" in preface_html(text)
    assert text.index("*Word length*") > text.index(f"{n}. *")         # after the last chapter's entry


def test_a_bad_name_or_an_unknown_upstream_study_is_refused_before_anything_is_written():
    with pytest.raises(CrevalError, match="not a lower-case Python name"):
        create("Word-len", ("divergent",))
    with pytest.raises(CrevalError, match="exists already"):
        create("divergent", ("apparatus",))
    with pytest.raises(CrevalError, match="unknown study 'nowhere'"):
        create("never_written", ("nowhere",))
    assert not (REPO / "lib/creval/studies/never_written").exists()
    assert not (REPO / "tests/unit/test_never_written_report.py").exists()
