"""Comparing models (chapter 09): every model on every study's headline measure, paired differences,
homogeneity of their ideas, and what each cost."""
