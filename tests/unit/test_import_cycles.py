"""No import circles in lib/creval, and every creval import at module level (docs/CONTRIBUTING.md).

The graph's nodes are the package's modules; an edge ``a -> b`` is an ``import`` or ``from ... import`` that runs
when ``a`` is imported (its module body, ``if``/``try`` blocks and class bodies included, function bodies not).
``from p import x`` names ``p.x`` when that is a module, else ``p``. A circle means the order of imports decides
whether a name exists yet; a function-local import of a creval module hides the dependency from a reader.
"""
import ast
from pathlib import Path

from creval.core.paths import REPO

PKG = REPO / "lib" / "creval"


def module_files(pkg: Path = PKG) -> dict[str, Path]:
    """{``creval.a.b``: its file} for every module of the package (a package's ``__init__`` is the package)."""
    out = {}
    for f in sorted(pkg.rglob("*.py")):
        parts = [p for p in f.relative_to(pkg).with_suffix("").parts if p != "__init__"]
        out[".".join([pkg.name, *parts])] = f
    return out


def type_checking_only(node: ast.AST) -> bool:
    """An ``if TYPE_CHECKING:`` block: read by type checkers, never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def import_nodes(tree: ast.AST, local: bool) -> list[ast.stmt]:
    """The import statements run at import time (``local=False``) or inside functions (``local=True``);
    those under ``if TYPE_CHECKING:`` are never run."""
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if type_checking_only(child):
                continue
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside == local:
                out.append(child)
            visit(child, inside)
    visit(tree, False)
    return out


def targets(node: ast.stmt, known: set[str], root: str = "creval") -> list[str]:
    """The package modules one import statement loads (by name; outside modules dropped)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif node.module:
        names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                 for a in node.names]
    else:
        names = []
    return [n for n in names if n.split(".")[0] == root]


def graph(files: dict[str, Path]) -> dict[str, set[str]]:
    known = set(files)
    return {m: {t for n in import_nodes(ast.parse(f.read_text()), local=False) for t in targets(n, known)
                if t in known and t != m}
            for m, f in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected component of more than one module (Tarjan), sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return sorted(out)


def scopes(tree: ast.AST) -> dict[ast.AST, str]:
    """Every node's enclosing class and function names (``Class.method``, ``f``; ``""`` at module level)."""
    out: dict[ast.AST, str] = {}

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            out[child] = scope
            visit(child, inner)
    visit(tree, "")
    return out


def local_imports(files: dict[str, Path]) -> list[str]:
    """``module.function:line imported`` for every creval import inside a function."""
    known, out = set(files) | {"creval"}, []
    for m, f in files.items():
        tree = ast.parse(f.read_text())
        where = scopes(tree)
        out += [f"{m}.{where[n]}:{n.lineno} {t}" for n in import_nodes(tree, local=True) for t in targets(n, known)]
    return out


def test_the_package_has_no_import_circle():
    assert cycles(graph(module_files())) == []


def test_no_function_local_import_of_a_creval_module():
    assert local_imports(module_files()) == []


def test_the_checker_sees_a_circle_and_a_local_import(tmp_path):
    pkg = tmp_path / "creval"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from creval.sub import b\n")
    (pkg / "sub" / "a.py").write_text("import os\nfrom creval.sub.b import f\n\nclass K:\n"
                                      "    from creval import sub\n\n    def m(self):\n        import creval.c\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from creval.sub import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nfrom creval.sub import a, b\n\n"
                              "if TYPE_CHECKING:\n    from creval import c\n")
    files = module_files(pkg)
    assert set(files) == {"creval", "creval.sub", "creval.sub.a", "creval.sub.b", "creval.c"}
    edges = graph(files)
    assert edges == {"creval": set(), "creval.sub": {"creval.sub.b"}, "creval.sub.a": {"creval.sub.b", "creval.sub"},
                     "creval.sub.b": set(), "creval.c": {"creval.sub.a", "creval.sub.b"}}
    assert cycles(edges) == []                                         # b's import of a runs only when f runs
    assert local_imports(files) == ["creval.sub.a.K.m:8 creval.c", "creval.sub.b.f:2 creval.sub.a"]
    (pkg / "sub" / "b.py").write_text("from creval.sub import a\n")
    assert cycles(graph(module_files(pkg))) == [["creval.sub", "creval.sub.a", "creval.sub.b"]]
