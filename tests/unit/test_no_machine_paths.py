"""No absolute path of a machine in the code, the docs, the tests or the chapters: a reader's checkout has no
build machine's folders, so a path such as the build's shared folder or its home must never be cited (cite the
project's own docs, or a path relative to the checkout or the data home). Temporary folders (``/tmp``) are not
machine paths: a test may write there."""
import re
from pathlib import Path

from creval.core.paths import REPO

SCANNED = ("lib", "tests", "docs", "examples", "benchmarks", "chapters", "README.md", "index.qmd", "Makefile")
SUFFIXES = {".py", ".md", ".qmd", ".ipynb", ".yml", ".yaml", ".txt", ".toml", ".cfg", ""}
# the roots under which a build machine keeps its checkouts and homes, and this machine's own
ROOTS = sorted({"work", "root", "home", "Users", *(p.parts[1] for p in (REPO, Path.home()) if len(p.parts) > 1)}
               - {"tmp", "var", "usr", "opt", "etc", "dev", "proc", "srv", "mnt"})
# an absolute path: a root folder at the start of a word (not after a letter, dot, slash or tilde: ``a/work/b``,
# ``~/work`` and ``http://x/home/`` are relative or remote) followed by a folder or file name
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:" + "|".join(map(re.escape, ROOTS)) + r")/[\w.-]")


def machine_paths(text: str) -> list[str]:
    """The absolute machine paths in ``text`` (each with what follows it on its line)."""
    return [text[m.start():].split("\n")[0][:80] for m in MACHINE_PATH.finditer(text)]


def scanned_files() -> list[Path]:
    out = []
    for name in SCANNED:
        p = REPO / name
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
        out += [f for f in files if f.suffix in SUFFIXES and "__pycache__" not in f.parts]
    return out


def test_the_pattern_finds_machine_paths_and_leaves_the_rest():
    assert machine_paths("see " + "/wo" + "rk/shared/MODELS.md for numbers")
    assert machine_paths("shared:" + "/ro" + "ot/data/x") and machine_paths('"' + "/ho" + 'me/me/creval"')
    assert not machine_paths("written under /tmp/run1 and /var/cache; a/work/b, ~/work/x, https://x.org/home/a")
    assert not machine_paths(r"re.search(r'/(work|root|home|tmp)/', out)")


def test_no_file_cites_an_absolute_machine_path():
    files = scanned_files()
    assert len(files) > 100
    found = {str(f.relative_to(REPO)): hits for f in files
             if (hits := machine_paths(f.read_text(errors="replace")))}
    assert not found, f"absolute machine paths (cite the project's docs or a relative path instead): {found}"
