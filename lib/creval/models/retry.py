"""What a server's error reply means, and how long to wait before asking again.

Kept apart from the HTTP client (``models/endpoint.py``, httpx) so the rules are small pure functions. We keep
httpx rather than the ``openai`` package: our budget (one adaptive in-flight limit per model shared by every
study), replica routing and batch-file lines need the raw request body and response, and the package would add a
second retry loop under ours. Its rules are followed instead, with their sources:

- ``Retry-After``: OpenAI's SDK reads the non-standard ``retry-after-ms`` first, then ``retry-after`` as seconds
  or as an HTTP-date (openai-python ``_base_client._parse_retry_after_header``); we do the same.
- 429 is both "slow down" and "no money": ``insufficient_quota`` (an empty account or a spend limit) is not
  retriable (dev.to "API 429 errors"; developersdigest.tech), so it stops at once with one sentence.
- llama.cpp's ``llama-server`` answers a refused request (``echo``: "Only no echo is supported", older builds
  "Only one completion choice is allowed") with HTTP 500 (``ex_wrapper`` maps the exception to 500; see
  docs/servers.md; https://github.com/ggml-org/llama.cpp/tree/master/tools/server): a 500 whose body says the
  request is unsupported is permanent.
- vLLM and llama.cpp queue over capacity and never answer 429 (servers.md 2.2, 2.5): a long wait is a queue, not
  a dead server, so the timeout is the spec's (``request: {timeout: s}``) and a timed-out request is retried.
"""
from __future__ import annotations

import email.utils
import json
import random
import time

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
RETRY_WINDOW = 120.0     # seconds of waiting before a retriable error is reported: outlasts a 60 s rate window
MAX_WAIT = 60.0          # no single wait longer than this
# words of a 500 body that mean "this request is refused", not "try later" (llama-server: servers.md 2.5)
PERMANENT_WORDS = ("only no echo is supported", "only one completion choice", "not supported", "unsupported")


def retry_after(headers, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms``, or ``retry-after`` in seconds or as an
    HTTP-date; None when it says nothing usable."""
    get = headers.get
    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_message(text: str) -> str:
    """The human part of an error body (OpenAI's ``{"error": {"message": ...}}``, a plain string, or the text)."""
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        return str(err.get("message") or err.get("detail") or err)[:300]
    return str(err)[:300]


def error_code(text: str) -> str:
    """OpenAI's ``error.code`` or ``error.type`` ("insufficient_quota", "rate_limit_exceeded", ...), or ""."""
    try:
        body = json.loads(text)
    except ValueError:
        return ""
    err = body.get("error") if isinstance(body, dict) else None
    return str(err.get("code") or err.get("type") or "") if isinstance(err, dict) else ""


def classify(status: int, text: str) -> str:
    """``quota`` (stop: no money), ``refused`` (stop: the server will never do this), ``retry`` (wait, ask again),
    or ``fail`` (stop: a client error)."""
    if status == 429 and "insufficient_quota" in (error_code(text) + " " + text):
        return "quota"
    if status == 500 and any(w in error_message(text).lower() for w in PERMANENT_WORDS):
        return "refused"
    return "retry" if status in RETRY_STATUS else "fail"


def backoff(attempt: int, first: float, asked: float | None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): what the server asked, else ``first * 2**attempt``
    (at most :data:`MAX_WAIT`), with up to 25 % jitter so that many clients do not come back together."""
    base = asked if asked is not None else first * 2 ** attempt
    return min(MAX_WAIT, base) * (1 + 0.25 * random.random())
