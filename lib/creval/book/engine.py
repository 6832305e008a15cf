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

import ast
import os
import re
from pathlib import Path

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args

QUIET_KERNEL = "--IPKernelApp.log_level=ERROR"
_ASSIGN = re.compile(r"^(\w+)(\s*=\s*)(.*?)(\s*#.*)?$")


def merge_injected(parameters_src: str, injected_src: str) -> str:
    """The ``parameters`` cell with each value papermill injected written in place (comments kept)."""
    values = {}
    for node in ast.parse(injected_src).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.get_source_segment(injected_src, node.value)
    out = []
    for line in parameters_src.splitlines():
        m = _ASSIGN.match(line)
        if m and m.group(1) in values:
            value, comment = values.pop(m.group(1)), m.group(4) or ""
            line = f"{m.group(1)}{m.group(2)}{value}"
            line = (line.ljust(len(m.group(1) + m.group(2) + m.group(3))) + comment) if comment else line
        out.append(line)
    out += [f"{k} = {v}" for k, v in values.items()]
    return "\n".join(out)


def cell_source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def fold_parameters(nb) -> bool:
    """Fold papermill's injected-parameters cell into the chapter's own parameters cell (in place), so the
    notebook shows each parameter once, with the value it runs with and its comment. True if it folded."""
    cells = nb["cells"]
    tags = [c.get("metadata", {}).get("tags", []) for c in cells]
    own = next((i for i, t in enumerate(tags) if "parameters" in t), None)
    inj = next((i for i, t in enumerate(tags) if "injected-parameters" in t), None)
    if own is None or inj is None:
        return False
    cells[own]["source"] = merge_injected(cell_source(cells[own]), cell_source(cells[inj]))
    cells[own]["metadata"]["tags"] = [*tags[own], "injected-parameters-merged"]
    del cells[inj]
    return True


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
    """Make papermill's ``creval`` engine available in this process (the package also declares it as a
    ``papermill.engine`` entry point, for ``papermill --engine creval`` on the command line)."""
    papermill_engines.register("creval", CrevalEngine)
