"""Syntactic templates and CR-POS on hand-tagged documents (no tagger needed)."""
import gzip

import pytest

from creval.measures import templates as T


def doc(pairs, sents=None):
    toks, tags = zip(*[p.split("/") for p in pairs.split()])
    return T.Tagged(tuple(toks), tuple(tags), tuple(sents or [0] * len(toks)))


A = doc("the/DT cat/NN sat/VBD ./. a/DT dog/NN ran/VBD", [0, 0, 0, 0, 1, 1, 1])
B = doc("a/DT dog/NN barked/VBD", [0, 0, 0])
C = doc("run/VB !/.", [0, 0])


def test_extract_templates_counts_and_sentence_boundaries():
    assert T.extract_templates([A, B, C], n=3, top_n=1) == [(("DT", "NN", "VBD"), 3)]
    inside = dict(T.extract_templates([A], n=3, top_n=10))
    crossing = dict(T.extract_templates([A], n=3, top_n=10, cross_sentences=True))
    assert ("VBD", ".", "DT") not in inside and crossing[("VBD", ".", "DT")] == 1
    assert ("NN", "VBD", ".") in inside       # same sentence: kept


def test_template_rate_and_tpt_sequence_mode():
    s = T.template_stats([A, B, C], n=3, top_n=1)
    assert s["has"] == [True, True, False]
    assert s["tpt"] == pytest.approx([2 / 7, 1 / 3, 0.0])
    assert s["rate"] == pytest.approx(2 / 3)
    assert s["tpt_mean"] == pytest.approx((2 / 7 + 1 / 3) / 3)


def test_compat_mode_surface_matching_quirks():
    texts = ["the cat sat. a dog ran", "a dog barked", "run!"]
    s = T.template_stats([A, B, C], texts, n=3, top_n=1, mode="compat")
    # realisations of DT NN VBD: "the cat sat", "a dog ran", "a dog barked": found as raw substrings
    assert s["has"] == [True, True, False]
    assert s["tpt"] == pytest.approx([2 / 6, 1 / 3, 0.0])   # "sat." is one whitespace word
    # a template ending in punctuation is realised as "sat ." and never matches "sat."
    p = T.template_stats([A], ["the cat sat. a dog ran"], n=4, top_n=1, mode="compat",
                         templates=[(("DT", "NN", "VBD", "."), 1)])
    assert p["has"] == [False]
    q = T.template_stats([A], n=4, templates=[(("DT", "NN", "VBD", "."), 1)])
    assert q["has"] == [True]


def test_cr_pos():
    raw = b"DT NN VBD . DT NN VBD DT NN VBD VB ."
    want = round(len(raw) / len(gzip.compress(raw, 9, mtime=0)), 3)
    assert T.cr_pos([A, B, C]) == want
    assert T.cr_pos([A, B, C], double_gzip=True) < want
