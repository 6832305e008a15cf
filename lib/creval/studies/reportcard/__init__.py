"""The report card (chapter 08): which creativity measures and judges hold up against people."""
