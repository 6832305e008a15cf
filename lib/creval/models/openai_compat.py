"""OpenAI-compatible backend: OpenAI, vLLM, llama.cpp's server, Ollama, ... over HTTP.

Async with bounded concurrency (``spec.concurrency`` requests in flight), retry with exponential
backoff and jitter on 429, 5xx, timeouts and dropped connections (honouring ``Retry-After``), token
usage and cost from the server's ``usage``. Works inside Jupyter (the event loop runs in a worker
thread when one is already running).

Log-probs (``LOGPROB_KIND = "server"``): whatever the server reports per token. OpenAI and vLLM
(default settings) report the model's raw distribution; llama.cpp's server reports probabilities
after its sampler chain. The kind is recorded with each result so runs are never mixed silently.
``choice_logprobs`` reads the first token's ``top_logprobs`` (up to 20): a choice's score is the
log-prob of the best-matching first token (-inf when absent), an approximation for multi-token choices.
``loglikelihood`` needs a server that echoes the prompt's log-probs on ``/completions`` (``echo: true``,
``logprobs: 1``; llama.cpp's server started with ``--logits_all true``, vLLM; not OpenAI's chat models)
and fails with a clear error otherwise. The prompt is ``bos_text + context + text``, where ``bos_text``
comes from the spec's ``extra`` (e.g. ``{bos_text: "<|im_start|>"}``). Without it a text with no context
has its first token unscored (servers report no log-prob for the prompt's first token), counted in
``skipped_tokens``. Set it for llama-cpp-python's server: without a leading BOS its echoed log-probs
are off by one position.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import random
from typing import Sequence

import httpx

from creval.core.errors import CrevalError
from creval.models import endpoint
from creval.models.base import (
    ChatRequest,
    ChoiceRequest,
    ChoiceScores,
    Completion,
    LogLikelihood,
    LoglikelihoodRequest,
    ModelSpec,
    Sample,
    SampleRequest,
    derive_seed,
    split_thinking,
)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"


def host_of(url: str) -> str:
    return (httpx.URL(url).host or "").lower()


def api_key_for(spec: ModelSpec) -> str:
    """The key this spec may send, or "" for none. A key only goes to the host it belongs to:
    ``OPENAI_API_KEY`` only to api.openai.com (never to a custom ``base_url``); another host gets the
    spec's own ``api_key_env`` or no ``Authorization`` header at all."""
    hosts = {host_of(u) for u in (spec.urls or (OPENAI_URL,))}
    host = next(iter(hosts)) if len(hosts) == 1 else ",".join(sorted(hosts))
    env = spec.api_key_env or ("OPENAI_API_KEY" if host == OPENAI_HOST else "")
    if not env:
        return ""                                   # a local/custom server: send no key
    if env == "OPENAI_API_KEY" and host != OPENAI_HOST:
        raise CrevalError(f"model {spec.name}: the spec would send OPENAI_API_KEY to {host}, which is not OpenAI's "
                          "endpoint", "put that server's own key in another variable and name it in the spec "
                                      "(api_key_env: MY_SERVER_KEY), or drop api_key_env if it needs none")
    key = os.environ.get(env, "")
    if not key:
        raise CrevalError(f"model {spec.name} needs an API key in {env}, which is not set", f"export {env}=...")
    return key


def render_plain(messages: Sequence[dict]) -> str:
    """A chat as plain text, for ``api: completions`` endpoints (no chat template applied client-side)."""
    return "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in messages) + "\n\nASSISTANT:"


class OpenAIBackend:
    LOGPROB_KIND = "server"

    CONCURRENT = True          # requests go out together through the spec's shared budget (models/endpoint.py)

    def __init__(self, spec: ModelSpec, max_retries: int = 5, timeout: float = 120.0, backoff: float = 0.5):
        self.spec, self.timeout = spec, timeout
        self.max_retries = int(spec.extra.get("max_retries", max_retries))
        self.backoff = float(spec.extra.get("retry_backoff", backoff))     # seconds before the first retry
        self.urls = spec.urls or (OPENAI_URL,)
        self.base_url = self.urls[0]
        self.api_key = api_key_for(spec)
        self.version = spec.model
        self.quantisation = str(spec.extra.get("quantisation", ""))    # a server does not say; the spec may

    @classmethod
    def for_parsing(cls, spec: ModelSpec) -> "OpenAIBackend":
        """A backend that only parses replies (a batch file's answers): it needs no key and sends nothing."""
        self = cls.__new__(cls)
        self.spec, self.urls = spec, spec.urls or (OPENAI_URL,)
        self.base_url, self.api_key, self.version = self.urls[0], "", spec.model
        self.quantisation = str(spec.extra.get("quantisation", ""))
        return self

    # -- HTTP ---------------------------------------------------------------------------------
    def _endpoint(self):
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return endpoint.endpoint((self.spec.name, self.urls, self.api_key, self.spec.concurrency), self.urls, headers,
                                 self.spec.concurrency, self.timeout)

    async def _post(self, path: str, body: dict) -> dict:
        """One request through the spec's shared budget, retried on 429, 5xx, timeouts and dropped
        connections with exponential backoff and jitter (honouring ``Retry-After``)."""
        import httpx
        ep = self._endpoint()
        for attempt in range(self.max_retries + 1):
            try:
                r = await ep.post(path, body)
            except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
                err, wait = f"{type(e).__name__}", None
            except httpx.ConnectError:
                raise CrevalError(f"model {self.spec.name}: endpoint {self.base_url} is unreachable",
                                  "start the server or fix base_url in the model spec") from None
            else:
                if r.status_code == 200:
                    return r.json()
                if r.status_code in (401, 403):
                    raise CrevalError(f"model {self.spec.name}: the endpoint refused the API key ({r.status_code})",
                                      f"check {self.spec.api_key_env or 'OPENAI_API_KEY'}" if self.api_key else
                                      "this server wants a key: name its env var in the spec (api_key_env)")
                if r.status_code not in RETRY_STATUS:
                    raise CrevalError(f"model {self.spec.name}: {self.base_url}{path} answered {r.status_code}: "
                                      f"{r.text[:300]}", "check the model name and request parameters")
                err, wait = f"HTTP {r.status_code}", r.headers.get("retry-after")
            if attempt == self.max_retries:
                raise CrevalError(f"model {self.spec.name}: {self.base_url}{path} failed {attempt + 1} times "
                                  f"(last: {err})",
                                  "the server is overloaded or down; rerun later (finished calls are cached)")
            delay = float(wait) if wait and wait.replace(".", "").isdigit() else min(30.0, self.backoff * 2 ** attempt)
            await asyncio.sleep(delay * (1 + 0.25 * random.random()))
        raise AssertionError("unreachable")

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

    def _body(self, messages: Sequence[dict], **kw) -> tuple[str, dict]:
        body = {"model": self.spec.model, **{k: v for k, v in kw.items() if v is not None}}
        if self.spec.api == "completions":
            body["prompt"] = render_plain(messages)
            if "logprobs" in body:
                body["logprobs"] = max(1, body.pop("top_logprobs", 1))
            return "/completions", body
        body["messages"] = list(messages)
        return "/chat/completions", body

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
        return [self._body(req.messages, n=1, seed=derive_seed(req.seed, i), **kw) for i in indices]

    def chat_requests(self, reqs: Sequence[ChatRequest]) -> list[tuple[str, dict]]:
        return [self._body(r.messages, temperature=r.temperature, max_tokens=r.max_tokens, seed=r.seed) for r in reqs]

    def choice_requests(self, reqs: Sequence[ChoiceRequest]) -> list[tuple[str, dict]]:
        """A greedy reply as long as the longest choice (in characters: an upper bound on its tokens), with the
        top 20 alternatives at each step."""
        return [self._body(r.messages, temperature=0, max_tokens=max(1, max((len(c) for c in r.choices), default=1)),
                           logprobs=True, top_logprobs=20) for r in reqs]

    def loglikelihood_requests(self, reqs: Sequence[LoglikelihoodRequest]) -> list[tuple[str, dict]]:
        bos = str(self.spec.extra.get("bos_text", ""))
        return [("/completions", {"model": self.spec.model, "prompt": bos + (r.context or "") + r.text, "echo": True,
                                  "logprobs": 1, "max_tokens": 1, "temperature": 0}) for r in reqs]

    def parse_reply(self, kind: str, item, resp: dict):
        """The result of one request of ``kind`` for ``item`` (a ChatRequest, ChoiceRequest or
        LoglikelihoodRequest; for ``sample`` nothing) from the server's reply body."""
        if kind == "chat":
            return self._completion(resp)
        if kind == "sample":
            return self._sample(resp["choices"][0])
        if kind == "choice":
            return ChoiceScores(score_choices(_token_steps(resp["choices"][0]), item.choices),
                                int((resp.get("usage") or {}).get("prompt_tokens", 0)))
        if kind == "loglikelihood":
            if not item.text:
                return self._empty_text()
            return self._echoed(item, resp, str(self.spec.extra.get("bos_text", "")))
        raise ValueError(f"no reply parser for {kind!r}")

    def _sample(self, c: dict) -> Sample:
        lps = self._choice_logprobs(c)
        if not lps:
            raise CrevalError(f"model {self.spec.name}: the endpoint returned no log-probs",
                              "use a server that supports logprobs (llama.cpp: --logits_all true)")
        return Sample(self._text(c)[0], tuple(lps), c.get("finish_reason") or "stop")

    def sample(self, req: SampleRequest, indices: Sequence[int], done=None) -> list[Sample]:
        return self._gather(self.sample_requests(req, indices), lambda j, resp: self.parse_reply("sample", None, resp),
                            done)

    def _completion(self, r: dict) -> Completion:
        c, usage = r["choices"][0], r.get("usage") or {}
        text, reasoning = self._text(c)
        if self.spec.thinking and "<think>" in text:
            text, reasoning = split_thinking(text)
        details = usage.get("completion_tokens_details") or {}
        rt = int(details.get("reasoning_tokens") or (self.count_tokens(reasoning) if reasoning else 0))
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
                           "begin-of-text token in the spec: `extra: {bos_text: '<|im_start|>'}` or the like)")

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
            if "unreachable" in e.problem or "refused the API key" in e.problem or "does not support" in e.problem:
                raise
            raise self._unsupported(e.problem) from None
        return out

    def _echoed(self, r: LoglikelihoodRequest, resp: dict, bos: str) -> LogLikelihood:
        """The text's tokens and log-probs from an echoed completion (the generated token dropped)."""
        choice = (resp.get("choices") or [{}])[0]
        lp = choice.get("logprobs") or {}
        tokens, lps = lp.get("tokens"), lp.get("token_logprobs")
        if not tokens or not lps or len(tokens) != len(lps):
            raise self._unsupported("the reply has no token log-probs")
        n_gen = int((resp.get("usage") or {}).get("completion_tokens", 1))     # we asked for max_tokens=1
        tokens, lps = tokens[:len(tokens) - n_gen], lps[:len(lps) - n_gen]
        starts, pos = [], 0
        for t in tokens:
            starts.append(pos)
            pos += len(t)
        echoed = "".join(tokens)
        if r.text and not echoed.endswith(r.text):
            raise self._unsupported("the reply does not echo the prompt's tokens")
        boundary = len(echoed) - len(r.text)
        mine = [x for s, x in zip(starts, lps) if s >= boundary]
        scored = tuple(float(x) for x in mine if x is not None)
        context_tokens = sum(1 for s, t in zip(starts, tokens) if s < boundary and t != bos)
        return LogLikelihood(float(sum(scored)), scored, len(r.text.encode()), context_tokens if r.context else 0, 1,
                             len(mine) - len(scored), self.spec.name, self.quantisation, self.LOGPROB_KIND)

    def count_tokens(self, text: str) -> int:
        """No tokenizer client-side: about 4 characters a token (servers' ``usage`` is used for accounting)."""
        return max(1, round(len(text) / 4))


def _token_steps(choice: dict) -> list[tuple[str, float, dict[str, float]]]:
    """``(token, logprob, {alternative: logprob})`` for each generated token of a reply."""
    lp = choice.get("logprobs") or {}
    if isinstance(lp.get("content"), list):
        return [(t.get("token", ""), float(t.get("logprob", -math.inf)),
                 {a["token"]: float(a["logprob"]) for a in t.get("top_logprobs") or []}) for t in lp["content"]]
    toks, lps, tops = lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []
    return [(t, float(x if x is not None else -math.inf), {k: float(v) for k, v in (alt or {}).items()})
            for t, x, alt in zip(toks, lps, list(tops) + [{}] * (len(toks) - len(tops)))]


def score_choices(steps: list[tuple[str, float, dict[str, float]]], choices: Sequence[str]) -> dict[str, float]:
    """The log-prob of each choice as the start of a reply, from the greedy reply's token steps.

    Walk the reply: while a choice's text continues along the generated tokens, add their log-probs; at the
    first step where it parts from the reply, add the best alternative token (among the step's top ones)
    that continues it and stop (its later tokens are taken as certain); a choice that no listed token
    continues gets -inf. A choice the reply spells out whole gets its exact log-prob. Two choices sharing
    their first tokens are thus compared where they differ, not on the shared ``[[``."""
    out: dict[str, float] = {}
    where: dict[str, tuple[int, str]] = {}        # (step, token) that decided a choice cut short
    for c in choices:
        pos, total, score = 0, 0.0, -math.inf
        for step, (raw, lp, alts) in enumerate(steps):
            tok = raw.lstrip() if pos == 0 else raw         # a reply may open with a space
            rest = c[pos:]
            if tok and rest.startswith(tok):
                total += lp
                pos += len(tok)
                if pos >= len(c):
                    score = total
                    break
                continue
            if tok and tok.startswith(rest):             # the reply's token covers the rest of the choice
                score = total + lp
                break
            alt = {(a.lstrip() if pos == 0 else a): a_lp for a, a_lp in alts.items()}
            cont = {a: a_lp for a, a_lp in alt.items() if a and (rest.startswith(a) or a.startswith(rest))}
            if cont:
                best = max(cont, key=cont.get)
                score = total + cont[best]
                if len(best) < len(rest):
                    where[c] = (step, best)
            break
        out[c] = score
    # two choices cut short at the same step by the same token (the shared "[[") are not told apart: say so
    for c, w in where.items():
        if any(o != c and where.get(o) == w for o in where):
            out[c] = -math.inf
    return out
