"""A papermill engine that shows a chapter's parameters once: ``papermill --engine creval`` (and the book)
fold the injected values into the chapter's own ``parameters`` cell before the kernel starts, instead of
adding a second cell below a cell that still shows the old values. The kernel logs only errors (its
warning about local TCP transport, printed on every run, is noise here)."""
from __future__ import annotations

from papermill.engines import NBClientEngine

from creval.book.execute import fold_parameters


class CrevalEngine(NBClientEngine):
    """nbclient execution, with the injected-parameters cell folded into the ``parameters`` cell and a
    quiet kernel log."""

    @classmethod
    def execute_notebook(cls, nb, kernel_name, **kwargs):
        fold_parameters(nb)
        kwargs.setdefault("extra_arguments", ["--IPKernelApp.log_level=ERROR"])
        return super().execute_notebook(nb, kernel_name, **kwargs)
