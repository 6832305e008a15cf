"""What a server's HTTP answer was when it was not the one a verb expects (issue 52): one sentence naming the URL
and what came back (status, content type, first bytes), for study calls and for ``creval check`` alike.
:class:`BadReply` is never retried: a server that answers a web page or another API's JSON answers it again."""
from __future__ import annotations

import httpx

from creval.core.errors import CrevalError


def _host(url: str) -> str:
    return (httpx.URL(url).host or "").lower()


class BadReply(CrevalError):
    """A server's answer that is not what the verb expects (not JSON, JSON of another shape) or no answer at all
    (nothing listens, the host does not resolve): one sentence naming the URL and what came back."""


def came_back(r) -> str:
    """What an HTTP response held, for a sentence: ``HTTP 200, content type text/html, first bytes '<!doctype'``."""
    ctype = (r.headers.get("content-type") or "none").split(";")[0].strip() or "none"
    head = bytes(r.content[:60])
    first = repr(head.decode("utf-8", "replace")) if head else "(an empty body)"
    moved = f", redirected to {r.headers['location']} (not followed)" if r.headers.get("location") else ""
    return f"HTTP {r.status_code}, content type {ctype}, first bytes {first}{moved}"


def openai_shaped(path: str, data) -> bool:
    """Whether ``data`` is the JSON an OpenAI-compatible server sends for ``path``: a ``choices`` list of objects,
    each with its ``message`` object (``/chat/completions``) or its ``text`` (``/completions``); an object for any
    other path (servers fill ``/models`` in their own ways)."""
    if not isinstance(data, dict):
        return False
    if path.endswith(("/chat/completions", "/completions")):
        ch = data.get("choices")
        key, kind = ("message", dict) if path.endswith("/chat/completions") else ("text", str)
        return isinstance(ch, list) and bool(ch) and all(isinstance(c, dict) and isinstance(c.get(key), kind)
                                                         for c in ch)
    return True


def reply_json(r, url: str, who: str) -> dict:
    """The JSON body of a 200 reply from ``url``, checked to be what an OpenAI-compatible server sends there;
    else :class:`BadReply` naming the URL and what came back (``who`` opens the sentence, e.g. ``model m``).
    Not retried: a server that answers a web page or another API's JSON will answer it again."""
    fix = ("point base_url at the server's OpenAI-compatible API (it usually ends in /v1, e.g. "
           "http://127.0.0.1:8000/v1) and check that the server there serves the model; `creval check MODEL` "
           "probes it")
    try:
        data = r.json()
    except ValueError:
        raise BadReply(f"{who}: {url} answered something that is not JSON ({came_back(r)})", fix) from None
    if not openai_shaped(url, data):
        want = ("no `choices` list of completions" if url.endswith("/completions") else "not a JSON object")
        raise BadReply(f"{who}: {url} answered JSON that is not an OpenAI-style reply ({want}; {came_back(r)})", fix)
    return data


def unreachable(e: Exception, url: str, who: str, waited: float | None = None) -> BadReply:
    """One sentence for a request to ``url`` that got no HTTP answer: a host that does not resolve, a port
    nobody listens on, a reply that did not come within ``waited`` seconds, a connection that broke."""
    import socket
    chain, x = [], e
    while x is not None and len(chain) < 8:
        chain.append(x)
        x = x.__cause__ or x.__context__
    text = " ".join(str(c) for c in chain).lower()
    host = _host(url) or url
    if any(isinstance(c, socket.gaierror) for c in chain) or any(
            w in text for w in ("name or service not known", "temporary failure in name resolution",
                                "nodename nor servname", "no address associated", "name resolution")):
        return BadReply(f"{who}: endpoint {url} is unreachable: its host {host} does not resolve (DNS: {e})",
                        "fix the host name in the spec's base_url, or check the network")
    if isinstance(e, httpx.TimeoutException):
        within = f" within {waited:g} s" if waited else ""
        return BadReply(f"{who}: {url} sent no reply{within} ({type(e).__name__})",
                        "check that the server is up and serving; a queueing server (vLLM) may need a longer "
                        "`request: {timeout: ...}` in the spec")
    if isinstance(e, httpx.ConnectError) and (any(isinstance(c, ConnectionRefusedError) for c in chain)
                                              or "refused" in text):
        return BadReply(f"{who}: endpoint {url} is unreachable: nothing answered there (connection refused: {e})",
                        "start the server or fix base_url in the model spec")
    if isinstance(e, httpx.ConnectError):
        return BadReply(f"{who}: endpoint {url} is unreachable: no connection could be made ({e})",
                        "check the host, the port and the scheme (http or https) of the spec's base_url")
    if isinstance(e, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return BadReply(f"{who}: {url} is not a URL that can be asked ({e})",
                        "give base_url as http://HOST:PORT/v1 or https://HOST/v1")
    return BadReply(f"{who}: the request to {url} failed with no HTTP answer ({type(e).__name__}: {e})",
                    "check that the server is up and that base_url is right")
