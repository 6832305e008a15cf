"""Hugging Face transformers backend: any causal LM by Hub id or local path (GPU if available).

The n samples of a prompt come from ONE ``generate`` call with ``num_return_sequences=n``.
Log-probs (``LOGPROB_KIND = "raw"``) are the log-softmax of ``output_logits`` (the unprocessed
logits), not of ``output_scores`` (which are after temperature and top-p). Sample ``i`` is not
individually seeded here: the batch is seeded from ``(seed, first index, count)``, and the cache
keeps every drawn sample stable afterwards. Offline, a GGUF file loads through ``gguf_file=``
(dequantised: ``quantisation`` then names the file's type and the dtype it runs in).
``loglikelihood`` scores ``[document start] + context + text`` (:func:`~creval.models.base.document_start`)
with one forward pass per rolling window.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from creval.core.errors import CrevalError
from creval.models import heavy
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
    document_start,
    quiet_transformers,
    rolling_windows,
    scored_tokens,
    split_thinking,
)
from creval.models.registry import locate_weights


class HFBackend:
    LOGPROB_KIND = "raw"

    def __init__(self, spec: ModelSpec):
        torch, transformers = heavy.torch(), heavy.transformers()
        self.spec, self.torch = spec, torch
        if spec.threads:
            torch.set_num_threads(spec.threads)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        kw: dict = {}
        if spec.source:
            path = locate_weights(spec)
            if path.suffix == ".gguf":
                where, kw["gguf_file"] = str(path.parent), path.name
            else:
                where = str(path)
        else:
            where = spec.model
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
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

    def render(self, messages: Sequence[dict]) -> str:
        return self.tok.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)

    def count_tokens(self, text: str) -> int:
        return len(self.tok(text, add_special_tokens=False).input_ids)

    def _encode(self, messages):
        return self.tok(self.render(messages), return_tensors="pt", add_special_tokens=False).input_ids.to(self.device)

    def _generate(self, ids, n: int, temperature: float, top_p: float, max_tokens: int, seed: int):
        torch = self.torch
        torch.manual_seed(seed)
        sampling = temperature > 0
        with torch.no_grad():
            out = self.lm.generate(ids, do_sample=sampling, temperature=temperature if sampling else None,
                                   top_p=top_p if sampling else None, top_k=0 if sampling else None,
                                   max_new_tokens=max_tokens, num_return_sequences=n, output_logits=True,
                                   return_dict_in_generate=True, pad_token_id=self.tok.pad_token_id)
        new = out.sequences[:, ids.shape[1]:]
        logp = torch.stack(out.logits, dim=1).float().log_softmax(-1)           # (n, steps, vocab), raw logits
        chosen = logp.gather(-1, new[:, :logp.shape[1], None]).squeeze(-1)
        return new.tolist(), chosen.tolist()

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

    def sample(self, req: SampleRequest, indices: Sequence[int]) -> list[Sample]:
        ids = self._encode(req.messages)
        seed = derive_seed(req.seed, indices[0]) ^ len(indices)
        toks, lps = self._generate(ids, len(indices), req.temperature, req.top_p, req.max_tokens, seed)
        return [self._to_sample(t, lp, req.stop) for t, lp in zip(toks, lps)]

    def chat(self, reqs: Sequence[ChatRequest]) -> list[Completion]:
        out = []
        for r in reqs:
            ids = self._encode(r.messages)
            toks, lps = self._generate(ids, 1, r.temperature, 1.0, r.max_tokens, derive_seed(r.seed, 0))
            s = self._to_sample(toks[0], lps[0], ())
            text, reasoning = split_thinking(s.text) if self.spec.thinking else (s.text.strip(), "")
            rt = self.count_tokens(reasoning) if reasoning else 0
            out.append(Completion(text, ids.shape[1], s.n_tokens - rt, reasoning, rt, s.finish_reason))
        return out

    def choice_logprobs(self, reqs: Sequence[ChoiceRequest]) -> list[ChoiceScores]:
        """Exact log-prob of each choice's tokens after the prompt: one padded forward per request."""
        torch, out = self.torch, []
        for r in reqs:
            prompt = self._encode(r.messages)[0].tolist()
            seqs = [prompt + self.tok(c, add_special_tokens=False).input_ids for c in r.choices]
            width = max(map(len, seqs))
            ids = torch.tensor([s + [self.tok.pad_token_id] * (width - len(s)) for s in seqs], device=self.device)
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], device=self.device)
            with torch.no_grad():
                logp = self.lm(input_ids=ids, attention_mask=mask).logits.float().log_softmax(-1)
            res = {c: float(sum(logp[i, j - 1, s[j]] for j in range(len(prompt), len(s))))
                   for i, (c, s) in enumerate(zip(r.choices, seqs))}
            out.append(ChoiceScores(res, len(prompt)))
        return out

    def loglikelihood(self, reqs: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        torch, out = self.torch, []
        tokenize = lambda t: self.tok(t, add_special_tokens=False).input_ids   # noqa: E731
        for r in reqs:
            prefix, text = scored_tokens(tokenize, self.begin, r.text, r.context)
            seq, lps = prefix + text, []
            wins = rolling_windows(len(prefix), len(seq), self.window) if text else []
            for lo, start, hi in wins:
                ids = torch.tensor([seq[lo:hi - 1]], device=self.device)
                with torch.no_grad():
                    logp = self.lm(input_ids=ids).logits[0].float().log_softmax(-1)
                tgt = torch.tensor(seq[start:hi], device=self.device)
                lps += logp[start - lo - 1:].gather(-1, tgt[:, None]).squeeze(-1).tolist()
            out.append(LogLikelihood(float(sum(lps)), tuple(lps), len(r.text.encode()), len(prefix) - 1,
                                     max(len(wins), 1), 0, self.spec.name, self.quantisation, self.LOGPROB_KIND))
        return out
