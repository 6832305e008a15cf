"""Extraction: the repo's textual cut (bugs included) and the strict AST cleaning."""
from creval.measures.neocoder_extract import fenced_code, repo_extract, salvaged, strict_program


def test_fenced_code():
    e = fenced_code("Here:\n```python\nprint(1)\n```\nbye")
    assert e.code == "print(1)\n" and e.status == "ok"
    assert fenced_code("```python\nprint(1)\nprint(").status == "truncated"
    assert fenced_code("print(1)").status == "no_code"
    assert fenced_code("```\nx=1\n```\n```python\ny=2\n```").code == "y=2\n"


def test_repo_extract_cuts_at_blank_line_and_rewrites_stdin():
    code = "import sys\n\ndef solve():\n    data = sys.stdin.read()\n    x = 1\n\n    print(x)\n"
    out = repo_extract(code)
    assert "input()" in out and "sys.stdin.read()" not in out
    assert "print(x)" not in out                     # the blank line ended the function
    assert out.startswith("import sys")


def test_repo_extract_from_without_import_is_not_parsable():
    assert repo_extract("from math import gcd\ndef solve():\n    pass\n") is not None   # 'import' after 'from'
    assert repo_extract("# from here\ndef solve():\n    pass\n") is None
    assert repo_extract("x = 1") is None


def test_strict_program_drops_scaffolding_and_calls_solve():
    code = ("import io, sys\nMOD = 7\ndef helper(a):\n    return a % MOD\n"
            "def solve():\n    print(helper(int(input())))\n"
            "sys.stdin = io.StringIO('3')\ndef test_solve():\n    solve()\ntest_solve()\nif __name__ == '__main__':\n"
            "    solve()\n")
    prog = strict_program(code)
    assert "test_solve" not in prog and "sys.stdin =" not in prog and "__main__" not in prog
    assert prog.rstrip().endswith("solve()") and prog.count("solve()") == 2   # definition line + one call
    assert "MOD = 7" in prog


def test_strict_program_keeps_a_plain_script_and_salvages_truncation():
    assert strict_program("print(input())") == "print(input())"
    cut = "def solve():\n    print(1)\n\n# tests\ntest_input = '''3\n1 2"
    assert strict_program(cut, salvage=False) is None
    assert strict_program(cut) is not None and salvaged(cut)
    assert strict_program("def solve(:\n") is None


def test_a_test_named_helper_the_solution_calls_is_kept():
    from creval.measures.neocoder_extract import strict_program
    code = ("def test_case(a, b):\n    return a + b\n\ndef testing():\n    return 0\n\ndef solve():\n"
            "    a, b = map(int, input().split())\n    print(test_case(a, b))\n\ndef test():\n    solve()\n\ntest()\n")
    prog = strict_program(code)
    assert "def test_case" in prog and "def test()" not in prog and "def testing" not in prog
    assert prog.rstrip().endswith("solve()") and "\ntest()" not in prog
