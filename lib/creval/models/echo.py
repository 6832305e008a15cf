"""Log-likelihoods from a server's echoed prompt: which echoed tokens are the text's.

A server scores a prompt when asked to echo it (``/completions`` with ``echo: true, logprobs: 1``): each prompt
token comes back with its log-prob given what precedes it. The text to score follows a *head* (the document start,
where the server adds none of its own, and the context). Two ways to find where the text starts:

- **by token ids** (``can: {echo_ids: true}``; vLLM): one request with two prompts, ``[head, head + text]``, and
  ``return_tokens_as_token_ids: true`` (vLLM's completions parameter: each token comes back as ``token_id:<id>``).
  The two echoes share the head's tokens; the text's tokens are those of the second echo after the longest common
  prefix. No token string is read: vLLM's per-token strings do not always concatenate back to the text (the
  SentencePiece leading space dropped by per-token ``decode`` until vLLM PR #48674, split multibyte characters
  until PRs #28874/#34875; servers.md 2.2). Where the last head token and the first text token merge into one
  token, that token counts as the text's (it carries the text's first characters).
- **by strings** (every other server; llama-cpp-python's takes one prompt per request): one prompt; the echoed
  token strings are concatenated, and the text's tokens are those that start at or after the head's length.
  Fails with a clear error when the strings do not give the prompt back.

In both, the generated token (``max_tokens: 1``) is dropped, and a text token the server gives no log-prob (the
prompt's first token, when there is no head) counts in ``skipped_tokens``.
"""
from __future__ import annotations

from creval.models.requests import LoglikelihoodRequest


def request(model: str, head: str, text: str, by_ids: bool) -> dict:
    """The ``/completions`` body that echoes ``head + text`` (two prompts when aligning by ids and there is a head)."""
    body = {"model": model, "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
    if by_ids:      # no head: one prompt, its tokens all the text's (after the server's own start, if it adds one)
        ids = {"prompt": [head, head + text]} if head else {"prompt": text}
        return {**body, **ids, "return_tokens_as_token_ids": True}
    return {**body, "prompt": head + text}


def _prompt_part(choice: dict, n_gen: int) -> tuple[list, list]:
    lp = choice.get("logprobs") or {}
    tokens, lps = lp.get("tokens") or [], lp.get("token_logprobs") or []
    if not tokens or len(tokens) != len(lps):
        return [], []
    return list(tokens[:len(tokens) - n_gen]), list(lps[:len(lps) - n_gen])


def by_ids(resp: dict, start: str) -> tuple[list, int] | None:
    """``(text log-probs, context tokens)`` from a two-prompt echo, or None when the reply is not one (``start``:
    the document-start text sent, one token, not context)."""
    choices = sorted(resp.get("choices") or [], key=lambda c: c.get("index", 0))
    if len(choices) != 2:
        return None
    gen = int((resp.get("usage") or {}).get("completion_tokens", 2))
    n_gen = max(0, round(gen / 2))                              # max_tokens=1 each
    (ta, _), (tb, lb) = _prompt_part(choices[0], n_gen), _prompt_part(choices[1], n_gen)
    if not ta or not tb:
        return None
    k = 0                       # where the echoes part: a head token merged with the text's first is the text's
    while k < min(len(ta), len(tb)) and ta[k] == tb[k]:
        k += 1
    return lb[k:], k - (1 if start else 0)


def by_strings(resp: dict, text: str, start: str) -> tuple[list, int] | None:
    """``(text log-probs, context tokens)`` from a one-prompt echo whose token strings give the prompt back, else
    None (a token whose string is the document start is not context)."""
    choice = (resp.get("choices") or [{}])[0]
    n_gen = int((resp.get("usage") or {}).get("completion_tokens", 1))
    # the generated tokens are cut by count: llama-cpp-python 0.3.36 lists none in an echo whose log-probs are
    # misaligned (a prompt without a leading special token), and that mismatch is what refuses such an echo
    tokens, lps = _prompt_part(choice, n_gen)
    if not tokens:
        return None
    echoed = "".join(tokens)
    if not echoed.endswith(text):
        return None
    boundary = len(echoed) - len(text)
    starts, pos = [], 0
    for t in tokens:
        starts.append(pos)
        pos += len(t)
    mine = [x for s, x in zip(starts, lps) if s >= boundary]
    return mine, sum(1 for s, t in zip(starts, tokens) if s < boundary and t != start)


def whole_prompt(resp: dict, server_start: bool) -> tuple[list, int] | None:
    """``(text log-probs, 0)`` from a one-prompt echo of the text alone in token ids: every echoed token is the
    text's, after the server's own start token where it adds one (``server_start``); None if not token ids."""
    choice = (resp.get("choices") or [{}])[0]
    tokens, lps = _prompt_part(choice, int((resp.get("usage") or {}).get("completion_tokens", 1)))
    if not tokens or not all(str(t).startswith("token_id:") for t in tokens):
        return None
    return lps[1 if server_start else 0:], 0


def text_logprobs(r: LoglikelihoodRequest, resp: dict, start: str,
                  server_start: bool = False) -> tuple[tuple[float, ...], int, int]:
    """``(scored log-probs, context tokens, skipped tokens)`` of ``r``'s text from an echo reply; raises
    ValueError with the reason when the reply cannot be read. ``start``: the document-start text sent;
    ``server_start``: the server puts its own start token first."""
    n = len(resp.get("choices") or [])
    got = by_ids(resp, start) if n == 2 else whole_prompt(resp, server_start) if not (start or r.context) else None
    if got is None:
        got = by_strings(resp, r.text, start)
    if got is None:
        raise ValueError("the reply does not echo the prompt's tokens")
    mine, context_tokens = got
    scored = tuple(float(x) for x in mine if x is not None)
    return scored, max(0, context_tokens) if r.context else 0, len(mine) - len(scored)
