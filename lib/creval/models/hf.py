"""Hugging Face transformers backend: any causal LM by Hub id or local path (GPU if available).

On CUDA, ``sample`` and ``chat`` batches generate through transformers' continuous-batching engine
(:mod:`creval.models.hf_cb`: what it gives and does not, per-request seeds among them); elsewhere, and for scoring
everywhere, through the padded batches described here (``CREVAL_HF_ENGINE`` chooses).

Requests from every unit in flight are gathered while the model is busy (:mod:`creval.models.gather`) and run as one
padded batch per verb and settings: ``sample`` and ``chat`` rows decode together (left padding; each row ends at its
own end-of-sequence token and stop strings; a batch holds the requests of one temperature, top-p and token limit),
``choice_logprobs`` and ``loglikelihood`` rows share forward passes. The decode loop is our own
(:mod:`creval.models.hf_decode`): one forward per token for the whole batch with the KV cache, the log-prob of the
chosen token only (not the whole vocabulary kept at every step), no host sync per token, and per-row seeded
sampling, so sample ``i`` of a request draws the same stream whatever shares its batch (up to float rounding of
padded rows). Log-probs (``LOGPROB_KIND = "raw"``) are the log-softmax of the unscaled logits. Offline, a GGUF file
loads through ``gguf_file=`` (dequantised: ``quantisation`` then names the file's type and the dtype it runs in).
``loglikelihood`` scores ``[document start] + context + text`` (:func:`~creval.models.document.document_start`) in
rolling windows.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

from creval.core.errors import CrevalError
from creval.models import heavy
from creval.models.base import BackendBase
from creval.models.device import torch_device
from creval.models.document import document_start, rolling_windows, scored_tokens
from creval.models.gather import UNLOCKED, Gatherer, Switch
from creval.models.heavy import quiet_transformers
from creval.models.hf_cb import engine_for, generate_continuous
from creval.models.hf_decode import Counter, decode, score_rows
from creval.models.records import ChoiceScores, Completion, LogLikelihood, Sample
from creval.models.replies import split_thinking
from creval.models.requests import ChatRequest, ChoiceRequest, LoglikelihoodRequest, SampleRequest, derive_seed
from creval.models.spec import ModelSpec
from creval.models.weights import check_local, locate_weights, package_missing

MAX_ROWS = 256
"""Rows (sequences) one gathered batch decodes or scores at most."""
GATHER_ENV = "CREVAL_HF_GATHER"
"""``0``: no units in flight together (each batch holds one request's rows), to compare with gathering."""


def hub_cache_state(model_id: str) -> str:
    """Whether a Hub model's config is already in the local Hugging Face cache (no network used)."""
    if Path(model_id).expanduser().is_dir():
        return "local folder"
    try:
        from huggingface_hub import try_to_load_from_cache
        found = try_to_load_from_cache(model_id, "config.json")
    except Exception:                               # noqa: BLE001 - a malformed id is simply not cached
        found = None
    return "in the local HF cache" if isinstance(found, str) else \
        "not in the local HF cache: downloads on first use, needs internet (and a login if gated); not checked"


def check_hf(spec: ModelSpec) -> tuple[bool, str]:
    """A transformers spec is usable when transformers is installed and its weights are here, or it names a Hub
    id (downloaded on first use; whether it is cached already is said, nothing is fetched)."""
    if spec.source:
        return check_local(spec)
    missing = package_missing(spec)
    if missing:
        return False, missing
    return True, f"Hugging Face Hub id {spec.model} ({hub_cache_state(spec.model)})"


class HFBackend(BackendBase):
    check = staticmethod(check_hf)   # is a spec of this backend usable here (nothing loaded)
    LOGPROB_KIND = "raw"
    CALL_LOCK = UNLOCKED     # Model hands cached_batch no lock: the gatherer takes the local-compute lock itself
    GATHERS = Switch(GATHER_ENV)   # many units in flight help (creval.models.width.width), unless switched off
    engine = "padded"        # what generates: "continuous" (transformers' engine, CUDA) or "padded" (hf_decode)

    def __init__(self, spec: ModelSpec):
        torch, transformers = heavy.torch(), heavy.transformers()
        self.spec, self.torch, self.transformers = spec, torch, transformers
        if spec.threads:
            torch.set_num_threads(spec.threads)
        self.device = torch_device()                    # the GPU when torch sees one; CREVAL_DEVICE overrides
        kw: dict = {}
        if spec.source:
            path = locate_weights(spec)
            if path.suffix == ".gguf":
                where, kw["gguf_file"] = str(path.parent), path.name
            else:
                where = str(path)
        else:
            where = spec.model
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        quiet_transformers()
        try:
            self.tok = transformers.AutoTokenizer.from_pretrained(where, **kw)
            self.lm = transformers.AutoModelForCausalLM.from_pretrained(where, dtype=dtype, **kw).to(self.device).eval()
        except OSError as e:
            raise CrevalError(f"model {spec.name}: could not load {where!r} with transformers "
                              f"({str(e).splitlines()[0]})", spec.install or "check the Hub id, your login "
                              "(`huggingface-cli login`) and internet access") from None
        if self.tok.pad_token_id is None:
            self.tok.pad_token = self.tok.eos_token
        eos = self.lm.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos = {e for e in [*eos, self.tok.eos_token_id] if e is not None}
        self.version = getattr(self.lm.config, "_name_or_path", where)
        self.quantisation = str(dtype).replace("torch.", "")
        if kw.get("gguf_file"):
            self.quantisation = f"{Path(kw['gguf_file']).stem.split('.')[-1]} dequantised to {self.quantisation}"
        vocab = self.tok.get_vocab()
        start = spec.document_start or document_start(self.tok.bos_token, self.tok.eos_token, lambda t: t in vocab,
                                                      spec.name)
        self.begin = int(vocab[start]) if start in vocab else int(self.tok.convert_tokens_to_ids(start))
        limit = getattr(self.lm.config, "max_position_embeddings", None) or spec.context
        self.window = min(spec.context, int(limit))     # tokens per forward pass of ``loglikelihood``
        self.calls = Counter()                            # forward passes run (for tests and the benchmark)
        self.engine = engine_for(self.lm, self.device)    # continuous batching on CUDA (CREVAL_HF_ENGINE)
        self.gather = Gatherer(self._run, limit=MAX_ROWS)
        self.tok_lock = threading.Lock()

    def render(self, messages: Sequence[dict]) -> str:
        return self.tok.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)

    def tokens(self, text: str) -> list[int]:
        """The token ids of ``text`` (one thread at a time: a fast tokenizer is not safe across threads)."""
        with self.tok_lock:
            return self.tok(text, add_special_tokens=False).input_ids

    def count_tokens(self, text: str) -> int:
        return len(self.tokens(text))

    def _ids(self, messages) -> list[int]:
        return self.tokens(self.render(messages))

    def _to_sample(self, toks: list[int], lps: list[float], stop: Sequence[str]) -> Sample:
        kept_t, kept_l, reason = [], [], "length"
        for t, lp in zip(toks, lps):
            kept_l.append(lp)
            if t in self.eos:
                reason = "stop"
                break
            kept_t.append(t)
            if stop and any(x in self.tok.decode(kept_t, skip_special_tokens=True) for x in stop):
                reason = "stop"
                break
        text = self.tok.decode(kept_t, skip_special_tokens=True)
        for x in stop:
            if x in text:
                text = text[:text.index(x)]
        return Sample(text, tuple(kept_l), reason)

    # -- the verbs: each request joins the gatherer's queue; ``_run`` computes a gathered batch ---------------
    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        """Sample ``i`` is drawn with seed ``derive_seed(req.seed, i)`` (its own stream, whatever the batch)."""
        group = ("sample", req.temperature, req.top_p, req.max_tokens)
        return self.gather(group, [(req, i) for i in indices])

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        out = []
        for (temperature, max_tokens), idx in _by(reqs, lambda r: (r.temperature, r.max_tokens)).items():
            got = self.gather(("chat", temperature, 1.0, max_tokens), [reqs[i] for i in idx])
            out += list(zip(idx, got))
        return [c for _, c in sorted(out, key=lambda x: x[0])]

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        """Exact log-prob of each choice's tokens after the prompt (all choices of all gathered requests scored
        in shared forward passes)."""
        return self.gather(("choice",), list(reqs))

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        return self.gather(("loglikelihood",), list(reqs))

    def _run(self, group: tuple, items: list) -> list:
        verb = group[0]
        if verb == "sample":
            return self._samples(group, items)
        if verb == "chat":
            return self._chats(group, items)
        if verb == "choice":
            return self._choices(items)
        return self._loglikelihoods(items)

    def _decode(self, prompts: list[list[int]], seeds: list[int], temperature: float, top_p: float,
                max_tokens: int):
        if self.engine == "continuous":
            return generate_continuous(self.lm, self.torch, self.transformers, prompts, seeds,
                                       temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                       eos=sorted(self.eos), pad=self.tok.pad_token_id, device=self.device,
                                       counter=self.calls)
        return decode(self.lm, self.torch, prompts, seeds, temperature=temperature, top_p=top_p,
                      max_tokens=max_tokens, eos=sorted(self.eos), pad=self.tok.pad_token_id, device=self.device,
                      counter=self.calls)

    def _samples(self, group: tuple, items: list[tuple[SampleRequest, int]]) -> list[Sample]:
        _, temperature, top_p, max_tokens = group
        prompts: dict[int, list[int]] = {}              # the n rows of a request share its prompt's tokens
        for req, _ in items:
            if id(req) not in prompts:
                prompts[id(req)] = self._ids(req.messages)
        rows = [prompts[id(req)] for req, _ in items]
        toks, lps = self._decode(rows, [derive_seed(req.seed, i) for req, i in items], temperature, top_p, max_tokens)
        return [self._to_sample(t, lp, req.stop) for (req, _), t, lp in zip(items, toks, lps)]

    def _chats(self, group: tuple, reqs: list[ChatRequest]) -> list[Completion]:
        _, temperature, top_p, max_tokens = group
        rows = [self._ids(r.messages) for r in reqs]
        toks, lps = self._decode(rows, [derive_seed(r.seed, 0) for r in reqs], temperature, top_p, max_tokens)
        out = []
        for ids, t, lp in zip(rows, toks, lps):
            s = self._to_sample(t, lp, ())
            text, reasoning = split_thinking(s.text) if self.spec.thinking else (s.text.strip(), "")
            rt = self.count_tokens(reasoning) if reasoning else 0
            out.append(Completion(text, len(ids), s.n_tokens - rt, reasoning, rt, s.finish_reason))
        return out

    def _choices(self, reqs: list[ChoiceRequest]) -> list[ChoiceScores]:
        prompts = [self._ids(r.messages) for r in reqs]
        rows, spans = [], []
        for p, r in zip(prompts, reqs):
            for c in r.choices:
                seq = p + self.tokens(c)
                rows.append(seq)
                spans.append((len(p), len(seq)))
        lps = score_rows(self.lm, self.torch, rows, spans, pad=self.tok.pad_token_id, device=self.device,
                         counter=self.calls)
        out, at = [], 0
        for p, r in zip(prompts, reqs):
            out.append(ChoiceScores({c: float(sum(lps[at + k])) for k, c in enumerate(r.choices)}, len(p)))
            at += len(r.choices)
        return out

    def _loglikelihoods(self, reqs: list[LoglikelihoodRequest]) -> list[LogLikelihood]:
        rows, spans, plan = [], [], []
        for r in reqs:
            prefix, text = scored_tokens(self.tokens, self.begin, r.text, r.context)
            seq = prefix + text
            wins = rolling_windows(len(prefix), len(seq), self.window) if text else []
            for lo, start, hi in wins:
                rows.append(seq[lo:hi])
                spans.append((start - lo, hi - lo))
            plan.append((r, prefix, len(wins)))
        lps = score_rows(self.lm, self.torch, rows, spans, pad=self.tok.pad_token_id, device=self.device,
                         counter=self.calls)
        out, at = [], 0
        for r, prefix, n in plan:
            got = [x for w in lps[at:at + n] for x in w]
            at += n
            out.append(LogLikelihood(float(sum(got)), tuple(got), len(r.text.encode()), len(prefix) - 1,
                                     max(n, 1), 0, self.spec.name, self.quantisation, self.LOGPROB_KIND))
        return out


def _by(items: Sequence, key) -> dict:
    """``{key(item): [indices]}`` in first-seen order."""
    out: dict = {}
    for i, it in enumerate(items):
        out.setdefault(key(it), []).append(i)
    return out
