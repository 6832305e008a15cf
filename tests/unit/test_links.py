"""A number in a chapter's sentence links to the items behind it (creval.studies.links)."""
import numpy as np

from creval.book.browse import address as book_address
from creval.studies.links import address, anchor, dead, items, shown, targets


def test_items_link_opens_the_browser_on_the_table_filtered():
    assert items("40 parsed verdicts", "convergent", "human_verdicts", {"judge": "retrieval"}) == (
        "[40 parsed verdicts](../browse/convergent.html#t=human_verdicts&f.judge=retrieval)")
    assert items("12 measures", "compare", "values") == "[12 measures](../browse/compare.html#t=values)"
    # brackets in the text cannot end the link early; values with spaces or slashes are quoted
    assert items("3 [of 5]", "aut", filters={"judge model": "org/m 1"}) == (
        "[3 \\[of 5\\]](../browse/aut.html#f.judge%20model=org/m%201)")


def test_the_book_builds_the_same_addresses():
    assert book_address is address


def test_a_filter_value_is_written_as_the_page_shows_it():
    assert shown(True) == "true" and shown(3.0) == "3" and shown(None) == "not recorded" and shown(0.5) == "0.5"
    assert shown(np.bool_(False)) == "false" and shown(np.int64(2)) == "2" and shown(float("nan")) == "not recorded"
    assert address("neocoder", "codes", {"state": 0, "correct_strict": False}) == (
        "../browse/neocoder.html#t=codes&f.state=0&f.correct_strict=false")
    cell = anchor("2 codes", "neocoder", "codes", {"model": "a&b"})
    assert cell == '<a href="../browse/neocoder.html#t=codes&amp;f.model=a%26b">2 codes</a>'
    assert targets(cell) == [("neocoder", "codes", {"model": "a&b"})]


def test_dead_links_name_what_the_browser_lacks():
    rows = {"s": {"codes": [{"state": 0, "ok": True, "verdict": "yes", "label": 1}, {"state": 1, "ok": False}]}}
    good = items("1 code", "s", "codes", {"state": 1, "ok": False}) + anchor("x", "s", "codes", {"state": 0})
    assert dead(good, rows) == []
    assert dead(items("n", "s", "rounds"), rows) == ["s: no table 'rounds' with rows"]
    assert dead(items("n", "t", "codes"), rows) == ["t: no table 'codes' with rows"]
    assert dead(items("n", "s", "codes", {"model": "m"}), rows) == ["s/codes: no column 'model'"]
    assert dead(items("n", "s", "codes", {"state": 2}), rows) == ["s/codes: no row with {'state': '2'}"]
