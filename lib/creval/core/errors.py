"""User-facing errors: one clear message that names the problem and the fix (no traceback in the CLI)."""


class CrevalError(Exception):
    """A mistake the user can fix. ``str(err)`` is the whole message shown to them."""

    def __init__(self, problem: str, fix: str | None = None):
        self.problem, self.fix = problem, fix
        super().__init__(problem if not fix else f"{problem}\n  fix: {fix}")
