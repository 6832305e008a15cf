"""``creval sync-params``: rewrite params/default.yaml and the chapters' parameters from the studies' Configs."""
from __future__ import annotations

from creval.book.sync import sync


def register(subparsers) -> None:
    p = subparsers.add_parser("sync-params",
                              help="rewrite params/default.yaml and chapter parameter cells from the Configs",
                              description="Developer tool (hidden from `creval --help`): rewrites the repository's "
                                          "params/default.yaml and each chapter's parameters cell from the studies' "
                                          "Configs. Run it after changing a Config.")
    p.add_argument("--check", action="store_true", help="only list what is out of date (exit 1 if anything is)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    changed = sync(write=not args.check)
    for c in changed:
        print(("out of date: " if args.check else "rewrote: ") + c)
    return 1 if (args.check and changed) else 0
