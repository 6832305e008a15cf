"""The one home of creval's statistics, a module per topic (import from the module, nothing is re-exported):

- :mod:`~creval.measures.stats.correlation`: rank correlations, bootstrap intervals, AUC, paired differences;
- :mod:`~creval.measures.stats.agreement`: accuracy, macro-F1, Cohen's kappa, AUARC against gold labels;
- :mod:`~creval.measures.stats.raters`: rater reliability, noise ceilings;
- :mod:`~creval.measures.stats.resample`: seeded draws, cluster and stratified resampling, Monte-Carlo margins;
- :mod:`~creval.measures.stats.verdicts`: the words a claim gets from an interval (docs/verdicts.md);
- :mod:`~creval.measures.stats.tracking`: whether a measure tracks people, beside trivial baselines;
- :mod:`~creval.measures.stats.multiple`: Holm's correction across a family of claims;
- :mod:`~creval.measures.stats.paired`: paired tests of two conditions on the same items;
- :mod:`~creval.measures.stats.numbers`: numbers written to the precision their interval supports.
"""
