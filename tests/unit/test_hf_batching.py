"""Requests gathered across units (models/gather.py) and the transformers backend's batched decode and scoring
(models/hf_decode.py), on a tiny fake causal LM whose logits depend only on a row's real tokens."""
import threading
import time
from types import SimpleNamespace

import pytest

from creval.models.gather import Gatherer

torch = pytest.importorskip("torch")
from creval.models import hf_decode  # noqa: E402

VOCAB = 23


class FakeLM:
    """Logits of a position: a fixed function of (sum of the row's real tokens so far, real position). The KV
    "cache" is the running sum per row, so left padding and batching must not change anything."""

    def __init__(self):
        self.head = SimpleNamespace(weight=torch.zeros(VOCAB, 4))

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


def _decode(prompts, seeds, temperature=0.0, top_p=1.0, max_tokens=6, counter=None):
    return hf_decode.decode(FakeLM(), torch, prompts, seeds, temperature=temperature, top_p=top_p,
                            max_tokens=max_tokens, eos=[22], pad=0, device="cpu", counter=counter)


PROMPTS = [[5, 3, 9], [1], [7, 7, 2, 4, 11], [2, 6]]


@pytest.mark.parametrize("temperature,top_p", [(0.0, 1.0), (1.0, 1.0), (0.8, 0.7)])
def test_a_row_decodes_the_same_alone_and_in_a_left_padded_batch(temperature, top_p):
    seeds = [11, 12, 13, 14]
    together = _decode(PROMPTS, seeds, temperature, top_p)
    for i, p in enumerate(PROMPTS):
        alone = _decode([p], [seeds[i]], temperature, top_p)
        assert alone[0][0] == together[0][i]
        assert alone[1][0] == pytest.approx(together[1][i], abs=1e-5)


def test_one_forward_per_token_for_the_whole_batch_and_raw_log_probs():
    counter = hf_decode.Counter()
    toks, lps = _decode(PROMPTS, [1, 2, 3, 4], temperature=1.0, max_tokens=5, counter=counter)
    assert counter.forward == 5 and counter.rows == 20
    assert all(len(t) == 5 for t in toks) and all(lp <= 0 for row in lps for lp in row)
    # the first token's log-prob is the log-softmax of the prompt's last logits, at temperature 1
    lm = FakeLM()
    ids = torch.tensor([PROMPTS[0]])
    ref = lm(ids, torch.ones_like(ids), torch.arange(3)[None]).logits[0, -1].log_softmax(-1)
    assert lps[0][0] == pytest.approx(float(ref[toks[0][0]]), abs=1e-6)


def test_seeds_give_their_own_streams():
    a = _decode([[4, 4]] * 3, [7, 7, 8], temperature=1.5, max_tokens=8)[0]
    assert a[0] == a[1] and a[0] != a[2]
    u = hf_decode.uniforms(torch.tensor([1, 2, 1]), 3)
    assert float(u[0]) == float(u[2]) != float(u[1]) and bool(((u > 0) & (u < 1)).all())


def test_a_tiny_nucleus_is_the_argmax():
    logits = torch.tensor([[0.1, 3.0, 2.9, -1.0], [5.0, 0.0, 0.0, 4.99]])
    got = hf_decode.pick(torch, logits, torch.tensor([1, 2]), 0, temperature=1.0, top_p=1e-6)
    assert got.tolist() == [1, 0]


def test_scored_spans_match_one_row_at_a_time_and_need_few_forwards():
    rows = [[3, 1, 4, 1, 5], [9, 2, 6], [5, 3, 5, 8, 9, 7, 9], [2, 7]]
    spans = [(2, 5), (1, 3), (4, 7), (1, 2)]
    counter = hf_decode.Counter()
    got = hf_decode.score_rows(FakeLM(), torch, rows, spans, pad=0, device="cpu", counter=counter)
    assert counter.forward == 1
    lm = FakeLM()
    for r, (a, b), lps in zip(rows, spans, got):
        ids = torch.tensor([r])
        logp = lm(ids, torch.ones_like(ids), torch.arange(len(r))[None]).logits[0].log_softmax(-1)
        assert lps == pytest.approx([float(logp[j - 1, r[j]]) for j in range(a, b)], abs=1e-5)


def test_waiting_requests_are_gathered_while_the_model_is_busy():
    batches = []

    def run(group, items):
        batches.append((group, list(items)))
        time.sleep(0.05)
        return [x * 10 for x in items]
    g = Gatherer(run, lock=threading.RLock())
    out = {}

    def call(i):
        out[i] = g(("even" if i % 2 == 0 else "odd",), [i, i + 100])
    threads = [threading.Thread(target=call, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
        time.sleep(0.002)
    for t in threads:
        t.join()
    assert out == {i: [i * 10, (i + 100) * 10] for i in range(12)}
    assert len(batches) < 12 and all(len({x % 2 for x in items}) == 1 for _, items in batches)
    assert g.tally.batches == len(batches) and sum(g.tally.requests) == 12


def test_a_failing_request_fails_only_its_caller():
    def run(group, items):
        time.sleep(0.02)
        if "bad" in items:
            raise ValueError("bad item")
        return [x.upper() for x in items]
    g = Gatherer(run, lock=threading.RLock())
    out, errors = {}, {}

    def call(x):
        try:
            out[x] = g(("g",), [x])
        except ValueError as e:
            errors[x] = str(e)
    threads = [threading.Thread(target=call, args=(x,)) for x in ["a", "bad", "b", "c"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {"a": ["A"], "b": ["B"], "c": ["C"]} and errors == {"bad": "bad item"}


def test_a_batch_holds_at_most_limit_items():
    sizes = []
    g = Gatherer(lambda _, items: sizes.append(len(items)) or items, limit=3, lock=threading.RLock())
    lock = g.lock
    with lock:                                  # the model is busy: everything queues
        threads = [threading.Thread(target=g, args=(("g",), [i, i])) for i in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.1)
    for t in threads:
        t.join()
    assert max(sizes) <= 3 and sum(sizes) == 8


class FakeTokenizer:
    """Letters a-u as tokens 1-21; token 22 ends a reply."""
    pad_token_id = 0

    def __call__(self, text, add_special_tokens=False):
        return SimpleNamespace(input_ids=[ord(c) % 21 + 1 for c in text])

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=False):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(96 + i) for i in ids if 0 < i < 22)


def fake_hf_backend():
    """The real transformers backend's code around a fake model and tokenizer (no weights to load)."""
    from creval.models.hf import MAX_ROWS, HFBackend
    from creval.models.spec import ModelSpec

    class Slow(FakeLM):
        def __call__(self, *a, **kw):
            time.sleep(0.002)               # a forward takes time: requests queue meanwhile
            return super().__call__(*a, **kw)
    b = HFBackend.__new__(HFBackend)
    b.spec = ModelSpec(name="fake-hf", backend="hf", model="fake")
    b.torch, b.device, b.tok, b.lm = torch, "cpu", FakeTokenizer(), Slow()
    b.eos, b.begin, b.window, b.quantisation = {22}, 21, 64, "float32"
    b.calls, b.tok_lock = hf_decode.Counter(), threading.Lock()
    b.gather = Gatherer(b._run, limit=MAX_ROWS)
    return b


def _divergent_units(backend, width, tmp_path):
    """16 units, each a chain like a divergent problem's: n samples of a step, a greedy reply, a choice, a
    log-likelihood; run by the real unit runner ``width`` at a time, with an empty cache."""
    from creval.core.cache import CallCache
    from creval.core.units import Unit, run_units
    from creval.models.cached import Model
    model = Model(backend, CallCache(tmp_path / f"w{width}.sqlite"))

    def work(u):
        msgs = [{"role": "user", "content": f"problem {u.item} " + "xyz"[u.item % 3] * (u.item % 5)}]
        samples = model.sample(msgs, 4, temperature=0.8, top_p=0.9, max_tokens=8, seed=u.item)
        reply = model.chat(msgs + [{"role": "assistant", "content": samples[0].text}, {"role": "user",
                                                                                        "content": "go on"}],
                           max_tokens=8)
        choice = model.choice_logprobs(msgs, ["yes", "no", "maybe"])
        ll = model.loglikelihood(reply.text or "empty", f"problem {u.item}")
        return {"samples": [s.to_dict() for s in samples], "greedy": [reply.to_dict()],
                "choice": [choice.to_dict()], "loglikelihood": [ll.to_dict()]}
    before = backend.calls.forward
    rows = run_units(tmp_path / f"run{width}", "solve", [Unit(f"p{i}", i) for i in range(16)], work, width=width,
                     progress=False)
    return rows, backend.calls.forward - before


def test_sixteen_units_in_flight_need_a_quarter_of_the_forwards_and_give_the_same_records(tmp_path):
    backend = fake_hf_backend()
    serial, serial_calls = _divergent_units(backend, 1, tmp_path)
    batched, batched_calls = _divergent_units(backend, 16, tmp_path)
    assert batched_calls * 4 <= serial_calls, (batched_calls, serial_calls)
    assert backend.gather.tally.per_batch() > 1.5
    for table in ("greedy", "choice", "loglikelihood", "samples"):
        assert batched[table] == serial[table], table
    assert len({s["text"] for s in batched["samples"]}) > 8          # the samples are not all one text
