"""Sub-commands of the ``creval`` CLI, one module each, discovered automatically.

:func:`retire` keeps an old sub-command's name only to say what replaced it (as an old parameter key does)."""
from __future__ import annotations

from creval.core.errors import CrevalError


def retired_error(old: str, successor: str) -> CrevalError:
    """The one-line error an old command gets: it names the command that replaced it."""
    return CrevalError(f"`creval {old}` was retired: use {successor}")


def retire(subparsers, old: str, successor: str) -> None:
    """Add the retired command ``creval <old>`` (its last word) to ``subparsers``: hidden from the help, any
    arguments accepted, and running it is :func:`retired_error` naming ``successor``."""
    p = subparsers.add_parser(old.split()[-1], add_help=False, prefix_chars="\0")     # every argument is a plain word
    p.add_argument("ignored", nargs="*")

    def fail(args) -> int:
        raise retired_error(old, successor)
    p.set_defaults(func=fail)
