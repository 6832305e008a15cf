"""The script ``_quarto.yml`` names as ``project: pre-render``: Quarto runs it with the first ``python3`` it finds
(or ``QUARTO_PYTHON``), in the project folder, before it reads any chapter.

It uses only the standard library, so it starts under any Python: it finds one that has creval installed
(the one running it, else the checkout's ``.venv``) and replaces itself by ``python -m creval.book.prerender``
(same process, so Quarto stays its parent), which executes the chapters (:mod:`creval.book.prerender`).
Without such a Python it stops the render with one sentence naming what to do.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

MISSING = ("creval pre-render: this Python has no creval and ./.venv has none either: run `make setup`, then "
           "`quarto render` again (or `make book` for the offline book)")


def creval_python(here: Path, current: str = sys.executable) -> str | None:
    """A Python that can import creval: ``current`` when it can, else ``here/.venv``'s, else ``None``."""
    if importlib.util.find_spec("creval") is not None:
        return current
    for name in ("bin/python", "Scripts/python.exe"):
        candidate = here / ".venv" / name
        if candidate.is_file():
            return str(candidate)
    return None


def hand_over(module: str, missing: str, code: int) -> int:
    """Replace this process by ``python -m module`` (same arguments) under a Python with creval; without one,
    print ``missing`` and return ``code``."""
    python = creval_python(Path.cwd())
    if python is None:
        print(missing, file=sys.stderr)
        return code
    os.execv(python, [python, "-m", module, *sys.argv[1:]])
    return 0                # not reached: execv replaces this process


def main() -> int:
    return hand_over("creval.book.prerender", MISSING, 1)


if __name__ == "__main__":
    sys.exit(main())
