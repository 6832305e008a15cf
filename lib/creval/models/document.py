"""What a scored text follows and how a long one is cut (Log-likelihoods, :mod:`creval.models.base`): the model's
*document start* (:func:`document_start`), the text's own tokens beside its context (:func:`scored_tokens`), and
rolling windows for a text longer than the model's window (:func:`rolling_windows`)."""
from __future__ import annotations

from creval.core.errors import CrevalError


def rolling_windows(first: int, total: int, window: int) -> list[tuple[int, int, int]]:
    """How to score tokens ``first .. total-1`` of a sequence with at most ``window`` tokens per forward pass.

    Returns ``(lo, start, hi)`` triples: feed tokens ``lo .. hi-1`` and score tokens ``start .. hi-1``
    (token j from the output at j-1). One window when everything fits; otherwise each window keeps as much
    preceding text as fits beside what is left to score, and at least ``window // 2`` tokens (where there
    are that many), so every scored token sees at least half a window of its past. ``first >= 1``.
    """
    if window < 2:
        raise ValueError("window must hold at least two tokens")
    out, i = [], first
    while i < total:
        keep = max(1, min(i, max(window - (total - i), window // 2)))
        lo = i - keep
        hi = min(total, lo + window)
        out.append((lo, i, hi))
        i = hi
    return out


SCORED_AFTER = "document start"      # what a scored text follows (in the cache key: an older definition is not reused)
CHAT_OPENERS = ("im_start", "start_of_turn", "start_header_id", "<|user|>", "<|system|>", "<|assistant|>")
DOCUMENT_SEPARATOR = "<|endoftext|>"


def document_start(bos: str | None, eos: str | None, vocab_has, model: str = "") -> str:
    """The token a text is scored after on every backend: the model's *document start*. The tokenizer's
    BOS when it opens a document (``<s>``, ``<|begin_of_text|>``, ``<bos>``); when the BOS is a chat-turn
    opener (SmolLM2-Instruct's GGUF names ``<|im_start|>``, after which the model expects a role name) or
    there is none, the document separator ``<|endoftext|>`` where the vocabulary has it (SmolLM2, Qwen,
    GPT-2 style pretraining), else the EOS. ``vocab_has(text) -> bool`` says whether a special token exists."""
    if bos and not any(m in bos for m in CHAT_OPENERS):
        return bos
    if vocab_has(DOCUMENT_SEPARATOR):
        return DOCUMENT_SEPARATOR
    if eos:
        return eos
    raise CrevalError(f"model {model}: its tokenizer names no begin- or end-of-text token, so a text has nothing "
                      "to be scored after", "use a model whose tokenizer names its BOS or EOS")


def scored_tokens(tokenize, begin: int, text: str, context: str | None) -> tuple[list[int], list[int]]:
    """``([begin] + context tokens, text tokens)`` for a local backend's ``tokenize(str) -> ids``.

    The text's tokens are those of ``context + text`` after the context's own tokens, so a text is split
    as the model would see it in place; if a token spans the boundary, the two are tokenized apart."""
    ctx = tokenize(context) if context else []
    txt = tokenize(text) if text else []
    if ctx and text:
        whole = tokenize(context + text)
        if whole[:len(ctx)] == ctx:
            txt = whole[len(ctx):]
    return [begin] + ctx, txt
