"""A stand-in OpenAI-compatible server: fixed latency, a capacity, deterministic replies, and counters.

For benchmarks and tests of the study runner against "a GPU server" where there is none: every request holds one of
``capacity`` slots for ``latency`` seconds (more wait in a queue, as on vLLM), and the reply is a pure function of
the request (so a run at concurrency 1 and at 64 must give the same records). Replies carry the formats the judges
ask for (``[[YES]]``/``[[NO]]``, a ``[[0.7]]`` probability, a 1-5 score, a numbered list, a Python program reading
stdin), with token log-probs on request and echoed prompt log-probs on ``/completions`` (a reasoning or thinking
provider's thinking spends the budget first, and a reply whose budget it used up is empty with ``finish_reason:
"length"``, as OpenAI documents). ``GET /stats`` returns requests served, the most in flight, and the mean in
flight while the server had work; ``POST /reset`` zeroes them; ``fail`` makes the server answer 500 to requests
whose prompt contains a marker (a request that fails for good). ``behaviour`` names a provider the server imitates
(models/standin_providers.py: OpenAI's reasoning, chat-only and legacy completions models, quota and rate 429s,
Ollama, SGLang, llama.cpp's server); ``GET /version`` and the headers name the server.

Run: ``python -m creval.models.standin --port 8765 --latency 0.5 --capacity 64``.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import threading
import time
from pathlib import Path

from creval.models import standin_providers as providers


def _h(*parts) -> int:
    return int.from_bytes(hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()[:8], "big")


WORDS = ("paper clip", "rubber band", "lever", "mirror", "string", "tape", "magnet", "bottle", "candle", "wire",
         "stack", "bridge", "signal", "filter", "pulley", "wedge", "spring", "hook", "funnel", "sponge")


def reply_text(messages: list[dict] | str, index: int = 0, seed: int | None = None) -> str:
    """The deterministic reply to a prompt (sampled replies differ by ``index`` and ``seed``)."""
    prompt = messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
    h = _h(prompt, index, seed)
    w = [WORDS[(h >> (5 * k)) % len(WORDS)] for k in range(4)]
    if "python" in prompt.lower() and ("stdin" in prompt.lower() or "input" in prompt.lower()):
        return ("```python\nimport sys\ndata = sys.stdin.read().split()\n"
                f"print(len(data) % {2 + h % 5})\n```")
    verdict = "[[YES]]" if h % 3 else "[[NO]]"
    prob = 0.5 + (h % 50) / 100
    lines = [f"Use the {w[0]} with the {w[1]} to {w[2]} the {w[3]}.",
             f"Verdict: {verdict} Probability: [[{prob:.2f}]] Score: {1 + h % 5}"]
    n_items = 3 + h % 3
    lines += [f"{k + 1}. {WORDS[(h >> (3 * k + 1)) % len(WORDS)]} as a {WORDS[(h >> (3 * k + 2)) % len(WORDS)]}"
              for k in range(n_items)]
    return "\n".join(lines)


SPECIAL = re.compile(r"<\|?[a-z_]{1,20}\|?>")     # "<s>", "<|endoftext|>": one token each, as in a tokenizer


def _tokens(text: str) -> list[str]:
    """The stand-in's tokens: up to 4 characters, ending at a space or newline; special tokens whole."""
    out, cur, i = [], "", 0
    while i < len(text):
        m = SPECIAL.match(text, i)
        if m:
            out += [cur, m.group()] if cur else [m.group()]
            cur, i = "", m.end()
            continue
        cur += text[i]
        i += 1
        if cur[-1] in " \n" or len(cur) >= 4:
            out.append(cur)
            cur = ""
    return out + ([cur] if cur else [])


# the tokens listed beside each generated one: the answers the judges score (verdicts, A/B, Yes/No, 1-5, the NLI
# labels), so a choice set is scored (each choice at a prompt-dependent log-prob) rather than unparsed
ALTERNATIVES = ("[[", "YES", "NO", "]]", " ", "1", "A", "B", "Yes", "No", "entailment", "neutral", "contradiction",
                "2", "3", "4", "5")


def _lp(*parts) -> float:
    return -((_h(*parts) % 3000) / 1000.0) - 0.01


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests, self.in_flight, self.peak, self.failed, self.refused = 0, 0, 0, 0, 0
        self.busy_time, self.area, self._last = 0.0, 0.0, time.perf_counter()

    def _tick(self) -> None:
        now = time.perf_counter()
        if self.in_flight > 0:
            self.busy_time += now - self._last
            self.area += self.in_flight * (now - self._last)
        self._last = now

    def enter(self) -> None:
        self._tick()
        self.in_flight += 1
        self.requests += 1
        self.peak = max(self.peak, self.in_flight)

    def leave(self) -> None:
        self._tick()
        self.in_flight -= 1

    def as_dict(self) -> dict:
        self._tick()
        return {"requests": self.requests, "in_flight": self.in_flight, "peak_in_flight": self.peak,
                "failed": self.failed, "refused": self.refused,
                "busy_seconds": round(self.busy_time, 3),
                "mean_in_flight": round(self.area / self.busy_time, 3) if self.busy_time else 0.0}


def reply_choice(kind: str, body: dict, prompt, i: int, sampled: bool, seed, behaviour: str = "") -> tuple[dict, int]:
    """Choice ``i`` of the stand-in's answer to ``body`` (a chat or a text completion, with the log-probs asked
    for) and its number of completion tokens."""
    inline, field, spent = providers.thinking(behaviour, kind, body)
    text = inline + reply_text(prompt, i if sampled else 0, seed if sampled else None)
    budget = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
    spent = min(spent, budget)
    room = budget - spent
    toks = _tokens(text)[:max(0, room)]
    text = "".join(toks)
    c: dict = {"index": i, "finish_reason": "stop" if room > 0 else "length"}
    temp = float(body.get("temperature") or 0)

    def lp(*parts, shift=0.0):
        return providers.tempered(behaviour, _lp(*parts) - shift, temp)
    if kind == "chat":
        c["message"] = {"role": "assistant", "content": text, **({"reasoning": field} if field else {})}
        if body.get("logprobs"):
            k = int(body.get("top_logprobs") or 1)
            c["logprobs"] = {"content": [
                {"token": t, "logprob": lp(text, j, t),
                 "top_logprobs": [{"token": t, "logprob": lp(text, j, t)}] +
                                 [{"token": a, "logprob": lp(text, j, a, shift=1.0)}
                                  for a in ALTERNATIVES[:max(0, k - 1)] if a != t]}
                for j, t in enumerate(toks)]}
    else:
        if body.get("echo"):
            ptk = _tokens(str(prompt))
            allt = ptk + toks
            c["text"] = str(prompt) + text
            lps = [_lp(str(prompt)[:9], j, t) for j, t in enumerate(allt)]
            c["logprobs"] = {"tokens": providers.shown_tokens(behaviour, allt, body), "top_logprobs": None,
                             "token_logprobs": [None] + lps[1:]}
        else:
            c["text"] = text
            c["logprobs"] = {"tokens": toks, "token_logprobs": [lp(text, j, t) for j, t in enumerate(toks)]}
            k = int(body.get("logprobs") or 0)
            if k:                               # the legacy shape: a {token: logprob} map per step
                c["logprobs"]["top_logprobs"] = [
                    {t: lp(text, j, t), **{a: lp(text, j, a, shift=1.0) for a in ALTERNATIVES[:k - 1] if a != t}}
                    for j, t in enumerate(toks)]
    return c, len(toks) + spent


def answer(kind: str, body: dict, prompt, behaviour: str = "") -> dict:
    """The stand-in's reply body to a request (``n`` choices; a list of prompts on /completions: one each)."""
    n, seed = int(body.get("n") or 1), body.get("seed")
    sampled = float(body.get("temperature") or 0) > 0
    choices, ptoks, ctoks = [], len(_tokens(json.dumps(prompt))), 0
    prompts = prompt if kind == "text" and isinstance(prompt, list) else [prompt] * n
    for i, p in enumerate(prompts):
        c, k = reply_choice(kind, body, p, i, sampled, seed, behaviour)
        ctoks += k
        choices.append(c)
    more = providers.reasoning_usage(behaviour, kind, body) if choices else {}
    return {"id": "standin", "object": kind, "model": body.get("model", "standin"), "choices": choices,
            "usage": {"prompt_tokens": ptoks, "completion_tokens": ctoks, "total_tokens": ptoks + ctoks, **more}}


def make_app(latency: float = 0.5, capacity: int = 64, fail: str = "", behaviour: str = "", rate_first: int = 2):
    """A Starlette app (see the module doc); ``fail``: a marker whose requests always answer 500; ``behaviour``:
    a provider to imitate (:data:`creval.models.standin_providers.BEHAVIOURS`)."""
    if behaviour and behaviour not in providers.BEHAVIOURS:
        raise ValueError(f"unknown stand-in behaviour {behaviour!r}; one of {providers.BEHAVIOURS}")
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    stats = Stats()
    slots: dict = {}

    async def slot():
        if "sem" not in slots:
            slots["sem"] = asyncio.Semaphore(capacity)
        return slots["sem"]

    heads = providers.headers_of(behaviour)
    seen = {"n": 0}

    async def serve(body: dict, kind: str) -> JSONResponse:
        served, seen["n"] = seen["n"], seen["n"] + 1
        refused = providers.refusal(behaviour, kind, body, served, rate_first)
        if refused is not None:
            status, err, extra = refused
            stats.refused += 1
            return JSONResponse(err, status_code=status, headers={**heads, **extra})
        body = providers.accepted(behaviour, body)
        sem = await slot()
        async with sem:
            stats.enter()
            try:
                await asyncio.sleep(latency)
            finally:
                stats.leave()
        prompt = body.get("messages") if kind == "chat" else body.get("prompt", "")
        if fail and fail in json.dumps(prompt):
            stats.failed += 1
            return JSONResponse({"error": "stand-in: this request always fails"}, status_code=500)
        return JSONResponse(answer(kind, body, prompt, behaviour), headers=heads)

    async def chat(req: Request):
        return await serve(await req.json(), "chat")

    async def completions(req: Request):
        return await serve(await req.json(), "text")

    async def get_stats(req: Request):
        return JSONResponse(stats.as_dict())

    async def reset(req: Request):
        stats.reset()
        return JSONResponse({"ok": True})

    async def models(req: Request):
        return JSONResponse({"data": [{"id": "standin", "object": "model"}]}, headers=heads)

    async def version(req: Request):
        status, body = providers.version_reply(behaviour, req.url.path)
        return JSONResponse(body, status_code=status, headers=heads)

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                            Route("/v1/completions", completions, methods=["POST"]),
                            Route("/v1/models", models), Route("/stats", get_stats),
                            Route("/version", version), Route("/api/version", version),
                            Route("/reset", reset, methods=["POST"])])
    app.state.stats = stats
    return app


class StandIn:
    """The stand-in in a background thread: ``with StandIn(latency=0.5, capacity=64) as s: s.url``."""

    def __init__(self, latency: float = 0.5, capacity: int = 64, fail: str = "", port: int = 0, behaviour: str = "",
                 rate_first: int = 2):
        import socket
        self.latency, self.capacity, self.fail = latency, capacity, fail
        self.behaviour, self.rate_first = behaviour, rate_first
        if not port:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1"

    def __enter__(self) -> "StandIn":
        import uvicorn
        self.app = make_app(self.latency, self.capacity, self.fail, self.behaviour, self.rate_first)
        cfg = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error", access_log=False,
                             backlog=4096, limit_concurrency=None)
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("the stand-in server did not start")
            time.sleep(0.02)
        return self

    @property
    def stats(self) -> dict:
        return self.app.state.stats.as_dict()

    def reset(self) -> None:
        self.app.state.stats.reset()

    def spec_yaml(self, name: str = "standin", concurrency: int = 64, served: str = "standin", **extra) -> str:
        """A model spec pointing at this server, asking for the model ``served`` (the stand-in answers any
        name; a name of its own keeps a model's requests apart) (``extra``: e.g. ``max_retries=1``)."""
        ex = ", ".join(f"{k}: {json.dumps(v)}" for k, v in {"bos_text": "", **extra}.items())
        return (f"name: {name}\nbackend: openai\nmodel: {served}\nbase_url: {self.url}\nconcurrency: {concurrency}\n"
                f"context: 4096\nextra: {{{ex}}}\n")

    def spec_file(self, folder: str | Path, name: str, concurrency: int = 64, tag: str = "", **extra) -> str:
        """The path of a spec file written to ``folder`` for a model ``name`` served as itself; ``tag`` (an
        extra field) changes the spec's identity alone: a fresh cache entry, the same records."""
        path = Path(folder) / (f"{name}-{tag}.yaml" if tag else f"{name}.yaml")
        path.write_text(self.spec_yaml(name, concurrency, served=name, **({"tag": tag} if tag else {}), **extra))
        return str(path)

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--capacity", type=int, default=64)
    ap.add_argument("--fail", default="", help="answer 500 to requests whose prompt contains this marker")
    ap.add_argument("--behaviour", default="", choices=("", *providers.BEHAVIOURS),
                    help="imitate a provider (see creval.models.standin_providers)")
    a = ap.parse_args(argv)
    import uvicorn
    uvicorn.run(make_app(a.latency, a.capacity, a.fail, a.behaviour), host="127.0.0.1", port=a.port,
                log_level="warning", backlog=4096)


if __name__ == "__main__":
    main()
