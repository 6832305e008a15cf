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
from typing import Any, Sequence

import httpx

from creval.core.errors import CrevalError
from creval.models.base import (ChatRequest, ChoiceRequest, ChoiceScores, Completion, LogLikelihood, LoglikelihoodRequest,
                                ModelSpec, Sample, SampleRequest, derive_seed, split_thinking)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"


def host_of(url: str) -> str:
    return (httpx.URL(url).host or "").lower()


def api_key_for(spec: ModelSpec) -> str:
    """The key this spec may send, or "" for none. A key only goes to the host it belongs to:
    ``OPENAI_API_KEY`` only to api.openai.com (never to a custom ``base_url``); another host gets the
    spec's own ``api_key_env`` or no ``Authorization`` header at all."""
    host = host_of(spec.base_url or OPENAI_URL)
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


def run_sync(coro):
    """Run a coroutine to completion from sync code, also when an event loop is already running (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, coro).result()


def render_plain(messages: Sequence[dict]) -> str:
    """A chat as plain text, for ``api: completions`` endpoints (no chat template applied client-side)."""
    return "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in messages) + "\n\nASSISTANT:"


class OpenAIBackend:
    LOGPROB_KIND = "server"

    def __init__(self, spec: ModelSpec, max_retries: int = 5, timeout: float = 120.0):
        self.spec, self.max_retries, self.timeout = spec, max_retries, timeout
        self.base_url = (spec.base_url or OPENAI_URL).rstrip("/")
        self.api_key = api_key_for(spec)
        self.version = spec.model
        self.quantisation = str(spec.extra.get("quantisation", ""))    # a server does not say; the spec may

    # -- HTTP ---------------------------------------------------------------------------------
    async def _post(self, client: httpx.AsyncClient, sem: asyncio.Semaphore, path: str, body: dict) -> dict:
        url = f"{self.base_url}{path}"
        for attempt in range(self.max_retries + 1):
            async with sem:
                try:
                    r = await client.post(url, json=body)
                except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError) as e:
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
                                          f"this server wants a key: name its env var in the spec (api_key_env)")
                    if r.status_code not in RETRY_STATUS:
                        raise CrevalError(f"model {self.spec.name}: {url} answered {r.status_code}: {r.text[:300]}",
                                          "check the model name and request parameters")
                    err, wait = f"HTTP {r.status_code}", r.headers.get("retry-after")
            if attempt == self.max_retries:
                raise CrevalError(f"model {self.spec.name}: {url} failed {attempt + 1} times (last: {err})",
                                  "the server is overloaded or down; rerun later (finished calls are cached)")
            delay = float(wait) if wait and wait.replace(".", "").isdigit() else min(30.0, 0.5 * 2 ** attempt)
            await asyncio.sleep(delay * (1 + 0.25 * random.random()))
        raise AssertionError("unreachable")

    def _gather(self, jobs: list[tuple[str, dict]]) -> list[dict]:
        async def go():
            sem = asyncio.Semaphore(max(1, self.spec.concurrency))
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            # no redirects followed: a key is never re-sent to wherever a server points
            async with httpx.AsyncClient(timeout=self.timeout, headers=headers, follow_redirects=False) as client:
                return await asyncio.gather(*(self._post(client, sem, p, b) for p, b in jobs))
        return run_sync(go())

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
    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        """Ask for all samples with ``n``; servers that return fewer get one request per missing index."""
        kw = dict(temperature=req.temperature, top_p=req.top_p, max_tokens=req.max_tokens,
                  stop=list(req.stop) or None, logprobs=True, top_logprobs=1)
        first = self._gather([self._body(req.messages, n=len(indices), seed=derive_seed(req.seed, indices[0]), **kw)])[0]
        choices = first.get("choices", [])[:len(indices)]
        rest = indices[len(choices):]
        if rest:
            more = self._gather([self._body(req.messages, n=1, seed=derive_seed(req.seed, i), **kw) for i in rest])
            choices += [m["choices"][0] for m in more]
        out = []
        for c in choices:
            lps = self._choice_logprobs(c)
            if not lps:
                raise CrevalError(f"model {self.spec.name}: the endpoint returned no log-probs",
                                  "use a server that supports logprobs (llama.cpp: --logits_all true)")
            text, _ = self._text(c)
            out.append(Sample(text, tuple(lps), c.get("finish_reason") or "stop"))
        return out

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        res = self._gather([self._body(r.messages, temperature=r.temperature, max_tokens=r.max_tokens, seed=r.seed)
                            for r in reqs])
        out = []
        for r in res:
            c, usage = r["choices"][0], r.get("usage") or {}
            text, reasoning = self._text(c)
            if self.spec.thinking and "<think>" in text:
                text, reasoning = split_thinking(text)
            details = usage.get("completion_tokens_details") or {}
            rt = int(details.get("reasoning_tokens") or (self.count_tokens(reasoning) if reasoning else 0))
            out.append(Completion(text.strip(), int(usage.get("prompt_tokens", 0)),
                                  int(usage.get("completion_tokens", 0)) - rt, reasoning, rt, c.get("finish_reason") or "stop"))
        return out

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        res = self._gather([self._body(r.messages, temperature=0, max_tokens=1, logprobs=True, top_logprobs=20)
                            for r in reqs])
        out = []
        for r, resp in zip(reqs, res):
            top = _top_alternatives(resp["choices"][0])
            scores: dict[str, float] = {}
            for c in r.choices:
                matches = [lp for tok, lp in top.items() if tok.strip() and (c.startswith(tok.strip()) or tok.strip().startswith(c))]
                scores[c] = max(matches) if matches else -math.inf
            out.append(ChoiceScores(scores, int((resp.get("usage") or {}).get("prompt_tokens", 0))))
        return out

    def _unsupported(self, why: str) -> CrevalError:
        return CrevalError(f"model {self.spec.name}: the server at {self.base_url} does not support echoed log-probs "
                           f"({why}), which log-likelihoods need",
                           "use a llamacpp or hf model for log-likelihoods, or a server that echoes prompt log-probs "
                           "on /completions (vLLM; llama-cpp-python's server with --logits_all true and the model's "
                           "begin-of-text token in the spec: `extra: {bos_text: '<|im_start|>'}` or the like)")

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        bos = str(self.spec.extra.get("bos_text", ""))
        todo = [r for r in reqs if r.text]
        bodies = [("/completions", {"model": self.spec.model, "prompt": bos + (r.context or "") + r.text, "echo": True,
                                    "logprobs": 1, "max_tokens": 1, "temperature": 0}) for r in todo]
        try:
            res = iter(self._gather(bodies) if bodies else [])
        except CrevalError as e:
            if "unreachable" in e.problem or "refused the API key" in e.problem:
                raise
            raise self._unsupported(e.problem) from None
        return [self._echoed(r, next(res), bos) if r.text else
                LogLikelihood(0.0, (), 0, 0, 1, 0, self.spec.name, self.quantisation, self.LOGPROB_KIND) for r in reqs]

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


def _top_alternatives(choice: dict) -> dict[str, float]:
    lp = choice.get("logprobs") or {}
    if isinstance(lp.get("content"), list) and lp["content"]:
        return {t["token"]: float(t["logprob"]) for t in lp["content"][0].get("top_logprobs", [])}
    tops: Any = lp.get("top_logprobs") or [{}]
    return {k: float(v) for k, v in (tops[0] or {}).items()}
