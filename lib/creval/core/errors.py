"""User-facing errors: one clear message that names the problem and the fix (no traceback in the CLI)."""


class CrevalError(Exception):
    """A mistake the user can fix. ``str(err)`` is the whole message shown to them."""

    def __init__(self, problem: str, fix: str | None = None):
        self.problem, self.fix = problem, fix
        super().__init__(problem if not fix else f"{problem}\n  fix: {fix}")


class ThinRecords(Exception):
    """Records too thin for one report: a table the run did not write (or wrote empty), a column or manifest
    field its rows lack. Report functions raise it where the records legitimately hold too little; the report
    guard (:func:`creval.studies.tables.guarded`) turns it, and nothing else, into a result that says "not
    computed" and why. ``str(err)`` is that reason."""
