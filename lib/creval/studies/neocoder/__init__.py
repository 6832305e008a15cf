"""The Code creativity (NeoCoder) study (chapter 05)."""
