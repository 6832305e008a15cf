"""A papermill engine that shows a chapter's parameters once: ``papermill --engine creval`` (and the book)
fold the injected values into the chapter's own ``parameters`` cell before the kernel starts, instead of
adding a second cell below a cell that still shows the old values. The kernel logs only errors (its
warning about local TCP transport, printed on every run, is noise here).

The book passes two explicit settings through papermill to this engine: ``ledger_file`` (the kernel
streams every model call it records to that file: its first line of code, run before the chapter's,
calls :meth:`creval.core.ledger.Ledger.stream_to`) and ``kernel_env`` (variables added to the kernel's
own environment, e.g. ``TQDM_DISABLE``; this process's environment is left as it is).
"""
from __future__ import annotations

import os
from pathlib import Path

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args

from creval.book.execute import fold_parameters

QUIET_KERNEL = "--IPKernelApp.log_level=ERROR"


def kernel_arguments(ledger_file: str | Path | None = None) -> list[str]:
    """The kernel's command-line options: a quiet log and, given ``ledger_file``, a first line of code (run
    before the notebook's cells, leaving no name behind) that streams the kernel's model calls there."""
    args = [QUIET_KERNEL]
    if ledger_file is not None:
        code = f"__import__('creval.core.ledger', fromlist=['LEDGER']).LEDGER.stream_to({str(ledger_file)!r})"
        args.append(f"--IPKernelApp.exec_lines={code}")
    return args


class CrevalEngine(NBClientEngine):
    """nbclient execution, with the injected-parameters cell folded into the ``parameters`` cell, a quiet
    kernel log, and the book's explicit ``ledger_file`` and ``kernel_env`` settings."""

    @classmethod
    def execute_notebook(cls, nb, kernel_name, ledger_file=None, **kwargs):
        fold_parameters(nb)
        kwargs.setdefault("extra_arguments", kernel_arguments(ledger_file))
        return super().execute_notebook(nb, kernel_name, **kwargs)

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                 start_timeout=60, execution_timeout=None, kernel_env=None, **kwargs):
        """:class:`NBClientEngine`'s execution, the kernel started with this process's environment plus
        ``kernel_env``."""
        timeout = execution_timeout or kwargs.get("timeout")
        kwargs = remove_args(["input_path", "timeout", "startup_timeout"], **kwargs)
        final = merge_kwargs(kwargs, timeout=timeout, startup_timeout=start_timeout, kernel_name=kernel_name,
                             log=logger, log_output=log_output, stdout_file=stdout_file, stderr_file=stderr_file)
        client = PapermillNotebookClient(nb_man, **final)
        return client.execute(env={**os.environ, **kernel_env}) if kernel_env else client.execute()


def register_engine() -> None:
    """Make papermill's ``creval`` engine available in this process without the package's
    ``papermill.engine`` entry point (which the book and ``papermill --engine creval`` use)."""
    papermill_engines.register("creval", CrevalEngine)
