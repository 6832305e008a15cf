"""Getting a program out of a model's reply (NeoCoder).

- :func:`fenced_code`: the first fenced block (```python, ```py or a bare fence); an unterminated block is
  returned with ``truncated=True`` (a reply cut by the token limit).
- :func:`strict_program`: the AST-cleaned whole program the strict judge runs: imports, function and class
  definitions and top-level assignments are kept; test scaffolding (``test_*`` functions, top-level calls,
  loops, ``if __name__ == "__main__"`` blocks) is dropped; a single ``solve()`` call is appended when the code
  defines ``solve`` (the paper's prompt forbids calling it). Code with no ``solve`` runs unchanged.
  ``None`` when the code is not valid Python.
- :func:`repo_extract`: the NeoCoder repo's evaluation-time extraction, reproduced to score Table 3 the way
  the paper did (documented as buggy: stdin reads rewritten to ``input()``, text cut at the first line after
  ``solve(`` that does not start with a space, a tab or ``solve`` -- so a blank line ends the function).
"""
from __future__ import annotations

import ast
import re
import threading
import warnings
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*(python3?|py)?[ \t]*\n", re.I)


@dataclass(frozen=True)
class Extracted:
    code: str
    status: str            # "ok" | "truncated" (no closing fence) | "no_code" (no fence: whole reply kept)


def fenced_code(reply: str) -> Extracted:
    """The first fenced code block of ``reply`` (python/py fences preferred over bare ones)."""
    matches = list(_FENCE.finditer(reply))
    if not matches:
        return Extracted(reply.strip(), "no_code")
    pick = next((m for m in matches if m.group(1)), matches[0])
    start = pick.end()
    end = reply.find("```", start)
    if end == -1:
        return Extracted(reply[start:].rstrip(), "truncated")
    return Extracted(reply[start:end].rstrip() + "\n", "ok")


_STDIN_REWRITES = ("sys.stdin.read()", "stdin.read()", "sys.stdin.readlines()", "stdin.readlines()",
                   "sys.stdin.readline()", "stdin.readline()")


def repo_extract(code: str) -> str | None:
    """The repo's ``parse_code`` semantics (for the repo-compatible judge only)."""
    for s in _STDIN_REWRITES:
        code = code.replace(s, "input()")
    d = code.find("def")
    if d == -1:
        return None
    i, f = code.find("import", 0, d), code.find("from", 0, d)
    if i == -1 and f == -1:
        code = code[d:]
    elif f != -1 and i > f:
        code = code[f:]
    elif i != -1 and f == -1:
        code = code[i:]
    elif i != -1 and f > i:
        code = code[i:]
    else:                       # a "from" and no "import" before the first def
        return None
    s = code.find("solve(")     # -1 when absent: the repo then splits off the last character (kept as is)
    head, tail = code[:s], code[s:]
    kept = []
    for line in tail.split("\n"):
        if line.startswith((" ", "\t", "solve")):
            kept.append(line + "\n")
        else:
            break
    return head + "".join(kept)


_KEEP_CALLS = {("sys", "setrecursionlimit"), ("threading", "stack_size"), ("sys", "set_int_max_str_digits")}


def _kept_call(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    fn = node.value.func
    return isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and (fn.value.id, fn.attr) in _KEEP_CALLS


PARSE_LOCK = threading.Lock()
"""One ``ast.parse`` at a time: CPython 3.11 builds the Python AST with an interpreter-wide recursion counter
(gh-106905: "AST constructor recursion depth mismatch" when units parse in threads at once), and
``warnings.catch_warnings`` swaps process-wide filters."""


def parse(code: str) -> ast.Module:
    """``ast.parse`` without the SyntaxWarnings that odd literals in foreign code print (thread-safe)."""
    with PARSE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def _parse(code: str, salvage: bool) -> tuple[ast.Module | None, bool]:
    try:
        return parse(code), False
    except (SyntaxError, ValueError):
        if not salvage:
            return None, False
    lines = code.split("\n")
    cuts = [i for i, ln in enumerate(lines) if i and ln[:1] not in ("", " ", "\t", "#", ")", "]", "}")]
    for i in reversed(cuts):
        try:
            return parse("\n".join(lines[:i])), True
        except (SyntaxError, ValueError):
            continue
    return None, False


def _simple_target(t: ast.expr) -> bool:
    return isinstance(t, ast.Name) or (isinstance(t, (ast.Tuple, ast.List)) and all(_simple_target(e) for e in t.elts))


def strict_program(code: str, entry: str = "solve", salvage: bool = True) -> str | None:
    """The whole program the strict judge runs (see the module doc); None when ``code`` does not parse.

    ``salvage``: a reply cut by the token limit usually breaks only the test scaffolding after the solution;
    then the longest prefix ending before a top-level statement that parses is used, if it still defines
    ``entry`` (see :func:`salvaged`)."""
    tree, cut = _parse(code, salvage)
    if tree is None:
        return None
    defines = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry for n in tree.body)
    if not defines:
        return None if cut else code
    body = []
    for n in tree.body:
        if isinstance(n, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Try)):
            body.append(n)
        elif isinstance(n, ast.Assign) and all(_simple_target(t) for t in n.targets):
            body.append(n)
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and isinstance(n.target, ast.Name):
            body.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body.append(n)          # a test-named one stays only if the solution calls it (below)
        elif _kept_call(n):
            body.append(n)
        # else: top-level calls, loops, main guards, asserts: test scaffolding, dropped
    body = _without_unused_tests(body)
    body.append(ast.Expr(ast.Call(ast.Name(entry, ast.Load()), [], [])))
    return ast.unparse(ast.fix_missing_locations(ast.Module(body, [])))


def _without_unused_tests(body: list) -> list:
    """Drop the top-level functions named ``test*`` that no kept statement refers to (test scaffolding), but
    keep a helper the solution calls, e.g. 1850A's ``test_case(a, b, c)`` called inside ``solve``."""
    def is_test(n):
        return isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")

    keep = [n for n in body if not is_test(n)]
    tests = {n.name: n for n in body if is_test(n)}
    used: set[str] = set()
    todo = list(keep)
    while todo:
        node = todo.pop()
        for x in ast.walk(node):
            if isinstance(x, ast.Name) and x.id in tests and x.id not in used:
                used.add(x.id)
                todo.append(tests[x.id])
    return [n for n in body if not is_test(n) or n.name in used]


def salvaged(code: str) -> bool:
    """True when ``code`` does not parse whole but :func:`strict_program` recovers a prefix of it."""
    try:
        parse(code)
        return False
    except (SyntaxError, ValueError):
        return strict_program(code) is not None
