"""llama.cpp gathering (models/llamacpp_gather.py): the round planning, and the decoding bookkeeping on a fake
llama.cpp whose logits are a function of each sequence's tokens, so a gathered batch must give exactly what one
request at a time gives (the real engine differs at most by float rounding, counted in docs/performance.md)."""
import threading
import time

import numpy as np
import pytest

from creval.core.errors import CrevalError
from creval.models import llamacpp
from creval.models.llamacpp_gather import Job, lcp, plan_prefill, take_round
from creval.models.llamacpp_load import N_SEQ
from creval.models.requests import ChatRequest, SampleRequest
from creval.models.spec import ModelSpec

VOCAB, EOG = 40, 0


def test_common_prefix_of_token_arrays():
    a = np.array([1, 2, 3, 4])
    assert lcp(a, np.array([1, 2, 9])) == 2
    assert lcp(a, np.array([1, 2, 3, 4, 5])) == 4
    assert lcp(a, np.array([7])) == 0 and lcp(a, np.array([], dtype=int)) == 0


def test_a_round_counts_each_distinct_prompt_once_and_every_budget():
    p, q = (1,) * 100, (2,) * 100
    jobs = [Job(p, 0, 1.0, 1.0, 10), Job(p, 1, 1.0, 1.0, 10), Job(q, 2, 1.0, 1.0, 10)]
    assert take_round(jobs, cells=231) == 3          # 100 + 10 + 10 (the shared prompt once) + 100 + 10 = 230
    assert take_round(jobs, cells=230) == 2          # the second prompt does not fit beside the first
    assert take_round(jobs, cells=131) == 2
    assert take_round(jobs, cells=50) == 1           # one job always runs (its budget fits the context alone)
    assert take_round(jobs, cells=10_000, max_seq=2) == 2


def test_each_prompt_takes_the_longest_prefix_held_or_prefilled_before_it():
    held = {5: [1, 2, 3, 4, 5, 6], 7: [1, 2, 9]}
    prompts = [(1, 2, 3, 4, 8), (1, 2, 3, 4, 8, 8, 8, 1), (3, 3), (1, 2, 3, 4, 5, 6, 7)]
    plan = plan_prefill(prompts, held)
    assert (plan[0].old, plan[0].ref, plan[0].length, plan[0].level) == (True, 5, 4, 0)
    assert (plan[1].old, plan[1].ref, plan[1].length, plan[1].level) == (False, 0, 5, 1)   # all of prompt 0
    assert plan[2] is None
    assert (plan[3].old, plan[3].ref, plan[3].length) == (True, 5, 6)    # never its last token: 6 of 7
    deeper = plan_prefill([(4, 4, 1), (4, 4, 1, 2), (4, 4, 1, 2, 3)], {})
    assert [s.level if s else 0 for s in deeper] == [0, 1, 2]


class FakeLc:
    """The part of llama_cpp the engine calls, on a per-sequence memory {seq: [tokens at positions 0..]}."""

    def __init__(self, mem: dict):
        self.mem = mem

    def llama_memory_seq_rm(self, mem, s, p0, p1):
        held = self.mem.get(s, [])
        assert p1 == -1, "the engine trims to the end"
        self.mem[s] = [] if p0 < 0 else held[:p0]
        return True

    def llama_memory_seq_cp(self, mem, src, dst, p0, p1):
        held = self.mem.get(src, [])
        hi = len(held) if p1 < 0 else p1
        assert len(held) >= hi, f"copying positions up to {hi} of a sequence holding {len(held)}"
        assert not self.mem.get(dst), "copied onto a sequence that still holds tokens"
        self.mem[dst] = list(held[:hi])

    def llama_memory_clear(self, mem, data):
        self.mem.clear()


def fake_logits(history: tuple) -> np.ndarray:
    """Logits that depend on the whole history (the end token a little favoured, so some replies stop early)."""
    rng = np.random.default_rng(abs(hash(history)) % (2 ** 32))
    x = rng.standard_normal(VOCAB).astype(np.float32) * 3
    x[EOG] += 0.5
    return x


def fake_backend(batched: bool, n_ctx: int = 4096, cells: int = 16384):
    b = llamacpp.LlamaCppBackend.__new__(llamacpp.LlamaCppBackend)
    mem: dict = {}
    b.spec, b.lc, b.mem, b.n_ctx, b.cells = ModelSpec(name="fake", backend="llamacpp"), FakeLc(mem), None, n_ctx, cells
    b.batched, b.kept, b.reused_tokens, b.lock = batched, {}, 0, threading.Lock()
    b.gather = b._gatherer()
    b.decodes, b.out = [], []

    def decode(entries, ctx=None, batch=None):
        b.decodes.append(len(entries))
        b.out = []
        for tok, pos, seqs, want in entries:
            for s in seqs:
                assert s < N_SEQ
                assert len(mem.setdefault(s, [])) == pos, f"sequence {s} holds {len(mem[s])} tokens, fed at {pos}"
                mem[s].append(tok)
            if want:
                b.out.append(fake_logits(tuple(mem[seqs[0]])))
            else:
                b.out.append(None)

    b._decode = decode
    b._logits = lambda i, ctx=None: b.out[i].copy()
    b.is_eog = lambda t: t == EOG
    b.detok = lambda toks: "".join(chr(97 + t % 26) for t in toks)
    b.render = lambda messages: "|".join(m["content"] for m in messages)
    b.tokenize = lambda text, special=True: [1 + (ord(c) % (VOCAB - 1)) for c in text]
    b.count_tokens = lambda text: len(text)
    return b


SYSTEM = {"role": "system", "content": "judge the use of an object from one to five carefully"}


def chats(k: int) -> list[ChatRequest]:
    return [ChatRequest((SYSTEM, {"role": "user", "content": f"use number {i}: prop a door"}), 0.0 if i % 2 else 0.8,
                        12 + i, seed=i) for i in range(k)]


def test_gathered_chats_and_samples_equal_one_request_at_a_time_with_far_fewer_decodes():
    serial, together = fake_backend(False), fake_backend(True)
    reqs = chats(6)
    want = [serial.chat([r])[0] for r in reqs]
    serial_decodes = len(serial.decodes)
    got = together.chat(reqs)
    assert got == want
    assert len(together.decodes) * 3 < serial_decodes
    sreq = SampleRequest(({"role": "user", "content": "name a use of a brick"},), 1.0, 0.9, 15, ("q",), seed=3)
    assert together.sample(sreq, [0, 4, 7]) == serial.sample(sreq, [0, 4, 7])
    assert any(s.finish_reason == "stop" for s in want) and any(s.finish_reason == "length" for s in want)


def test_the_next_turn_reuses_the_prompt_and_reply_its_sequence_still_holds():
    b = fake_backend(True)
    first = [(SYSTEM, {"role": "user", "content": f"round one of pair {i}"}) for i in range(3)]
    replies = b.chat([ChatRequest(m, 0.0, 8) for m in first])
    before, prompt_lens = b.reused_tokens, [len(b.tokenize(b.render(m))) for m in first]
    nxt = [m + ({"role": "assistant", "content": r.text}, {"role": "user", "content": "and now?"})
           for m, r in zip(first, replies)]
    again = b.chat([ChatRequest(m, 0.0, 8) for m in nxt])
    assert b.reused_tokens - before >= sum(prompt_lens)   # each new prompt shares at least its old prompt
    assert again == fake_backend(False).chat([ChatRequest(m, 0.0, 8) for m in nxt])


def test_rounds_split_a_batch_that_would_overflow_the_cache_and_give_the_same_replies():
    small, roomy = fake_backend(True, cells=160), fake_backend(True)
    reqs = chats(5)
    assert small.chat(reqs) == roomy.chat(reqs)
    assert max(len(s) for s in small.lc.mem.values()) < 160


def test_units_in_flight_are_gathered_into_shared_decodes():
    serial, together = fake_backend(False), fake_backend(True)
    reqs = chats(8)
    want = [serial.chat([r])[0] for r in reqs]
    got: dict = {}
    start = threading.Barrier(len(reqs))

    def unit(k):
        start.wait()
        got[k] = together.chat([reqs[k]])[0]

    threads = [threading.Thread(target=unit, args=(k,)) for k in range(len(reqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(len(reqs))] == want
    assert together.gather.tally.batches < len(reqs)            # some units shared a batch
    assert sum(together.gather.tally.requests) == len(reqs)


def test_a_prompt_longer_than_the_context_is_a_clear_error_in_both_modes():
    for batched in (True, False):
        b = fake_backend(batched, n_ctx=20)
        with pytest.raises(CrevalError, match="does not fit"):
            b.chat([ChatRequest(({"role": "user", "content": "x" * 40},), 0.0, 4)])


def test_the_switch_is_read_on_the_class_without_loading_anything(monkeypatch):
    from creval.models import width as units
    monkeypatch.setattr(units, "torch_device", lambda: "cpu")
    monkeypatch.delenv(llamacpp.GATHER_ENV, raising=False)         # unset: off, one unit at a time (the default)
    assert llamacpp.LlamaCppBackend.GATHERS is False and units.width("smollm2-135m") == 1
    monkeypatch.setenv(llamacpp.GATHER_ENV, "1")
    assert llamacpp.LlamaCppBackend.GATHERS is True and units.width("smollm2-135m") == units.local_width("cpu")
    monkeypatch.setenv(llamacpp.GATHER_ENV, "0")
    assert llamacpp.LlamaCppBackend.GATHERS is False and units.width("smollm2-135m") == 1


def test_a_gathering_backend_is_handed_no_lock_so_its_callers_queue_together(monkeypatch):
    # the model wrapper reads CALL_LOCK on the class, before loading: were it None, cached_batch would hold the
    # local-compute lock around each call and the gatherer would run every caller alone (nothing gathered)
    from creval.models.gather import UNLOCKED
    from creval.models.registry import LazyBackend
    spec = ModelSpec(name="fake", backend="llamacpp")
    monkeypatch.setenv(llamacpp.GATHER_ENV, "1")
    assert llamacpp.LlamaCppBackend.CALL_LOCK is UNLOCKED and LazyBackend(spec).CALL_LOCK is UNLOCKED
    monkeypatch.setenv(llamacpp.GATHER_ENV, "0")
    assert llamacpp.LlamaCppBackend.CALL_LOCK is None and LazyBackend(spec).CALL_LOCK is None


def test_a_turn_that_comes_a_round_later_still_finds_its_sequence_unless_room_ran_out():
    def turn(b, text, reply=None):
        msgs = (SYSTEM, {"role": "user", "content": text})
        if reply is not None:
            msgs += ({"role": "assistant", "content": reply}, {"role": "user", "content": "go on"})
        return ChatRequest(msgs, 0.0, 6)

    roomy, tight = fake_backend(True), fake_backend(True, cells=200)
    for b in (roomy, tight):
        first = b.chat([turn(b, "pair A"), turn(b, "pair B")])
        other = ({"role": "user", "content": "Another unit's question, a long one. " * 3},)
        b.chat([ChatRequest(other, 0.0, 6)])                                   # a round in between
        before = b.reused_tokens
        b.chat([turn(b, "pair A", first[0].text)])
        b.reuse = b.reused_tokens - before
    own = len(roomy.tokenize(roomy.render(turn(roomy, "pair A").messages)))
    assert roomy.reuse >= own                     # its whole earlier prompt (and what it fed of its reply)
    assert tight.reuse < own                      # evicted for room: only the system prompt's share is left
    assert max(len(s) for s in tight.lc.mem.values()) < 200


def test_a_job_waits_its_turn_only_while_others_run():
    p = (1,) * 100
    jobs = [Job(p, 0, 1.0, 1.0, 10), Job((2,) * 100, 1, 1.0, 1.0, 10)]
    assert take_round(jobs, cells=50, least=1) == 1          # alone, a job always starts
    assert take_round(jobs, cells=50, least=0) == 0          # beside running sequences it waits for room
    assert take_round(jobs, cells=10_000, max_seq=0, least=0) == 0
    assert take_round(jobs, cells=10_000, least=0) == 2


def test_a_stream_takes_requests_that_queue_while_it_runs_and_finishes_each_on_its_own():
    from creval.models.gather import Gatherer
    seen, lock = [], threading.RLock()
    late_queued = threading.Event()

    def stream(group, feed):
        first = feed.take(4)
        seen.append([items for _, items in first])
        late_queued.wait(5)                     # a request queues while the first ones are running
        for handle, items in first:
            feed.finish(handle, [x * 10 for x in items])
        while True:
            more = feed.take(4)
            if not more:
                return
            seen.append([items for _, items in more])
            for handle, items in more:
                feed.finish(handle, [x * 10 for x in items])

    g = Gatherer(lambda group, items: [x * 10 for x in items], lock=lock, stream=stream)
    got = {}

    def first():
        got["first"] = g(("generate",), [1, 2])

    t = threading.Thread(target=first)
    t.start()
    while not seen:
        time.sleep(0.001)

    def late():
        got["late"] = g(("generate",), [3])

    t2 = threading.Thread(target=late)
    t2.start()
    while not g._queue:
        time.sleep(0.001)
    late_queued.set()
    t.join()
    t2.join()
    assert got == {"first": [10, 20], "late": [30]}
    assert seen == [[[1, 2]], [[3]]]            # the late request joined the running stream
    assert g.tally.requests == [2] and g.tally.items == [3]


def test_a_failed_stream_runs_each_unfinished_request_alone_so_only_the_bad_one_fails():
    from creval.models.gather import Gatherer

    def stream(group, feed):
        for handle, items in feed.take(8):
            if items == [1]:
                feed.finish(handle, [100])      # finished before the failure: kept
        raise RuntimeError("engine failed")

    def run(group, items):
        if items == [2]:
            raise ValueError("bad request")
        return [x * 10 for x in items]

    g = Gatherer(run, lock=threading.RLock(), stream=stream)
    handles = [ticket(g, [1]), ticket(g, [2]), ticket(g, [3])]
    g._serve(handles)
    assert handles[0].outcome() == [100] and handles[2].outcome() == [30]
    with pytest.raises(ValueError, match="bad request"):
        handles[1].outcome()


def ticket(g, items):
    from creval.models.gather import _Ticket
    return _Ticket(("generate",), items)


def test_chains_of_turns_join_the_running_stream_and_equal_one_request_at_a_time():
    serial, together = fake_backend(False), fake_backend(True)

    def chain(b, k):
        msgs = (SYSTEM, {"role": "user", "content": f"unit {k}: a use of a shoe"})
        out = []
        for turn in range(3):
            r = b.chat([ChatRequest(msgs, 0.0 if k % 2 else 0.7, 4 + 3 * k + turn, seed=k)])[0]
            out.append(r)
            msgs += ({"role": "assistant", "content": r.text}, {"role": "user", "content": f"more {turn}"})
        return out

    want = [chain(serial, k) for k in range(6)]
    got: dict = {}
    start = threading.Barrier(6)

    def unit(k):
        start.wait()
        got[k] = chain(together, k)

    threads = [threading.Thread(target=unit, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(6)] == want
    assert sum(together.gather.tally.requests) == 18
    assert together.gather.tally.batches < 18
