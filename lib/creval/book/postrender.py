"""A bare ``quarto render`` also writes the item browsers and downloads: Quarto's post-render step
(``_quarto.yml``, ``project: post-render``).

After Quarto has written the site, ``book/postrender_hook.py`` runs this module (``python -m
creval.book.postrender``), which publishes every book study whose run is finished (:func:`creval.book.publish.
publish`: ``browse/<study>.html`` and ``downloads/<study>/``) into the folder Quarto wrote
(``QUARTO_PROJECT_OUTPUT_DIR``, else ``_book``), reading the records of ``params/default.yaml``'s runs: those
the pre-render step has just run. Nothing is run here, and nothing here fails the book: whatever goes wrong is
one line on stderr and the exit status is 0.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from creval.book.params import effective_params, load_params
from creval.book.publish import publish
from creval.core import paths

DEFAULT_PARAMS = "params/default.yaml"
DEFAULT_SITE = "_book"       # _quarto.yml's output-dir


def site_of(env: Mapping[str, str], project: Path) -> Path:
    """The folder Quarto wrote the site to: ``QUARTO_PROJECT_OUTPUT_DIR`` (relative to the ``project`` folder
    Quarto runs its scripts in, unless absolute), else ``project/_book``."""
    return project / env.get("QUARTO_PROJECT_OUTPUT_DIR", DEFAULT_SITE)


def postrender(site: Path, params_file: Path, overrides: list[str] = ()) -> list[dict]:
    """Publish every finished book study into ``site`` (one row per study, as :func:`publish` gives it); any
    error is one line on stderr and no row."""
    try:
        params = effective_params(load_params(params_file, overrides))
        rows = publish(site, params)
    except Exception as e:      # noqa: BLE001 - the browser is an extra: the book must not fail for it
        print(f"creval post-render: item browsers not written: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
        return []
    done = [r["study"] for r in rows if r.get("written")]
    print(f"creval post-render: item browsers and downloads of {len(done)} studies in {site}"
          + (f" ({', '.join(done)})" if done else " (no finished run)"), file=sys.stderr)
    return rows


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m creval.book.postrender", description=__doc__.split("\n")[0])
    p.add_argument("--root", type=Path, default=paths.REPO, help="the checkout Quarto rendered")
    p.add_argument("--params", default=DEFAULT_PARAMS, help="parameter file (default: %(default)s)")
    p.add_argument("-p", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override one parameter")
    p.add_argument("--site", type=Path, default=None, help="the rendered site (default: Quarto's output folder)")
    args = p.parse_args(argv)
    params = Path(args.params) if Path(args.params).is_absolute() else args.root / args.params
    postrender(args.site or site_of(os.environ if env is None else env, Path.cwd()), params, args.overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
