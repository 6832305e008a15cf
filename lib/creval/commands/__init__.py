"""Sub-commands of the ``creval`` CLI, one module each, discovered automatically.

:func:`retire` keeps an old sub-command's name only to say what replaced it (as an old parameter key does);
:func:`renamed` keeps an old flag working under its new name, saying the new one. The naming rule: a flag is the
parameter it sets (``--judge-model`` sets ``judge_model``, the LLM behind every judge)."""
from __future__ import annotations

import argparse
import sys

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


class _Renamed(argparse.Action):
    """An old flag: sets the new flag's value and says the new name on stderr."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"creval: {option_string} is now {self.new} (the old name still works)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def renamed(parser, old: str, new: str) -> None:
    """Keep ``old`` as a hidden alias of the flag ``new`` (already added to ``parser``)."""
    flag = next(a for a in parser._actions if new in a.option_strings)
    parser.add_argument(old, dest=flag.dest, default=flag.default, action=_Renamed, new=new, help=argparse.SUPPRESS)
