"""``creval check``'s probe: a handful of tiny requests that find out what a live server can do.

Each probe asks for one reply token (the whole probe costs a few hundred tokens, under a cent on a paid API), so
it is not cached: probing again is cheaper than trusting an old answer about a server that may have been upgraded.
What it finds fills the gaps of the spec's ``can:`` (:mod:`creval.models.capabilities`); what the spec says wins.

- ``GET /models``: the server answers (and takes the key); ``GET /version`` (vLLM, at the server's root) or
  ``/api/version`` (Ollama) and the ``server`` header name the server and its version;
- a chat reply with ``logprobs``, asked as the studies ask (a sample's temperature 1.0 and top-p 0.9, then a
  judge's temperature 0): whether log-probs come back (Ollama < 0.12.11 silently drops them), whether the model
  refuses a parameter (OpenAI's reasoning models: 400 naming it, and temperature 0 refused where 1 is accepted),
  whether it reasons (``reasoning_tokens`` in the usage, or a ``reasoning`` field);
- the same reply's first-step log-probs at temperature 0.5 and 1: equal means raw, different means processed
  (SGLang scales them by the temperature);
- ``/completions`` with ``echo`` and ``logprobs``: 404 means a chat-only model, a refusal (OpenAI's 400,
  llama-server's 500 "Only no echo is supported") means no echo, and an echoed first token that is not the
  prompt's means the server adds its own document start;
- a short generation shaped as a sample (:func:`probe_thinking`) that must not carry thinking (``<think>`` in the
  content, a ``reasoning`` field): an HTTP 200 is not enough. Where it thinks, the two documented switches are
  tried (``chat_template_kwargs: {enable_thinking: false}``, vLLM/SGLang; ``reasoning_effort: "none"``, Ollama),
  and the one that works goes into the printed spec block; a chat reply's budget eaten by reasoning asks for
  ``reasoning_room``.
"""
from __future__ import annotations

import math
from dataclasses import replace

import httpx

from creval.core.errors import CrevalError
from creval.models import retry
from creval.models.http_replies import came_back, reply_json, unreachable
from creval.models.reach import api_key_for, endpoints
from creval.models.replies import has_thinking
from creval.models.retry import error_message
from creval.models.shaping import shape, timeout
from creval.models.spec import ModelSpec

PROMPT = [{"role": "user", "content": "Answer with one word: is water wet?"}]
SAMPLING = {"temperature": 1.0, "top_p": 0.9}     # what the studies' samples send (SampleRequest's defaults)
JUDGE = {"temperature": 0}                         # what judges and first answers send
ROOM = 2000                                        # reasoning room suggested for a model that reasons


def _client_timeout(spec: ModelSpec) -> float:
    return min(60.0, timeout(spec))


def _client(spec: ModelSpec, key: str):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(timeout=_client_timeout(spec), headers=headers, follow_redirects=False)


OWNERS = {"vllm": "vllm", "me": "llama-cpp-python", "library": "ollama"}   # /v1/models' owned_by, as each fills it


def server_name(headers, version: dict, owner: str = "") -> str:
    """A server's name from its headers, version reply and the ``owned_by`` of its models (best effort; "" when
    nothing says). ``openai-version`` is OpenAI's own header (llama-cpp-python also sends openai-processing-ms)."""
    if "openai-version" in {h.lower() for h in headers}:
        return "openai"
    if version.get("name"):
        return str(version["name"])
    return OWNERS.get(owner) or str(headers.get("server") or "")


def identify(client, base: str) -> dict:
    """``{"name", "version"}`` of the server at ``base`` (``.../v1``): its ``/version`` or ``/api/version`` reply
    and its headers; what it does not say is left empty."""
    root = base[:-3] if base.endswith("/v1") else base
    found: dict = {}
    headers, owner = {}, ""
    for url in (f"{root}/version", f"{root}/api/version", f"{base}/models"):
        try:
            r = client.get(url)
            body = r.json() if r.status_code == 200 else {}
        except Exception:   # noqa: BLE001 - a server without the route, a refused connection, not JSON: not known
            continue
        headers = {**r.headers, **headers}
        if "version" in url and isinstance(body, dict):
            found = {**body, **found}
        elif isinstance(body, dict) and body.get("data"):
            owner = str((body["data"][0] or {}).get("owned_by", ""))
    return {"name": server_name(headers, found, owner), "version": str(found.get("version", ""))}


KNOWN: dict[str, dict] = {}        # base URL -> {name, version}, asked once per process


def identify_once(spec: ModelSpec) -> dict:
    """The name and version of a server spec's first replica, asked once per process with a short timeout (for
    the run manifest; a server that is down is simply not named). No model call, no key sent to another host."""
    base = endpoints(spec)[0]
    if base not in KNOWN:
        import httpx
        try:
            key = api_key_for(spec)
        except Exception:   # noqa: BLE001 - no key: the server may still say who it is
            key = ""
        try:
            with httpx.Client(timeout=2.0, headers={"Authorization": f"Bearer {key}"} if key else {},
                              follow_redirects=False) as client:
                KNOWN[base] = identify(client, base)
        except Exception:   # noqa: BLE001 - best effort: an unknown server is recorded as unknown
            KNOWN[base] = {"name": "", "version": ""}
    return dict(KNOWN[base])


def base_of(spec: ModelSpec) -> str:
    """The URL the probe asks: the spec's first replica, or OpenAI's API."""
    return endpoints(spec)[0]


def send(client, spec: ModelSpec, method: str, path: str, body: dict | None = None):
    """One probe request; an answer that is no answer (nothing listens, no DNS, no reply in time) or a 200 that is
    not the JSON an OpenAI-compatible server sends there is :class:`~creval.models.http_replies.BadReply`, one
    sentence naming the URL and what came back. Returns ``(status, JSON body or {}, text)``; the text of a reply
    that is not JSON is what came back (status, content type, first bytes), not the page."""
    url = f"{base_of(spec)}{path}"
    try:
        r = client.request(method, url, **({"json": body} if body is not None else {}))
    except httpx.HTTPError as e:
        raise unreachable(e, url, f"model {spec.name}", _client_timeout(spec)) from None
    if r.status_code == 200:
        return 200, reply_json(r, url, f"model {spec.name}"), r.text
    try:
        data = r.json()
    except ValueError:
        return r.status_code, {}, came_back(r)
    return r.status_code, data if isinstance(data, dict) else {}, r.text


def _post(client, spec, verb, path, body):
    return send(client, spec, "POST", path, shape(spec, verb, path, {"model": spec.model, **body}))


def refusal(status: int, text: str) -> bool:
    """Whether a non-200 reply refuses the request for good (a client error, or llama-server's 500 naming what it
    does not support): a finding about the server. Anything else (a 5xx, a 429, a refused key) says nothing about
    what it can do."""
    return status in (400, 404, 405, 422) or retry.classify(status, text) == "refused"


def failure(status: int, text: str, url: str) -> str:
    """A probe request that failed without telling what the server can do, in a sentence."""
    said = text if text.startswith("HTTP ") else f"{status}: {error_message(text) or '(an empty body)'}"
    return f"{url} answered {said}"


def _first_top(data: dict) -> dict[str, float]:
    c = (data.get("choices") or [{}])[0]
    lp = (c.get("logprobs") or {}).get("content") or []
    return {a["token"]: float(a["logprob"]) for a in (lp[0].get("top_logprobs") or [])} if lp else {}


def refused_param(text: str) -> str:
    """The parameter a 400 names (OpenAI's ``error.param``, or the first quoted word of its message), or ""."""
    import json
    import re
    try:
        err = json.loads(text).get("error") or {}
    except (ValueError, AttributeError):
        err = {}
    if isinstance(err, dict) and err.get("param"):
        return str(err["param"])
    m = re.search(r"'(\w+)'", error_message(text)) or re.search(r"^(\w+) (?:are|is) not supported", error_message(text))
    return m.group(1) if m else ""


def learn_shaping(client, spec: ModelSpec, body: dict) -> tuple[ModelSpec, int, dict, str, list[str]]:
    """Send a chat ``body``; while the model answers 400 naming a parameter, drop it (or rename ``max_tokens`` to
    ``max_completion_tokens``) and ask again. Returns the spec with what was learnt in its ``request``, the last
    status, reply and text, and notes."""
    from dataclasses import replace
    notes: list[str] = []
    for _ in range(6):
        st, data, text = _post(client, spec, "choice", "/chat/completions", body)
        param = refused_param(text) if st == 400 else ""
        if not param or param in (spec.request or {}).get("drop", ()):
            return spec, st, data, text, notes
        req = dict(spec.request or {})
        if param == "max_tokens":
            req["token_limit"] = "max_completion_tokens"
        else:
            req["drop"] = [*req.get("drop", []), param]
        notes.append(f"the model refused {param!r}: {error_message(text)}")
        spec = replace(spec, request=req)
    return spec, st, data, text, notes


def probe_chat(client, spec: ModelSpec) -> tuple[dict, list[str]]:
    """What the chat endpoint says about log-probs, their kind, reasoning and refused parameters; notes."""
    ask = {"messages": PROMPT, "max_tokens": 1, "logprobs": True, "top_logprobs": 5, "seed": 1,
           "stop": ["\n\n\n"]}
    shaped, st, data, text, notes = learn_shaping(client, spec, {**ask, **SAMPLING})
    sampled = st == 200                             # a sample's request (temperature 1.0, top-p 0.9) succeeded
    if st == 200:                                   # a judge's request too: temperature 0 may be refused alone
        shaped, st, _, text, more = learn_shaping(client, shaped, {**ask, **JUDGE})
        notes += more
    found: dict = {"_worked": {"sample": sampled, "choice": False}}
    if shaped.request != spec.request:
        found["_request"] = {k: v for k, v in shaped.request.items() if v != (spec.request or {}).get(k)}
    if st == 200:
        found["_worked"]["choice"] = True
    elif refusal(st, text):
        notes.append(f"chat with log-probs answered {st}: {error_message(text)}")
        return found, notes
    else:
        found["_failed"] = [failure(st, text, f"{base_of(spec)}/chat/completions")]
        return found, notes
    usage = data.get("usage") or {}
    msg = ((data.get("choices") or [{}])[0]).get("message") or {}
    found["reasoning"] = bool((usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
                              or msg.get("reasoning_content") or msg.get("reasoning"))
    top1 = _first_top(data)
    if not top1:
        found["logprobs"] = "none"
        notes.append("the model refuses log-probs" if "logprobs" in (shaped.request or {}).get("drop", ()) else
                     "the chat reply carries no log-probs (the field was ignored)")
        return found, notes
    st, data2, _ = _post(client, shaped, "choice", "/chat/completions", {**ask, **SAMPLING, "temperature": 0.5})
    top2 = _first_top(data2) if st == 200 else {}
    same = [t for t in top1 if t in top2]
    if same:
        diff = max(abs(top1[t] - top2[t]) for t in same)
        found["logprobs"] = "raw" if diff < 1e-3 else "processed"
        notes.append(f"first-step log-probs at temperature 1 and 0.5 differ by {diff:.4f} at most")
    return found, notes


def probe_echo(client, spec: ModelSpec) -> tuple[dict, list[str]]:
    """What ``/completions`` with ``echo`` says: is there such an endpoint, does it echo, does it add a start."""
    prompt = "The cat sat on the mat"
    st, data, text = _post(client, spec, "loglikelihood", "/completions",
                           {"prompt": prompt, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1})
    no = {"_worked": {"loglikelihood": False}}
    if st == 404:
        return {"completions": False, **no}, [f"/completions answered 404: {error_message(text)}"]
    if st != 200 and not refusal(st, text):
        return {**no, "_failed": [failure(st, text, f"{base_of(spec)}/completions")]}, []
    if st != 200:
        return {"completions": True, "echo": False, **no}, [f"/completions with echo answered {st}: "
                                                            f"{error_message(text)}"]
    lp = ((data.get("choices") or [{}])[0]).get("logprobs") or {}
    lp = lp if isinstance(lp, dict) else {}
    toks, lps = lp.get("tokens") or [], lp.get("token_logprobs") or []
    if len(toks) < 2 or not any(isinstance(x, (int, float)) and math.isfinite(x) for x in lps):
        return {"completions": True, "echo": False, **no}, ["/completions did not echo the prompt's log-probs"]
    adds = not prompt.startswith(str(toks[0]).lstrip("Ġ▁ ")[:1] or "\0")
    found = {"completions": True, "echo": True, "adds_document_start": adds, "_worked": {"loglikelihood": True}}
    st, data, _ = _post(client, spec, "loglikelihood", "/completions",
                        {"prompt": [prompt, prompt + " again"], "max_tokens": 1, "temperature": 0, "echo": True,
                         "logprobs": 1, "return_tokens_as_token_ids": True})
    choices = data.get("choices") or [] if st == 200 else []
    found["echo_ids"] = len(choices) == 2 and all(
        str(t).startswith("token_id:") for c in choices for t in (c.get("logprobs") or {}).get("tokens") or ["?"])
    return found, [f"echo: {len(toks)} tokens back, the first {toks[0]!r}; aligned by token ids: "
                   f"{'yes' if found['echo_ids'] else 'no (by token strings)'}"]


def _reply(data: dict) -> tuple[str, str, str]:
    """``(content, reasoning field, finish_reason)`` of a chat reply body."""
    c = (data.get("choices") or [{}])[0]
    m = c.get("message") or {}
    return str(m.get("content") or ""), str(m.get("reasoning_content") or m.get("reasoning") or ""), \
        str(c.get("finish_reason") or "")


SWITCHES = (("request", {"body": {"chat_template_kwargs": {"enable_thinking": False}}}),   # vLLM, SGLang
            ("reasoning_effort", "none"))                                                  # Ollama


def _with(spec: ModelSpec, field: str, value) -> ModelSpec:
    if field == "request":
        body = {**(spec.request or {}).get("body", {}), **value["body"]}
        return replace(spec, request={**(spec.request or {}), "body": body})
    return replace(spec, **{field: value})


def _thinks(client, spec: ModelSpec) -> bool | None:
    """Whether a short generation shaped as a sample carries thinking (None: the request failed)."""
    st, data, _ = _post(client, spec, "sample", "/chat/completions",
                        {"messages": PROMPT, "max_tokens": 24, "seed": 1, **SAMPLING})
    if st != 200:
        return None
    content, reasoning, _ = _reply(data)
    return has_thinking(content) or bool(reasoning.strip())


def probe_thinking(client, spec: ModelSpec) -> tuple[dict, list[str]]:
    """Whether samples come back without thinking, and which documented switch turns it off where they do not;
    then whether a chat reply's budget survives the model's reasoning. Found capabilities, plus ``_spec`` (top-level
    fields) and ``_request`` (shaping) for the printed block; notes."""
    found: dict = {"_worked": {}}
    thinks = _thinks(client, spec)
    notes = []
    if thinks is None:
        found["_worked"]["sample"] = False
        notes.append("the short generation was refused: thinking not probed")
    if thinks:
        notes.append("a short generation shaped as a sample carries thinking (<think> or a reasoning field)")
        found["_spec"], found["thinking_off"] = ({} if spec.thinking else {"thinking": True}), False
        for field, value in SWITCHES:
            if _thinks(client, _with(spec, field, value)) is False:
                spec, found["thinking_off"] = _with(spec, field, value), True
                notes.append(f"thinking goes away with {field}: {value}")
                if field == "request":
                    found["_request"] = {"body": spec.request["body"]}
                else:
                    found["_spec"][field] = value
                break
    st, data, text = _post(client, spec, "chat", "/chat/completions", {"messages": PROMPT, "max_tokens": 8, **JUDGE})
    found["_worked"]["chat"] = st == 200
    if st != 200:
        if refusal(st, text):
            notes.append(f"a chat reply was refused ({st}: {error_message(text)})")
        else:
            found["_failed"] = [failure(st, text, f"{base_of(spec)}/chat/completions")]
        return found, notes
    content, reasoning, finish = _reply(data)
    spent = int(((data.get("usage") or {}).get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    if (spent or (not content.strip() and finish == "length")) and not spec.reasoning_room:
        found.setdefault("_spec", {})["reasoning_room"] = ROOM
        notes.append(f"reasoning takes a chat reply's budget ({spent} reasoning tokens of 8; empty answer: "
                     f"{not content.strip()}): room for it is needed")
    elif has_thinking(content) and not spec.thinking:
        found.setdefault("_spec", {})["thinking"] = True
        notes.append("a chat reply carries <think>...</think>: `thinking: true` strips it")
    return found, notes


VERBS = ("sample", "chat", "choice", "loglikelihood")


def reachable(client, spec: ModelSpec) -> None:
    """``GET /models`` first: a port nobody listens on, a host that does not resolve, a server that does not
    answer in time or answers a web page stop the probe here, in one sentence (:func:`send`), before any
    finding. A non-200 (a server without the route, a refused key) is left to the chat probe to tell."""
    send(client, spec, "GET", "/models")


def probe(spec: ModelSpec, key: str = "") -> dict:
    """``{"server": {name, version}, "can": {...found}, "request": {...shaping it needs}, "spec": {top-level fields
    it needs: thinking, reasoning_effort, reasoning_room}, "worked": {verb: did its probe request succeed},
    "failed": [a request that failed without saying what the server can do], "notes": [...], "error": str}`` for
    a server spec. A server that gives no answer or one that is not an OpenAI-compatible API's raises
    :class:`~creval.models.http_replies.BadReply` (one sentence naming the URL and what came back)."""
    out: dict = {"server": {}, "can": {}, "request": {}, "spec": {}, "worked": {v: False for v in VERBS},
                 "failed": [], "notes": [], "error": ""}
    asked: dict[str, bool] = {}

    def keep(found: dict, notes: list[str], suffix: str = "") -> None:
        for v, ok in found.pop("_worked", {}).items():
            asked[v] = asked.get(v, True) and ok
        out["failed"] += found.pop("_failed", [])
        out["can"].update(found)
        out["notes"] += [f"{n}{suffix}" for n in notes]

    base = base_of(spec)
    try:
        with _client(spec, key) as client:
            reachable(client, spec)
            out["server"] = identify(client, base)
            for step in (probe_chat, probe_echo, probe_thinking):
                found, notes = step(client, spec)
                if "_request" in found:
                    more = found.pop("_request")
                    out["request"] = {**out["request"], **more}
                    spec = replace(spec, request={**(spec.request or {}), **more})    # later steps ask as learnt
                if "_spec" in found:
                    fields = found.pop("_spec")
                    out["spec"].update(fields)
                    spec = replace(spec, **fields)
                keep(found, notes)
            if out["can"].get("thinking_off") and (out["spec"] or out["request"]):
                found, notes = probe_chat(client, spec)         # thinking hid the log-probs: ask again without it
                found.pop("_request", None)
                asked.pop("choice", None)                       # the answer without thinking is the one that counts
                keep(found, notes, " (thinking off)")
    except CrevalError:
        raise
    except Exception as e:  # noqa: BLE001 - a reply the probe could not read: one sentence, not a traceback
        raise CrevalError(f"model {spec.name}: the probe of {base} stopped on a reply it could not read "
                          f"({type(e).__name__}: {e})",
                          "check that base_url points at an OpenAI-compatible API; `--no-probe` judges by the "
                          "spec alone") from None
    out["worked"].update({v: ok for v, ok in asked.items() if v in out["worked"]})
    return out
