"""A number in a chapter's sentence links to the items behind it (creval.studies.links)."""
from creval.book.browse import address as book_address
from creval.studies.links import address, items


def test_items_link_opens_the_browser_on_the_table_filtered():
    assert items("40 parsed verdicts", "convergent", "human_verdicts", {"judge": "retrieval"}) == (
        "[40 parsed verdicts](../browse/convergent.html#t=human_verdicts&f.judge=retrieval)")
    assert items("12 measures", "compare", "values") == "[12 measures](../browse/compare.html#t=values)"
    # brackets in the text cannot end the link early; values with spaces or slashes are quoted
    assert items("3 [of 5]", "aut", filters={"judge model": "org/m 1"}) == (
        "[3 \\[of 5\\]](../browse/aut.html#f.judge%20model=org/m%201)")


def test_the_book_builds_the_same_addresses():
    assert book_address is address
