"""The transformers backend's engines (models/hf_cb.py): transformers' continuous batching is chosen on CUDA only,
and its replies reach the records like the padded loop's (raw log-probs re-scored, the end token cut). The device
and the engine are injected: a fake model stands in for the GPU."""
import threading
from types import SimpleNamespace

import pytest

from creval.core.errors import CrevalError
from creval.models import hf_cb
from creval.models.requests import ChatRequest, SampleRequest
from creval.models.spec import ModelSpec

torch = pytest.importorskip("torch")
from creval.models import hf_decode  # noqa: E402

VOCAB, EOS = 23, 22


def test_continuous_batching_is_chosen_on_cuda_only_unless_forced():
    assert hf_cb.choose_engine("", "cuda", True) == "continuous"
    assert hf_cb.choose_engine("auto", "cuda:1", True) == "continuous"
    assert hf_cb.choose_engine("", "cpu", True) == "padded"
    assert hf_cb.choose_engine("", "cuda", False) == "padded"          # an older transformers
    assert hf_cb.choose_engine("padded", "cuda", True) == "padded"
    assert hf_cb.choose_engine("continuous", "cpu", True) == "continuous"   # forced, to measure it on a CPU
    with pytest.raises(CrevalError, match="no continuous batching"):
        hf_cb.choose_engine("continuous", "cuda", False)
    with pytest.raises(CrevalError, match="not an engine"):
        hf_cb.choose_engine("vllm", "cuda", True)


class FakeLM:
    """Logits from (sum of the real tokens so far, position), as in test_hf_batching; ``generate_batch`` decodes
    greedily (or samples from a fixed stream) with the same forward, one request at a time, like the engine."""

    def __init__(self):
        self.head = SimpleNamespace(weight=torch.zeros(VOCAB, 4))
        self.asked: list = []

    def get_output_embeddings(self):
        return self.head

    def __call__(self, input_ids, attention_mask, position_ids, cache=None, use_cache=False, logits_to_keep=0):
        width = input_ids.shape[1]
        real = attention_mask[:, -width:]
        start = cache if cache is not None else torch.zeros(input_ids.shape[0])
        sums = start[:, None] + (input_ids * real).cumsum(-1).float()
        v = torch.arange(VOCAB).float()
        logits = torch.cos((sums[..., None] * 0.37 + position_ids[..., None].float() * 1.3) * (v + 1) * 0.21) * 4
        keep = logits_to_keep or width
        return SimpleNamespace(logits=logits[:, -keep:], cache=sums[:, -1])

    forward = __call__

    def generate_batch(self, inputs, generation_config, progress_bar=True, continuous_batching_config=None):
        self.asked.append((generation_config, continuous_batching_config, len(inputs)))
        out = {}
        for i, prompt in enumerate(inputs):
            row, gen = list(prompt), []
            for _ in range(generation_config.max_new_tokens):
                ids = torch.tensor([row])
                logits = self(ids, torch.ones_like(ids), torch.arange(len(row))[None]).logits[0, -1]
                t = int(logits.argmax()) if not generation_config.do_sample else int(torch.randint(1, VOCAB, ()))
                gen.append(t)
                row.append(t)
                if t in generation_config.eos_token_id:
                    break
            out[f"req_{i}"] = SimpleNamespace(generated_tokens=gen, error=None)
        return out


class FakeTransformers:
    class GenerationConfig(SimpleNamespace):
        pass

    class ContinuousBatchingConfig:
        def __init__(self, use_cuda_graph=False):
            self.use_cuda_graph = use_cuda_graph


class FakeTokenizer:
    pad_token_id = 0

    def __call__(self, text, add_special_tokens=False):
        return SimpleNamespace(input_ids=[ord(c) % 21 + 1 for c in text])

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=False):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(96 + i) for i in ids if 0 < i < 22)


def backend(device: str, monkeypatch, engine: str = ""):
    """The real backend's code around the fake model, its engine chosen for ``device`` (the tensors stay on the
    CPU: only the choice is injected)."""
    from creval.models.gather import Gatherer
    from creval.models.hf import MAX_ROWS, HFBackend
    monkeypatch.setenv(hf_cb.ENGINE_ENV, engine)
    b = HFBackend.__new__(HFBackend)
    b.spec = ModelSpec(name="fake-hf", backend="hf", model="fake")
    b.torch, b.transformers, b.device, b.tok, b.lm = torch, FakeTransformers, "cpu", FakeTokenizer(), FakeLM()
    b.eos, b.begin, b.window, b.quantisation = {EOS}, 21, 64, "float32"
    b.calls, b.tok_lock = hf_decode.Counter(), threading.Lock()
    b.gather = Gatherer(b._run, limit=MAX_ROWS)
    b.engine = hf_cb.engine_for(b.lm, device)
    return b


MSGS = [[{"role": "user", "content": f"name a use of thing {k}" + "xyz"[k % 3] * k}] for k in range(4)]


def test_on_cuda_chat_goes_through_the_engine_and_gives_the_padded_loops_greedy_records(monkeypatch):
    gpu, cpu = backend("cuda", monkeypatch), backend("cpu", monkeypatch)
    assert (gpu.engine, cpu.engine) == ("continuous", "padded")
    reqs = [ChatRequest(tuple(m), 0.0, 9) for m in MSGS]
    got, want = gpu.chat(reqs), cpu.chat(reqs)
    assert [c.text for c in got] == [c.text for c in want] and any(c.text for c in got)
    assert [c.output_tokens for c in got] == [c.output_tokens for c in want]
    assert [c.finish_reason for c in got] == [c.finish_reason for c in want]
    cfg, cb, n = gpu.lm.asked[0]
    assert (cfg.do_sample, cfg.max_new_tokens, cfg.eos_token_id, n) == (False, 9, [EOS], 4) and cb.use_cuda_graph
    assert cpu.lm.asked == []                                            # the CPU never called the engine


def test_the_engines_tokens_are_scored_raw_and_cut_at_the_end_token(monkeypatch):
    gpu, cpu = backend("cuda", monkeypatch), backend("cpu", monkeypatch)
    req = SampleRequest((MSGS[1][0],), 0.0, 1.0, 7, (), seed=4)
    got, want = gpu.sample(req, [0, 1]), cpu.sample(req, [0, 1])
    for g, w in zip(got, want):
        assert g.text == w.text and g.finish_reason == w.finish_reason
        assert g.token_logprobs == pytest.approx(w.token_logprobs, abs=1e-5)
    sampled = gpu.sample(SampleRequest((MSGS[2][0],), 1.0, 0.9, 6, (), seed=1), [0])
    assert gpu.lm.asked[-1][0].do_sample and gpu.lm.asked[-1][0].temperature == 1.0
    assert gpu.lm.asked[-1][0].top_p == 0.9 and len(sampled[0].token_logprobs) >= 1
    assert all(lp <= 0 for lp in sampled[0].token_logprobs)


def test_forcing_the_padded_engine_on_cuda_keeps_the_engine_out(monkeypatch):
    b = backend("cuda", monkeypatch, engine="padded")
    b.chat([ChatRequest(tuple(MSGS[0]), 0.0, 5)])
    assert b.engine == "padded" and b.lm.asked == []


def test_a_missing_reply_from_the_engine_is_an_error_not_an_empty_record(monkeypatch):
    b = backend("cuda", monkeypatch)
    b.lm.generate_batch = lambda inputs, **kw: {}
    with pytest.raises(CrevalError, match="no reply"):
        b.chat([ChatRequest(tuple(MSGS[0]), 0.0, 5)])
