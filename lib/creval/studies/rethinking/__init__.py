"""The Rethinking the metrics study (chapter 06)."""
