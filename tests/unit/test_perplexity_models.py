"""Perplexity against a hand computation from the raw log-probs (issue 33), on the in-process backends: the
text is scored after SmolLM2's document start ``<|endoftext|>`` (not its GGUF's BOS ``<|im_start|>``), every
token of it counted, the first included."""
import math

import numpy as np
import pytest

from creval.core.cache import CallCache
from creval.measures.perplexity import perplexity, perplexity_summary
from creval.models.registry import get_spec, load_backend, load_model, locate_weights

pytestmark = pytest.mark.integration
TEXTS = ["The cat sat on the mat.", "Calendar", "Fold the foil into a funnel and pour the water through it."]


def by_hand(llm, tokens: list[int]) -> list[float]:
    """log p(token j | tokens before j) for j >= 1, from llama.cpp's raw logits of one plain forward pass."""
    llm.reset()
    llm.eval(tokens)
    out = []
    for j in range(1, len(tokens)):
        x = np.asarray(llm.scores[j - 1], dtype=np.float64)
        out.append(float(x[tokens[j]] - x.max() - np.log(np.exp(x - x.max()).sum())))
    return out


def test_llamacpp_perplexity_matches_a_hand_computation(tmp_path):
    import llama_cpp
    spec = get_spec("smollm2-135m")
    llm = llama_cpp.Llama(str(locate_weights(spec)), n_ctx=256, logits_all=True, verbose=False)
    eot = llm.tokenize(b"<|endoftext|>", add_bos=False, special=True)
    assert len(eot) == 1 and llm.token_bos() != eot[0]           # the GGUF's BOS is another token (<|im_start|>)
    be = load_backend(spec)
    assert be.begin == eot[0]
    m = load_model("smollm2-135m", cache=CallCache(tmp_path / "c.sqlite"))
    recs = []
    for text in TEXTS:
        toks = llm.tokenize(text.encode(), add_bos=False, special=False)
        hand = by_hand(llm, eot + toks)
        r = perplexity(m, text)
        ll = m.loglikelihood(text)
        assert r.n_tokens == len(toks) == len(hand)                # every token scored, the first included
        assert ll.token_logprobs == pytest.approx(hand, abs=0.3)   # quantised kernels, other batch sizes
        assert r.ppl == pytest.approx(math.exp(-sum(hand) / len(hand)), rel=0.05)
        assert r.first_nll == pytest.approx(-hand[0], abs=0.3)
        chat_opener = by_hand(llm, [llm.token_bos()] + toks)            # the old definition: after <|im_start|>
        assert -chat_opener[0] > -hand[0] + 1                           # the first token cost far more there
        recs.append(r)
    s = perplexity_summary(recs)
    assert s["ppl_token_weighted"] < math.exp(math.log(llm.n_vocab()))    # better than a uniform guess
    # given a context, the text follows it on a new line
    cond = perplexity(m, "stage", "Uses for a box:")
    toks = llm.tokenize(b"Uses for a box:\nstage", add_bos=False, special=False)
    ctx = llm.tokenize(b"Uses for a box:\n", add_bos=False, special=False)
    hand = by_hand(llm, eot + toks)[len(ctx):]
    assert cond.n_tokens == len(toks) - len(ctx) and cond.sum_nll == pytest.approx(-sum(hand), abs=0.3)


def test_hf_backend_gives_the_same_definition(tmp_path):
    hf = load_model("smollm2-135m-hf", cache=CallCache(tmp_path / "h.sqlite"))
    local = load_model("smollm2-135m", cache=CallCache(tmp_path / "l.sqlite"))
    assert hf.backend.tok.convert_ids_to_tokens(hf.backend.begin) == "<|endoftext|>"
    for text in TEXTS:
        a, b = perplexity(hf, text), perplexity(local, text)
        assert a.n_tokens == b.n_tokens and a.ppl == pytest.approx(b.ppl, rel=0.3)
