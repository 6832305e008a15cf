"""Sub-commands of the ``creval`` CLI, one module each, discovered automatically."""
