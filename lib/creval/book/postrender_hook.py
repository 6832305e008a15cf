"""The script ``_quarto.yml`` names as ``project: post-render``: Quarto runs it with the first ``python3`` it
finds (or ``QUARTO_PYTHON``), in the project folder, after it has written the site.

Standard library only, like the pre-render hook (:mod:`creval.book.prerender_hook`, whose hand-over to a Python
with creval it shares): it replaces itself by ``python -m creval.book.postrender``, which writes the item
browsers and downloads into the site. It never fails the render: without such a Python it says so and exits 0.
"""
from __future__ import annotations

import sys
from pathlib import Path

try:                            # imported as part of creval (tests), or run by Quarto as a script
    from creval.book.prerender_hook import hand_over
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from prerender_hook import hand_over

MISSING = ("creval post-render: no Python with creval here (nor ./.venv), so the item browsers and downloads "
           "were not written; the book itself is complete")


def main() -> int:
    return hand_over("creval.book.postrender", MISSING, 0)      # never fails the render


if __name__ == "__main__":
    sys.exit(main())
