"""No big rooms (issue 27): no module of lib/ over 400 lines, no function over 80 lines unless its docstring
gives the reason in a line starting with "Long:"."""
import ast

from creval.core.paths import REPO

MODULE_LINES, FUNCTION_LINES = 400, 80
LIB = REPO / "lib" / "creval"


def test_no_module_over_400_lines():
    big = {str(f.relative_to(LIB)): n for f in LIB.rglob("*.py")
           if (n := len(f.read_text().splitlines())) > MODULE_LINES}
    assert not big, big


def long_functions(source: str) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function over the limit whose docstring gives no ``Long:`` reason."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            doc = ast.get_docstring(node) or ""
            if n > FUNCTION_LINES and not any(line.strip().startswith("Long:") for line in doc.splitlines()):
                out.append((node.name, n))
    return out


def test_the_function_check_sees_a_long_function_and_its_reason():
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", FUNCTION_LINES + 1)]
    assert long_functions(f'def f():\n    """Long: one table."""\n{body}\n') == []


def test_no_function_over_80_lines_without_a_reason():
    found = {f"{f.relative_to(LIB)}:{name}": n for f in LIB.rglob("*.py") for name, n in long_functions(f.read_text())}
    assert not found, found
