"""The ``creval`` command line. Each sub-command lives in ``creval/commands/<name>.py`` and exposes
``register(subparsers)``; the parser sets ``func``. User mistakes end in one clear message, exit 2.

``--ledger-file FILE`` (or the variable ``CREVAL_LEDGER_FILE``, read here and nowhere else) appends every
model, judge, embedding and sandbox call the command records to FILE, one JSON object per line."""
from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import sqlite3
import sys

from creval import __version__, commands
from creval.core.deferral import Deferred
from creval.core.errors import CrevalError
from creval.core.ledger import LEDGER

ENV_ERRNOS = {errno.ENOSPC: "free some disk space", errno.EROFS: "set CREVAL_HOME to a writable folder",
              errno.EACCES: "make the path writable or set CREVAL_HOME to a writable folder",
              errno.EEXIST: "give a path that does not exist yet (or a folder)",
              errno.ENOTDIR: "give a folder path, not a file", errno.EDQUOT: "free some disk space"}


DEVELOPER_COMMANDS = {"sync-params"}     # rewrite repository files; for contributors


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="creval", description="Measure the creativity of language models.")
    p.add_argument("--version", action="version", version=f"creval {__version__}")
    p.add_argument("--ledger-file", default=os.environ.get("CREVAL_LEDGER_FILE") or None, metavar="FILE",
                   help="append every call the command makes or serves from cache to FILE (JSON lines; "
                        "default: $CREVAL_LEDGER_FILE, else none)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(m.name for m in pkgutil.iter_modules(commands.__path__)):
        importlib.import_module(f"creval.commands.{mod}").register(sub)
    # developer tools work when named but stay out of the user's command list
    sub._choices_actions = [a for a in sub._choices_actions if a.dest not in DEVELOPER_COMMANDS]
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    ledger_file = getattr(args, "ledger_file", None)
    if ledger_file:
        LEDGER.stream_to(ledger_file)
    try:
        return args.func(args) or 0
    except CrevalError as e:
        print(f"creval: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        if e.errno not in ENV_ERRNOS:
            raise
        where = f" ({e.filename})" if e.filename else ""
        print(f"creval: error: {e.strerror or e}{where}\n  fix: {ENV_ERRNOS[e.errno]}; "
              "finished calls are cached, rerun the same command to resume", file=sys.stderr)
        return 2
    except sqlite3.OperationalError as e:
        if "disk is full" not in str(e) and "readonly" not in str(e):
            raise
        print(f"creval: error: the call cache could not be written ({e})\n  fix: free disk space or make the data "
              "home writable (CREVAL_HOME); finished calls are cached, rerun to resume", file=sys.stderr)
        return 2
    except Deferred as e:           # a call written to a batch file outside the unit runner: one line
        print(f"creval: the run waits for a batch answer ({e or 'a call was written to the batch file'}); answer "
              "the file and rerun with --batch-in", file=sys.stderr)
        return 0
    except KeyboardInterrupt:
        print("creval: interrupted; finished calls are cached, rerun the same command to resume", file=sys.stderr)
        return 130
    finally:
        if ledger_file:
            LEDGER.stream_to(None)


if __name__ == "__main__":
    sys.exit(main())
