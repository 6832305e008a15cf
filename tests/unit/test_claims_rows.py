"""One verdict for a claim tested on several rows (every judge, generator, model): the words combine as the claim
says "on every row", and too few independent units are named before any interval is read."""
from creval.measures.stats.verdicts import CONTRADICTS, INCONCLUSIVE, SUPPORTS, TESTABLE, Verdict
from creval.studies.claims import every_row, too_few_of


def test_every_row_needs_every_testable_row_to_support():
    s, c, i, t = Verdict(SUPPORTS), Verdict(CONTRADICTS), Verdict(INCONCLUSIVE), Verdict(TESTABLE, "3 pair(s)")
    assert every_row([s, s]).word == SUPPORTS and every_row([s, t]).word == SUPPORTS
    assert every_row([s, i]).word == INCONCLUSIVE and every_row([s, c, s]).word == CONTRADICTS
    assert every_row([t, Verdict(TESTABLE, "other")]) == Verdict(TESTABLE, "3 pair(s)")
    assert every_row([]).word == TESTABLE
    assert every_row([s, c, t]).reason == ("over 3 rows: 1 supports the paper, 1 contradicts the paper, 1 not "
                                           "testable here")
    assert every_row([s, Verdict(SUPPORTS, borderline=True)]).borderline


def test_too_few_units_are_named_with_their_unit():
    assert too_few_of(4, "pair") == "4 pair(s), fewer than the 30 a verdict needs"
    assert too_few_of(30, "pair") is None and too_few_of(9, "object", min_n=10).startswith("9 object(s)")
