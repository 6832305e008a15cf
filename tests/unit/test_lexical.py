"""Lexical measures (measures/lexical.py) on texts with known answers."""
import math
from collections import Counter

import pytest

from creval.measures import lexical as LX


def test_log_odds_finds_the_word_one_corpus_overuses():
    a = Counter({"tools": 40, "the": 100, "rope": 10})
    b = Counter({"tools": 2, "the": 100, "rope": 12, "stone": 36})     # same total: "the" at the same rate
    ranked = LX.log_odds(a, b, min_count=1)
    assert ranked[0][0] == "tools" and ranked[0][1] > 1.96 and ranked[0][2:] == (40, 2)
    z = {w: s for w, s, _, _ in ranked}
    assert abs(z["the"]) < 1.0 and z["rope"] < 0                     # same rate: no signal
    assert LX.overused(a, b, min_count=1) == ["tools"]
    # symmetric: swapping the corpora flips the sign
    assert {w: s for w, s, _, _ in LX.log_odds(b, a, min_count=1)}["tools"] == pytest.approx(-z["tools"])
    assert LX.log_odds(Counter(), b) == []


def test_word_rate_repetition_and_vocabulary():
    assert LX.word_rate("Use the tools, the makeshift tools!", {"tools", "makeshift"}) == pytest.approx(3 / 6)
    assert math.isnan(LX.word_rate("123 !!", {"x"}))
    texts = ["tie the rope to the tree", "tie the rope to the post", "wrap a scarf round the cup"]
    share = LX.shared_ngram_share(texts, n=3, k=1)
    assert share[0] == pytest.approx(3 / 4) and share[2] == 0.0        # "tie the rope", "the rope to", "rope to the"
    assert LX.shared_ngram_share(texts, n=3, k=2)[0] == 0.0
    assert LX.mattr("a b c d") == 1.0 and LX.mattr("a a a a") == 0.25
    long = " ".join(["red blue"] * 40)
    assert LX.mattr(long, w=10) == pytest.approx(0.2)
    assert LX.mean_word_length("ab abcd") == 3.0
    common = LX.common_words(Counter({"the": 9, "a": 5, "rope": 1}), top=2)
    assert common == {"the", "a"} and LX.rare_share("the rope", common) == 0.5
