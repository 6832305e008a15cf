"""Perplexity, one definition (issue 33): scored after the document start, context and text joined by a new
line, summarised token-weighted beside the per-text median with the first token's share."""
import math

import pytest

from creval.core.errors import CrevalError
from creval.measures.perplexity import PPLRecord, joined_context, perplexity_many, perplexity_summary
from creval.models.document import DOCUMENT_SEPARATOR, document_start
from creval.models.records import LogLikelihood
from creval.models.requests import LoglikelihoodRequest


def test_the_document_start_rule():
    has_eot = lambda t: t == "<|endoftext|>"         # noqa: E731
    none = lambda t: False                           # noqa: E731
    # SmolLM2-Instruct's GGUF names <|im_start|> as BOS: a chat-turn opener, so the document separator
    assert document_start("<|im_start|>", "<|im_end|>", has_eot) == DOCUMENT_SEPARATOR == "<|endoftext|>"
    assert document_start("<|begin_of_text|>", "<|eot_id|>", none) == "<|begin_of_text|>"    # Llama 3
    assert document_start("<s>", "</s>", none) == "<s>"                                       # Mistral, Llama 2
    assert document_start("<start_of_turn>", "<eos>", none) == "<eos>"        # a chat opener, no <|endoftext|>
    assert document_start(None, "<|im_end|>", has_eot) == "<|endoftext|>"                     # Qwen: no BOS
    with pytest.raises(CrevalError, match="nothing to be scored after"):
        document_start(None, None, none, "m")
    # the definition is part of the cache key: numbers scored under another definition are not reused
    assert LoglikelihoodRequest("a", None).describe()["start"] == "document start"


def test_context_and_text_are_joined_by_a_new_line():
    assert joined_context("Uses for a box:") == "Uses for a box:\n"
    assert joined_context("Problem: the door is stuck.\n") == "Problem: the door is stuck.\n"
    assert joined_context("Uses for a box: ") == "Uses for a box: "
    assert joined_context("") is None and joined_context(None) is None
    assert joined_context("Q:", sep=" ") == "Q: "


class FakeModel:
    """Each token of a text costs 1 nat, except the first: 5 nats (the least to go on)."""
    name = "fake"

    def __init__(self):
        self.asked = []

    def loglikelihood_many(self, items, tags=None):
        self.asked += items
        out = []
        for text, _ctx in items:
            lps = tuple([-5.0] + [-1.0] * (len(text.split()) - 1)) if text else ()
            out.append(LogLikelihood(sum(lps), lps, len(text.encode()), 3 if _ctx else 0, model="fake"))
        return out


def test_perplexity_many_joins_the_context_and_keeps_the_first_token():
    m = FakeModel()
    recs = perplexity_many(m, ["stage", "a hat for a cat"], ["Uses for a box:", None])
    assert m.asked == [("stage", "Uses for a box:\n"), ("a hat for a cat", None)]
    one, five = recs
    assert (one.n_tokens, one.sum_nll, one.first_nll, one.ppl) == (1, 5.0, 5.0, math.exp(5.0))
    assert (five.n_tokens, five.sum_nll, five.first_nll) == (5, 9.0, 5.0)
    assert five.ppl == pytest.approx(math.exp(9 / 5))
    assert PPLRecord.from_dict(five.to_dict()) == five
    assert math.isnan(PPLRecord.from_dict({"sum_nll": 1, "n_tokens": 1, "n_bytes": 1}).first_nll)   # older records


def test_the_summary_weighs_texts_by_their_tokens():
    # "calendar": one token costing 13 nats; a 7-token sentence costing 14 nats in all, 4 of them on its first
    recs = [{"n_tokens": 1, "nll": 13.0, "first_nll": 13.0, "n_bytes": 8},
            {"n_tokens": 7, "nll": 14.0, "first_nll": 4.0, "n_bytes": 23}]
    s = perplexity_summary(recs)
    assert s["texts"] == 2 and s["tokens"] == 8
    assert s["ppl_token_weighted"] == pytest.approx(math.exp(27 / 8))                 # 29.2
    assert s["ppl_mean"] == pytest.approx((math.exp(13) + math.exp(2)) / 2)          # 221,211: one word rules it
    assert s["ppl_median"] == pytest.approx(s["ppl_mean"])                           # two texts: the same
    assert s["ppl_mean"] > 7000 * s["ppl_token_weighted"]
    assert s["first_token_share"] == pytest.approx(17 / 27)
    assert s["first_token_nats"] == pytest.approx(8.5)
    assert s["bits_per_byte"] == pytest.approx(27 / math.log(2) / 31)


def test_the_summary_reads_older_rows_and_records():
    old = [{"n_tokens": 2, "ppl": math.exp(1.5)}, {"n_tokens": 0, "ppl": float("nan")}]    # no nll: T log PPL
    s = perplexity_summary(old)
    assert s["texts"] == 1 and s["ppl_token_weighted"] == pytest.approx(math.exp(1.5))
    assert math.isnan(s["first_token_share"]) and math.isnan(s["bits_per_byte"])
    r = PPLRecord(6.0, 3, 9, 0, "m", first_nll=3.0)
    assert perplexity_summary([r])["first_token_share"] == pytest.approx(0.5)
    empty = perplexity_summary([])
    assert empty["texts"] == 0 and math.isnan(empty["ppl_token_weighted"])
