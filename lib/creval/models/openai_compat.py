"""OpenAI-compatible backend: OpenAI, vLLM, llama.cpp's server, Ollama, SGLang, ... over HTTP.

Async with bounded concurrency (``spec.concurrency`` requests in flight, models/endpoint.py), retried on 429, 5xx,
timeouts and dropped connections for up to about two minutes of waiting (``Retry-After`` in every form honoured;
an empty account's 429 and a server's permanent refusal stop at once with the server's reason: models/retry.py),
token usage and cost from the server's ``usage``. Works inside Jupyter (the event loop runs in a worker thread).

Each request body is shaped by the spec (``request:``: extra body fields, the token-limit field's name, refused
parameters, the timeout; models/shaping.py), and a thinking model's thinking is switched off for samples and
choice scores. What the server can do is the spec's ``can:`` (models/capabilities.py, filled by ``creval check``):
a verb it cannot do fails before any call with one sentence.

Log-probs: ``LOGPROB_KIND`` is what the spec says (``raw``/``processed``/``none``), else ``server`` (unknown),
recorded with each result so runs are never mixed silently. ``choice_logprobs`` reads the greedy reply's top
alternatives (models/choices.py). ``loglikelihood`` needs a server that echoes the prompt's log-probs on
``/completions`` (``echo: true``, ``logprobs: 1``; vLLM; llama-cpp-python's server with ``--logits_all true``;
not OpenAI's chat models, not llama.cpp's C++ ``llama-server``). The prompt is ``document_start + context +
text``: ``document_start`` (the spec's; the old ``extra: {bos_text: ...}`` still read) is sent only where the server
adds no start of its own (``can: {adds_document_start: false}`` or not known). Without one, a text with no context
has its first token unscored (servers report no log-prob for a prompt's first token), counted in
``skipped_tokens``. The text's tokens are found by token ids where the server allows (``can: {echo_ids: true}``,
vLLM), else by the echoed token strings (models/echo.py).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Sequence

import httpx

from creval.core.errors import CrevalError
from creval.models import capabilities, echo, endpoint, replies, retry, shaping
from creval.models.backends import backend_info
from creval.models.base import BackendBase
from creval.models.choices import score_choices
from creval.models.choices import token_steps as _token_steps
from creval.models.http_replies import BadReply, came_back, reply_json, unreachable
from creval.models.reach import api_key_for, check_server, endpoints
from creval.models.records import ChoiceScores, Completion, LogLikelihood, Sample
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest, SampleRequest, derive_seed
from creval.models.spec import ModelSpec

RETRY_STATUS = retry.RETRY_STATUS


def render_plain(messages: Sequence[dict]) -> str:
    """A chat as plain text, for ``api: completions`` endpoints (no chat template applied client-side)."""
    return "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in messages) + "\n\nASSISTANT:"


class OpenAIBackend(BackendBase):
    check = staticmethod(check_server)   # is a spec of this backend usable here (nothing loaded)
    LOGPROB_KIND = "server"    # the class's default; each instance's is its spec's (logprob_kind_for)
    CONCURRENT = backend_info("openai").server   # a server (its one declaration): requests go out together through
                                                 # the spec's shared budget (models/endpoint.py)

    @classmethod
    def logprob_kind_for(cls, spec: ModelSpec) -> str:
        return capabilities.logprob_kind(spec)

    def __init__(self, spec: ModelSpec, max_retries: int = 8, timeout: float | None = None, backoff: float = 0.5):
        self._setup(spec)
        self.timeout = shaping.timeout(spec) if timeout is None else timeout
        self.max_retries = int(spec.extra.get("max_retries", max_retries))
        self.backoff = float(spec.extra.get("retry_backoff", backoff))     # seconds before the first retry
        self.window = float(spec.extra.get("retry_window", retry.RETRY_WINDOW))   # seconds of waiting at most
        self.api_key = api_key_for(spec)

    def _setup(self, spec: ModelSpec) -> None:
        shaping.settings(spec)                      # a wrong `request:` is an error before any call
        replies.checked_effort(spec)
        self.spec, self.urls = spec, endpoints(spec)
        self.base_url, self.version = self.urls[0], spec.model
        self.LOGPROB_KIND = capabilities.logprob_kind(spec)
        self.quantisation = str(spec.extra.get("quantisation", ""))    # a server does not say; the spec may

    @classmethod
    def for_parsing(cls, spec: ModelSpec) -> "OpenAIBackend":
        """A backend that only parses replies (a batch file's answers): it needs no key and sends nothing."""
        self = cls.__new__(cls)
        self._setup(spec)
        self.api_key = ""
        return self

    # -- HTTP ---------------------------------------------------------------------------------
    def _endpoint(self):
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return endpoint.endpoint((self.spec.name, self.urls, self.api_key, self.spec.concurrency), self.urls, headers,
                                 self.spec.concurrency, self.timeout)

    async def _post(self, path: str, body: dict) -> dict:
        """One request through the spec's shared budget, retried on 429, 5xx, timeouts and dropped connections
        (models/retry.py: the wait the server asks for, else exponential backoff with jitter) until
        ``max_retries`` retries or ``window`` seconds of waiting; an empty account, a refused key and a
        permanent refusal stop at once, each with the server's reason."""
        ep, waited = self._endpoint(), 0.0
        for attempt in range(self.max_retries + 1):
            try:
                r = await ep.post(path, body)
            except httpx.TimeoutException:
                err, wait = (f"no reply within {self.timeout:g} s (a queueing server such as vLLM may need a longer "
                             "`request: {timeout: ...}` in the spec)"), None
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                err, wait = f"{type(e).__name__}", None        # a dropped connection: asking again can help
            except httpx.HTTPError as e:                          # refused, no DNS, a bad URL: asking again cannot
                raise unreachable(e, f"{self.base_url}{path}", f"model {self.spec.name}") from None
            else:
                if r.status_code == 200:
                    return reply_json(r, str(r.request.url), f"model {self.spec.name}")
                self._stop_for(r, path)
                err, wait = self._said(r), retry.retry_after(r.headers)
            delay = retry.backoff(attempt, self.backoff, wait)
            if attempt == self.max_retries or waited + delay > self.window:
                raise CrevalError(f"model {self.spec.name}: {self.base_url}{path} failed {attempt + 1} times over "
                                  f"{waited:.0f} s of waiting (last: {err})",
                                  "the provider's rate limit held: lower `concurrency` in the spec or rerun later "
                                  "(finished calls are cached)" if err.startswith("HTTP 429") else
                                  "the server is overloaded or down; rerun later (finished calls are cached)")
            waited += delay
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    @staticmethod
    def _said(r) -> str:
        """A failed reply for a sentence: the server's error message where its body is JSON, else what came back
        (status, content type, first bytes: a proxy's HTML page is not an error message)."""
        try:
            r.json()
        except ValueError:
            return came_back(r)
        return f"HTTP {r.status_code}: {retry.error_message(r.text)}"

    def _stop_for(self, r, path: str) -> None:
        """Raise the one sentence for a reply that must not be retried; return for one that may be."""
        what, msg = retry.classify(r.status_code, r.text), retry.error_message(r.text)
        if r.status_code in (401, 403):
            raise CrevalError(f"model {self.spec.name}: the endpoint refused the API key ({r.status_code}: {msg})",
                              f"check {self.spec.api_key_env or 'OPENAI_API_KEY'}" if self.api_key else
                              "this server wants a key: name its env var in the spec (api_key_env)")
        if what == "quota":
            raise CrevalError(f"model {self.spec.name}: the account has no quota left (429 insufficient_quota: "
                              f"{msg})", "add credit or raise the spending limit with the provider, then rerun "
                                         "(finished calls are cached); waiting will not help")
        if what == "refused":
            raise CrevalError(f"model {self.spec.name}: the server refused {path} for good ({r.status_code}: {msg})",
                              "this server does not support that request: see `creval check` for what it can do")
        if what == "fail":
            raise CrevalError(f"model {self.spec.name}: {self.base_url}{path} answered {self._said(r)}",
                              "check the model name and the spec's request shaping (request: drop / token_limit; "
                              "`creval check` probes what the model accepts)")

    def _gather(self, jobs: list[tuple[str, dict]], parse=lambda j, resp: resp, done=None) -> list:
        """Send every job at once through the shared budget; ``parse(j, response)`` each reply and hand it to
        ``done(j, result)`` as it arrives. When some fail for good, the others still finish (and reach
        ``done``) before the first failure is raised."""
        futs = {endpoint.submit(self._post(p, b)): j for j, (p, b) in enumerate(jobs)}
        out: list = [None] * len(jobs)
        errors: list[tuple[int, BaseException]] = []
        for f in concurrent.futures.as_completed(futs):
            j = futs[f]
            try:
                out[j] = parse(j, f.result())
            except Exception as e:  # noqa: BLE001 - raised below, after the others are kept
                errors.append((j, e))
                continue
            if done is not None:
                done(j, out[j])
        if errors:
            raise min(errors, key=lambda x: x[0])[1]
        return out

    def _body(self, verb: str, messages: Sequence[dict], **kw) -> tuple[str, dict]:
        """The path and shaped body (models/shaping.py) of one ``verb`` request; a verb the spec says the model
        cannot do is refused here, before any call (models/capabilities.py)."""
        capabilities.require(self.spec, verb)
        self._fits(messages)
        body = {"model": self.spec.model, **{k: v for k, v in kw.items() if v is not None}}
        if self.spec.api == "completions":
            body["prompt"] = render_plain(messages)
            if "logprobs" in body:
                body["logprobs"] = max(1, body.pop("top_logprobs", 1))
            path = "/completions"
        else:
            body["messages"] = list(messages)
            path = "/chat/completions"
        return path, shaping.shape(self.spec, verb, path, body)

    def _fits(self, messages: Sequence[dict]) -> None:
        """Refuse a prompt that would not fit a server that truncates silently (Ollama drops the oldest messages
        beyond its context, servers.md 2.4; ``can: {truncates: true}``), rather than score what it kept."""
        if not (self.spec.can or {}).get("truncates"):
            return
        n = self.count_tokens("".join(str(m.get("content", "")) for m in messages))
        if n > self.spec.context:
            raise CrevalError(f"model {self.spec.name}: a prompt of about {n} tokens does not fit its context of "
                              f"{self.spec.context} tokens, and its server drops what does not fit without a word",
                              "raise the server's context (Ollama: num_ctx in a Modelfile or OLLAMA_CONTEXT_LENGTH) "
                              "and the spec's `context:` with it")

    # -- parsing ------------------------------------------------------------------------------
    @staticmethod
    def _choice_logprobs(choice: dict) -> list[float]:
        lp = choice.get("logprobs") or {}
        if isinstance(lp.get("content"), list):
            return [float(t["logprob"]) for t in lp["content"]]
        return [float(x) for x in lp.get("token_logprobs") or [] if x is not None]

    @staticmethod
    def _text(choice: dict) -> tuple[str, str]:
        if "message" in choice:
            m = choice["message"]
            return m.get("content") or "", m.get("reasoning_content") or m.get("reasoning") or ""
        return choice.get("text", ""), ""

    # -- protocol -----------------------------------------------------------------------------
    # Each verb is requests (``*_requests``: the HTTP path and body of each item, also what a batch file holds),
    # a parser (``parse_reply``) and ``done(j, result)``, called as request ``j``'s result arrives (the cache
    # stores it then).
    def sample_requests(self, req: SampleRequest, indices: Sequence[int]) -> list[tuple[str, dict]]:
        """One request per sample, seeded from ``(req.seed, index)``: sample ``i`` is the same whether 10 or 20
        are drawn, live or through a batch file."""
        kw = dict(temperature=req.temperature, top_p=req.top_p, max_tokens=req.max_tokens,
                  stop=list(req.stop) or None, logprobs=True, top_logprobs=1)
        return [self._body("sample", req.messages, n=1, seed=derive_seed(req.seed, i), **kw) for i in indices]

    def chat_requests(self, reqs: Sequence[ChatRequest]) -> list[tuple[str, dict]]:
        return [self._body("chat", r.messages, temperature=r.temperature, max_tokens=r.max_tokens, seed=r.seed)
                for r in reqs]

    def choice_requests(self, reqs: Sequence[ChoiceRequest]) -> list[tuple[str, dict]]:
        """A greedy reply as long as the longest choice (in characters: an upper bound on its tokens), with the
        top 20 alternatives at each step."""
        return [self._body("choice", r.messages, temperature=0,
                           max_tokens=max(1, max((len(c) for c in r.choices), default=1)), logprobs=True,
                           top_logprobs=20) for r in reqs]

    def document_start(self) -> str:
        """The text sent before every scored prompt: the spec's ``document_start`` (or the old ``extra.bos_text``),
        unless the spec says the server adds its own start (``can: {adds_document_start: true}``)."""
        if (self.spec.can or {}).get("adds_document_start") is True:
            return ""
        return self.spec.document_start or str(self.spec.extra.get("bos_text", ""))

    def loglikelihood_requests(self, reqs: Sequence[LoglikelihoodRequest]) -> list[tuple[str, dict]]:
        capabilities.require(self.spec, "loglikelihood")
        start = self.document_start()
        ids = bool((self.spec.can or {}).get("echo_ids"))
        return [("/completions", shaping.shape(self.spec, "loglikelihood", "/completions", echo.request(
            self.spec.model, start + (r.context or ""), r.text, ids))) for r in reqs]

    def parse_reply(self, kind: str, item, resp: dict):
        """The result of one request of ``kind`` for ``item`` (a ChatRequest, ChoiceRequest or
        LoglikelihoodRequest; for ``sample`` nothing) from the server's reply body."""
        if kind == "chat":
            return self._completion(resp, getattr(item, "max_tokens", None))
        if kind == "sample":
            return self._sample(resp["choices"][0])
        if kind == "choice":
            steps = _token_steps(resp["choices"][0])
            replies.checked_choice(self.spec, "".join(t for t, _, _ in steps) or self._text(resp["choices"][0])[0])
            return ChoiceScores(score_choices(steps, item.choices),
                                int((resp.get("usage") or {}).get("prompt_tokens", 0)))
        if kind == "loglikelihood":
            if not item.text:
                return self._empty_text()
            return self._echoed(item, resp, self.document_start())
        raise ValueError(f"no reply parser for {kind!r}")

    def _sample(self, c: dict) -> Sample:
        """A sample and its token log-probs; an empty reply is a valid empty sample, a reply with text and no
        log-probs is an error (Ollama before 0.12.11 and some proxies drop the field silently)."""
        (text, reasoning), lps = self._text(c), self._choice_logprobs(c)
        replies.checked_sample(self.spec, text, reasoning)
        if not lps and text:
            raise CrevalError(f"model {self.spec.name}: the server returned a sample without its token log-probs "
                              "(the field was ignored or dropped)",
                              "use a server that returns logprobs (Ollama >= 0.12.11, vLLM, llama.cpp), and say "
                              "`can: {logprobs: none}` in this spec so that `creval check` and the studies know")
        return Sample(text, tuple(lps), c.get("finish_reason") or "stop")

    def sample(self, req: SampleRequest, indices: Sequence[int], done=None) -> list[Sample]:
        return self._gather(self.sample_requests(req, indices), lambda j, resp: self.parse_reply("sample", None, resp),
                            done)

    def _completion(self, r: dict, budget: int | None = None) -> Completion:
        """A chat reply checked before it is recorded (models/replies.py): thinking stripped by the spec's rule or
        refused, an empty answer whose ``budget`` ran out refused with the fix."""
        c, usage = r["choices"][0], r.get("usage") or {}
        text, reasoning = self._text(c)
        details = usage.get("completion_tokens_details") or {}
        said = int(details.get("reasoning_tokens") or 0)
        text, reasoning = replies.checked_chat(self.spec, text, reasoning, c.get("finish_reason") or "stop", budget,
                                               said)
        rt = int(said or (self.count_tokens(reasoning) if reasoning else 0))
        return Completion(text.strip(), int(usage.get("prompt_tokens", 0)),
                          int(usage.get("completion_tokens", 0)) - rt, reasoning, rt, c.get("finish_reason") or "stop")

    def chat(self, reqs: Sequence[ChatRequest], done=None) -> list[Completion]:
        return self._gather(self.chat_requests(reqs), lambda j, resp: self.parse_reply("chat", reqs[j], resp), done)

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest], done=None) -> list[ChoiceScores]:
        """Each choice scored along the greedy reply's tokens (:func:`score_choices`): exact up to the first
        token where a choice leaves the reply, that token's log-prob from the top 20; -inf where it is not
        among them. Choices sharing leading tokens (``[[YES]]``/``[[NO]]``) are told apart where they part."""
        return self._gather(self.choice_requests(reqs), lambda j, resp: self.parse_reply("choice", reqs[j], resp), done)

    def _empty_text(self) -> LogLikelihood:
        return LogLikelihood(0.0, (), 0, 0, 1, 0, self.spec.name, self.quantisation, self.LOGPROB_KIND)

    def _unsupported(self, why: str) -> CrevalError:
        return CrevalError(f"model {self.spec.name}: the server at {self.base_url} does not support echoed log-probs "
                           f"({why}), which log-likelihoods need",
                           "use a llamacpp or hf model for log-likelihoods, or a server that echoes prompt log-probs "
                           "on /completions (vLLM; llama-cpp-python's server with --logits_all true and the model's "
                           "document-start text in the spec, `document_start: '<|im_start|>'` or the like; "
                           "`creval check` says which)")

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest], done=None) -> list[LogLikelihood]:
        todo = [j for j, r in enumerate(reqs) if r.text]
        out: list = [None] * len(reqs)
        for j, r in enumerate(reqs):
            if not r.text:
                out[j] = self._empty_text()
                if done is not None:
                    done(j, out[j])
        bodies = self.loglikelihood_requests([reqs[j] for j in todo])

        def got(k, ll):
            out[todo[k]] = ll
            if done is not None:
                done(todo[k], ll)
        try:
            if bodies:
                self._gather(bodies, lambda k, resp: self.parse_reply("loglikelihood", reqs[todo[k]], resp), got)
        except CrevalError as e:
            if isinstance(e, BadReply) or any(w in e.problem for w in ("unreachable", "refused the API key",
                                                                        "does not support", "no quota", "cannot do")):
                raise
            raise self._unsupported(e.problem) from None
        return out

    def _echoed(self, r: LoglikelihoodRequest, resp: dict, start: str) -> LogLikelihood:
        """The text's tokens and log-probs from an echoed completion (models/echo.py)."""
        lp = ((resp.get("choices") or [{}])[0]).get("logprobs") or {}
        if not lp.get("tokens") or not lp.get("token_logprobs"):
            raise self._unsupported("the reply has no token log-probs")
        try:
            scored, context_tokens, skipped = echo.text_logprobs(
                r, resp, start, bool((self.spec.can or {}).get("adds_document_start")))
        except ValueError as e:
            raise self._unsupported(str(e)) from None
        return LogLikelihood(float(sum(scored)), scored, len(r.text.encode()), context_tokens, 1, skipped,
                             self.spec.name, self.quantisation, self.LOGPROB_KIND)

    def count_tokens(self, text: str) -> int:
        """No tokenizer client-side: about 4 characters a token (servers' ``usage`` is used for accounting)."""
        return max(1, round(len(text) / 4))

