"""Chapter 06 measures on the real embedded model (smollm2-135m) and the real spaCy tagger: perplexity and
its conditional variant, the rubric judge's expected-value scores, and a warm rerun that calls no model."""
import pytest

from creval.core.ledger import LEDGER
from creval.judges import rubric as R
from creval.measures import templates as T
from creval.measures.perplexity import perplexity_many
from creval.models.registry import load_model

pytestmark = pytest.mark.integration
PROBLEM = "You spilled red wine on a carpet. You have a towel, a cup of water and some salt. How do you clean it?"
SOLUTION = "Pour salt on the stain to soak up the wine, then dab it with the towel wet with the water."


def test_perplexity_judge_and_warm_rerun(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    m = load_model("smollm2-135m")
    plain, cond = perplexity_many(m, [SOLUTION, SOLUTION], [None, PROBLEM])
    assert plain.n_tokens == cond.n_tokens > 10 and cond.context_tokens > 10
    assert 1 < plain.ppl < 1000 and 0 < plain.bits_per_byte < 8
    assert cond.ppl < plain.ppl                     # the problem makes the solution more expected
    (rec,) = R.rubric_judge(m, [{"id": "a", "text": SOLUTION, "problem": PROBLEM}], "ps", analysis_tokens=12)
    assert rec.state == "ok" and rec.via == "logprobs"
    assert all(1 <= v <= 5 for v in rec.scores.values())
    with LEDGER.collect() as t:
        perplexity_many(m, [SOLUTION, SOLUTION], [None, PROBLEM])
        again = R.rubric_judge(m, [{"id": "a", "text": SOLUTION, "problem": PROBLEM}], "ps", analysis_tokens=12)
    assert again[0].scores == rec.scores
    assert t.records and not t.made


def test_spacy_tags_once_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    (d,) = T.pos_tag(["The dog barked. Then it slept."])
    assert d.tags == ("DT", "NN", "VBD", ".", "RB", "PRP", "VBD", ".") and d.sents == (0, 0, 0, 0, 1, 1, 1, 1)
    assert T.pipeline() is T.pipeline()
