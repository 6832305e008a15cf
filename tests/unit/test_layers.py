"""The layer rule of docs/CONTRIBUTING.md: a module imports only its own layer or the layers below it."""
import ast
from pathlib import Path

from creval.core.paths import REPO

LAYERS = ["core", "models", "sandbox", "datasets", "domains", "measures", "judges", "grade", "studies", "book",
          "commands"]
PKG = REPO / "lib" / "creval"


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "creval":
        return None
    if len(parts) == 1 or parts[1] == "__version__":
        return 0                  # the package root holds only the version
    if parts[1] in ("cli", "__main__"):
        return len(LAYERS)        # the command line sits on top of everything
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def imports_of(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import (use absolute creval.* imports)"
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return out


def modules() -> list[tuple[Path, str]]:
    """Every source file of the package with its module name (``creval.a.b``; a package's ``__init__`` is ``a``)."""
    out = []
    for f in sorted(PKG.rglob("*.py")):
        parts = [p for p in f.relative_to(PKG).with_suffix("").parts if p != "__init__"]
        out.append((f, ".".join(["creval", *parts])))
    return out


def violations() -> list[str]:
    bad = []
    for f, mod in modules():
        mine = layer_of(mod)
        assert mine is not None, f"{f} is outside every layer: put it in one of {LAYERS}"
        for imp in imports_of(f):
            theirs = layer_of(imp)
            if theirs is not None and theirs > mine:
                bad.append(f"{mod} imports {imp} (layer {LAYERS[mine] if mine < len(LAYERS) else 'cli'} "
                           f"-> {LAYERS[theirs] if theirs < len(LAYERS) else 'cli'})")
    return sorted(set(bad))


def test_every_module_imports_only_its_layer_or_lower():
    assert violations() == []


def test_the_checker_sees_an_upward_import(tmp_path):
    assert layer_of("creval.measures.stats") < layer_of("creval.studies.divergent.run")
    assert layer_of("creval.core.io") == 0 and layer_of("creval.cli") == len(LAYERS)
    f = tmp_path / "m.py"
    f.write_text("from creval.studies.divergent import run\nimport creval.core.io\n")
    assert imports_of(f) == ["creval.studies.divergent", "creval.studies.divergent.run", "creval.core.io"]


def private_uses(path: Path) -> list[str]:
    """Names starting with one underscore that ``path`` takes from a creval module, by ``from m import _x`` or
    as ``alias._x`` where ``alias`` is an imported creval module or name (dunders are public)."""
    tree = ast.parse(path.read_text())
    aliases, out = {}, []
    private = lambda name: name.startswith("_") and not name.startswith("__")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("creval.")})
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("creval"):
            for a in node.names:
                if private(a.name):
                    out.append(f"{node.module}.{a.name}")
                else:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases:
            out.append(f"{aliases[node.value.id]}.{node.attr}")
    return out


def private_violations() -> list[str]:
    bad = []
    for f, mod in modules():
        for use in private_uses(f):
            owner = use.rsplit(".", 1)[0]
            if owner != mod and not owner.startswith(mod + "."):
                bad.append(f"{mod} uses {use}")
    return sorted(set(bad))


def test_no_module_uses_another_modules_private_name():
    assert private_violations() == []


def test_the_checker_sees_a_private_name(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from creval.datasets import macgyver\nfrom creval.judges.base import _hidden, render\n"
                 "macgyver._benchmark(1)\nmacgyver.load_pairs()\nrender.__doc__\n")
    assert sorted(private_uses(f)) == ["creval.datasets.macgyver._benchmark", "creval.judges.base._hidden"]


REPORT_MODULES = ("report", "reading", "readers", "figures", "human")   # records in, tables and sentences out


def test_reports_import_no_judge_model_or_sandbox():
    reaching = [f"{mod} imports {imp}" for f, mod in modules() if mod.startswith("creval.studies.")
                and mod.rsplit(".", 1)[-1] in REPORT_MODULES for imp in imports_of(f)
                if imp.split(".")[:2] in (["creval", "judges"], ["creval", "models"], ["creval", "sandbox"])]
    assert len([m for _, m in modules() if m.rsplit(".", 1)[-1] in REPORT_MODULES]) >= 9
    assert not reaching, f"reports read records and pure maths only (move what they need to measures/): {reaching}"


def test_a_study_imports_only_the_studies_it_reads_and_no_report():
    """Issue 56: a study's package imports another study only when its ``STUDY.reads`` names it (its config or
    run, to find the records), and never another study's presentation (report, reading, figures)."""
    from creval.studies.registry import STUDIES
    bad = []
    for f, mod in modules():
        parts = mod.split(".")
        if len(parts) < 3 or parts[1] != "studies" or parts[2] not in STUDIES:
            continue
        me = STUDIES[parts[2]]
        for imp in imports_of(f):
            q = imp.split(".")
            if len(q) >= 3 and q[:2] == ["creval", "studies"] and q[2] in STUDIES and q[2] != parts[2]:
                if q[2] not in me.reads or (len(q) > 3 and q[3] in ("report", "reading", "figures")):
                    bad.append(f"{mod} imports {imp}")
    assert sorted(set(bad)) == []
