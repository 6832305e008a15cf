"""Metrics that validate semantic entropy (paper section 6.1, appendices C.3-C.7, H).

- :mod:`creval.metrics.diversity`: cosine similarity, self-BLEU, distinct-n, per-item originality, SemDis.
- :mod:`creval.metrics.novelty`: pairwise LLM novelty judge and O(n log n) ranking.
- :mod:`creval.metrics.stats`: Spearman/Kendall with p-values, bootstrap CIs, AUC, kappa, AUARC, binning.
- :mod:`creval.metrics.human`: offline human ground truth (AUT ratings, MacGyver labels and crowd solutions).
- :mod:`creval.metrics.report`: the tables and figures of chapter 04.
"""
